""":func:`compile`: a grammar for a vocabulary, cached by content."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from .errors import DeadEndError, GrammarError, MatcherError
from .grammar import Grammar
from .masking import only_token
from .vocabulary import Vocabulary

if TYPE_CHECKING:
    from ._core import _Bitmask

CompiledGrammar = _core.CompiledGrammar
Matcher = _core.Matcher
Limits = _core.Limits

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
) -> _core.CompiledGrammar | CompiledIntersection:
    """Compiles ``grammar`` for ``vocab``.

    The result is immutable and may be shared by any number of matchers and threads.
    With ``eager=False`` (default) each automaton state's mask is computed the first time a
    matcher reaches it; ``eager=True`` builds the whole state → tokens index now.
    Results are cached by (grammar content, vocabulary fingerprint, limits, eager);
    ``cache=False`` bypasses the cache. The result pickles as this call (the grammar,
    vocabulary, limits and ``eager``) and is compiled again where it is loaded. A
    ``g1 & g2`` grammar gives a :class:`CompiledIntersection`.
    """
    if not isinstance(grammar, Grammar):
        raise _grammar_type_error("compile()", grammar)
    if not isinstance(vocab, Vocabulary):
        raise _vocabulary_type_error("compile()", vocab)
    if limits is not None and not isinstance(limits, Limits):
        raise TypeError(f"compile(): limits must be a corral.Limits or None, got {_describe_value(limits)}")
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


def _recompile(
    grammar: Grammar, vocab: Vocabulary, limits: Limits | None, eager: bool
) -> _core.CompiledGrammar | CompiledIntersection:
    """Loads a pickled compiled grammar: compiles it again (through this process's cache)."""
    return compile(grammar, vocab, limits=limits, eager=eager)


def clear_cache() -> None:
    """Forgets every cached compiled grammar."""
    with _cache_lock:
        _cache.clear()


class CompiledIntersection:
    """Several compiled grammars that must all hold (from ``g1 & g2``): the allowed set at
    each step is the intersection of the parts' allowed sets. Same interface as
    :class:`CompiledGrammar` where it makes sense."""

    def __init__(self, parts: list[_core.CompiledGrammar | CompiledIntersection], limits: Limits | None = None):
        self.parts = list(parts)
        self.limits = limits if limits is not None else Limits()

    def matcher(self) -> IntersectionMatcher:
        """A new matcher at the start of every part."""
        return IntersectionMatcher([p.matcher() for p in self.parts], self.vocab_size, self.limits.max_forced_tokens)

    def matches(self, data: bytes) -> bool:
        """Does every part accept the whole of ``data``?"""
        return all(p.matches(data) for p in self.parts)

    @property
    def vocab_size(self) -> int:
        """The vocabulary's logits width."""
        return self.parts[0].vocab_size

    def __repr__(self) -> str:
        return f"<corral.CompiledIntersection of {len(self.parts)} grammars>"


class IntersectionMatcher:
    """One sequence's position in every part of a :class:`CompiledIntersection`.

    Masks are the bitwise AND of the parts' masks (one extra fill and one numpy AND per
    part), so a token is allowed only where all parts allow it. That is the exact allowed
    set of the intersection at this step; unlike a single grammar, the intersection can
    reach a state where the parts' allowed sets are disjoint: :class:`DeadEndError`.
    """

    def __init__(self, parts: list[_core.Matcher | IntersectionMatcher], vocab_size: int, max_forced_tokens: int):
        self.parts = parts
        self._max_forced = max_forced_tokens
        self._words = (vocab_size + 31) // 32
        self._scratch = np.empty((1, self._words), dtype=np.int32)

    def fill_bitmask(self, bitmask: _Bitmask, row: int = 0) -> None:
        """Writes the allowed-token bitmask into ``bitmask[row]``."""
        self.parts[0].fill_bitmask(bitmask, row)
        view: Any = bitmask.numpy() if hasattr(bitmask, "numpy") and not isinstance(bitmask, np.ndarray) else bitmask
        target = view[row] if view.ndim == 2 else view
        for part in self.parts[1:]:
            part.fill_bitmask(self._scratch, 0)
            np.bitwise_and(target, self._scratch[0], out=target)
        if not target.any():
            raise DeadEndError(
                f"no token is allowed by all {len(self.parts)} combined grammars after "
                f"{self.num_tokens} tokens: their allowed sets do not meet here"
            )

    def advance(self, token: int) -> bool:
        """Consumes ``token`` in every part; False (nothing changed) if a part rejects it."""
        for i, part in enumerate(self.parts):
            if not part.advance(token):
                for done in self.parts[:i]:
                    done.rollback(1)
                return False
        return True

    def is_allowed(self, token: int) -> bool:
        """Would every part accept ``token`` now?"""
        return all(p.is_allowed(token) for p in self.parts)

    def rollback(self, n: int = 1) -> None:
        """Undoes the last ``n`` tokens in every part."""
        if n > self.num_tokens:
            raise MatcherError(f"cannot roll back {n} tokens: only {self.num_tokens} have been accepted")
        for part in self.parts:
            part.rollback(n)

    def reset(self) -> None:
        """Returns every part to its start."""
        for part in self.parts:
            part.reset()

    def is_accepting(self) -> bool:
        """May the output end here under every part?"""
        return all(p.is_accepting() for p in self.parts)

    def is_finished(self) -> bool:
        """Has EOS been accepted?"""
        return self.parts[0].is_finished()

    def forced_tokens(self) -> list[int]:
        """Tokens that are the only way forward under all parts (as ``Matcher.forced_tokens``)."""
        probe = self.copy()
        limit = self._max_forced
        mask = np.empty((1, self._words), dtype=np.int32)
        out: list[int] = []
        while not probe.is_finished() and len(out) < limit:
            probe.fill_bitmask(mask, 0)
            token = only_token(mask[0])
            if token is None or not probe.advance(token):
                break
            out.append(token)
        return out

    @property
    def num_tokens(self) -> int:
        """Number of tokens accepted so far (EOS included)."""
        return self.parts[0].num_tokens

    def copy(self) -> IntersectionMatcher:
        """An independent copy (same grammars, same history)."""
        return IntersectionMatcher([p.copy() for p in self.parts], self._words * 32, self._max_forced)

    __copy__ = copy

    def __repr__(self) -> str:
        return (
            f"<corral.IntersectionMatcher of {len(self.parts)} grammars tokens={self.num_tokens} "
            f"accepting={self.is_accepting()} finished={self.is_finished()}>"
        )
