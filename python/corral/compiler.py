""":func:`compile`: a grammar for a vocabulary, cached by content."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from . import _core
from ._args import check_bool, check_limits
from .errors import GrammarError
from .grammar import Grammar
from .vocabulary import Vocabulary

CompiledGrammar = _core.CompiledGrammar
Matcher = _core.Matcher
Limits = _core.Limits
#: The compiled grammar of ``g1 & g2``: a :class:`CompiledGrammar` whose matchers allow a
#: token only where every part does (``.parts``: the parts; ``.limits``: its limits).
CompiledIntersection = _core.CompiledIntersection
#: The matcher of a :class:`CompiledIntersection`: a :class:`Matcher` whose mask is the AND
#: of its parts' masks (``.parts``: copies of the parts' matchers at its position).
IntersectionMatcher = _core.IntersectionMatcher

_CACHE_SIZE = 64
_cache: OrderedDict[tuple[Any, ...], _core.CompiledGrammar] = OrderedDict()
_cache_lock = threading.Lock()


def _describe_value(value: object, limit: int = 40) -> str:
    """``str 'a+'``: a value's type and (shortened) repr, for type errors."""
    if value is None:
        return "None"
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    shown = repr(value)
    if len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return f"{name} {shown}"


def _grammar_type_error(
    where: str, value: object, *, argument: str = "grammar", none_ok: bool = False, compiled_ok: bool = False
) -> TypeError:
    """The TypeError for ``value`` given where a :class:`corral.Grammar` is expected, with
    how to make one (a str is most likely a regex or a grammar's text)."""
    expected = "a corral.Grammar"
    if compiled_ok:
        expected += " or a compiled grammar"
    if none_ok:
        expected += " (or None)"
    if isinstance(value, str):
        how = (
            f"; make one with corral.Grammar.regex({value[:30]!r}) for a regex, or Grammar.ebnf / .gbnf / .lark / "
            ".json_schema / .choice"
        )
    else:
        how = "; make one with corral.Grammar.regex, .ebnf, .gbnf, .lark, .json_schema, .choice or .ban"
    return TypeError(f"{where}: {argument} must be {expected}, got {_describe_value(value)}{how}")


def _vocabulary_type_error(where: str, value: object, *, argument: str = "vocab") -> TypeError:
    """The TypeError for ``value`` given where a :class:`corral.Vocabulary` is expected."""
    return TypeError(
        f"{where}: {argument} must be a corral.Vocabulary, got {_describe_value(value)}; build one with "
        "corral.Vocabulary.from_huggingface(tokenizer), .from_tokenizer_file, .from_tiktoken, "
        ".from_sentencepiece or .from_token_bytes"
    )


def compile(  # noqa: A001 - `corral.compile` is the public name
    grammar: Grammar,
    vocab: Vocabulary,
    *,
    limits: Limits | None = None,
    eager: bool = False,
    cache: bool = True,
) -> _core.CompiledGrammar:
    """Compiles ``grammar`` for ``vocab``.

    The result is immutable and may be shared by any number of matchers and threads.
    With ``eager=False`` (default) each automaton state's mask is computed the first time a
    matcher reaches it; ``eager=True`` builds the whole state → tokens index now.
    Results are cached by (grammar content, vocabulary fingerprint, limits, eager);
    ``cache=False`` bypasses the cache. The result pickles as this call (the grammar,
    vocabulary, limits and ``eager``) and is compiled again where it is loaded. A
    ``g1 & g2`` grammar gives a :class:`CompiledIntersection` of its compiled parts, each
    compiled (and cached) under ``limits``; its matchers' forced runs and completions are
    held to ``limits`` too (the default :class:`Limits` when None).
    """
    if not isinstance(grammar, Grammar):
        raise _grammar_type_error("compile()", grammar)
    if not isinstance(vocab, Vocabulary):
        raise _vocabulary_type_error("compile()", vocab)
    check_limits(limits, "compile()")
    check_bool(eager, "eager", "compile()")
    check_bool(cache, "cache", "compile()")
    # Special tokens whose text is a marker of the grammar (a structural tag's `<tool_call>`)
    # are read as that text; one vocabulary for every part of an intersection.
    if grammar.marker_texts:
        vocab = vocab.with_special_text(grammar.marker_texts)
    if grammar._parts:
        return CompiledIntersection(
            [compile(p, vocab, limits=limits, eager=eager, cache=cache) for p in grammar._parts],
            limits if limits is not None else Limits(),
        )
    # A grammar built under its own limits is compiled under them, unless told otherwise.
    if limits is None:
        limits = grammar._limits
    if grammar._inner is None:
        raise GrammarError(
            f"{grammar!r} has no token mask: a mode='rollback' ban is enforced by corral.generate "
            "(use mode='mask' for a mask)"
        )
    key = (grammar._key(), vocab.fingerprint, limits, eager)
    if cache:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    # Pickled, the result is this call again (see _recompile).
    compiled = _core.compile(grammar._inner, vocab._inner, limits, eager, (_recompile, (grammar, vocab, limits, eager)))
    if cache:
        with _cache_lock:
            _cache[key] = compiled
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return compiled


def _recompile(grammar: Grammar, vocab: Vocabulary, limits: Limits | None, eager: bool) -> _core.CompiledGrammar:
    """Loads a pickled compiled grammar: compiles it again (through this process's cache)."""
    return compile(grammar, vocab, limits=limits, eager=eager)


def clear_cache() -> None:
    """Forgets every cached compiled grammar."""
    with _cache_lock:
        _cache.clear()
