""":func:`compile`: a grammar for a vocabulary, cached by content."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Optional

from . import _core
from .grammar import Grammar
from .vocabulary import Vocabulary

CompiledGrammar = _core.CompiledGrammar
Matcher = _core.Matcher
Limits = _core.Limits

_CACHE_SIZE = 64
_cache: "OrderedDict[tuple, _core.CompiledGrammar]" = OrderedDict()
_cache_lock = threading.Lock()


def compile(  # noqa: A001 - the public name DESIGN.md fixes
    grammar: Grammar,
    vocab: Vocabulary,
    *,
    limits: Optional[Limits] = None,
    eager: bool = False,
    cache: bool = True,
) -> "_core.CompiledGrammar":
    """Compiles ``grammar`` for ``vocab``.

    The result is immutable and may be shared by any number of matchers and threads.
    With ``eager=False`` (default) each automaton state's mask is computed the first time a
    matcher reaches it; ``eager=True`` builds the whole state → tokens index now.
    Results are cached by (grammar content, vocabulary fingerprint, limits, eager);
    ``cache=False`` bypasses the cache.
    """
    if not isinstance(grammar, Grammar):
        raise TypeError(f"compile() expects a corral.Grammar, got {type(grammar).__name__}")
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"compile() expects a corral.Vocabulary, got {type(vocab).__name__}")
    key = (grammar._key(), vocab.fingerprint, limits, eager)
    if cache:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    compiled = _core.compile(grammar._inner, vocab._inner, limits, eager)
    if cache:
        with _cache_lock:
            _cache[key] = compiled
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return compiled


def clear_cache() -> None:
    """Forgets every cached compiled grammar."""
    with _cache_lock:
        _cache.clear()
