"""NanoGPT-style patterns: a list of (class, quantifier) tuples, such as

    [("UPPER", "+"), (": ", "1"), ("LOWER", "+"), ("\\n", "1")]

compiled to a :class:`corral.Grammar` (a regex, so corral's automaton is the FSM), and, for
fixed-length patterns, static per-position masks computed before generation starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .errors import GrammarError

if TYPE_CHECKING:
    from .grammar import Grammar
    from .vocabulary import Vocabulary

#: The character classes of the seed, as regex classes. A class may also be a union,
#: ``"LOWER|SPACE"``. Anything else in a tuple is a literal string.
CHAR_CLASSES = {
    "UPPER": "A-Z",
    "LOWER": "a-z",
    "LETTER": "A-Za-z",
    "DIGIT": "0-9",
    "SPACE": " ",
    "NEWLINE": "\\n",
    "PUNCT": re.escape("!$&',-.:;?"),
    "ANY": "\\s\\S",
}

_QUANTIFIERS = {"1": "", "+": "+", "*": "*", "?": "?"}
_COUNTED = re.compile(r"\{(\d+)(?:,(\d*))?\}")

Element = tuple[str, str]


def _is_class(name: str) -> bool:
    return bool(name) and all(part in CHAR_CLASSES for part in name.split("|"))


def _atom(name: str) -> str:
    if _is_class(name):
        return "[" + "".join(CHAR_CLASSES[part] for part in name.split("|")) + "]"
    if not name:
        raise GrammarError("a pattern element is an empty string")
    return "(?:" + re.escape(name) + ")" if len(name) > 1 else re.escape(name)


def pattern_regex(elements: Iterable[Element]) -> str:
    """The regex of a pattern: each element is ``(class or literal, quantifier)`` with
    quantifier ``"1"``, ``"+"``, ``"*"``, ``"?"`` or ``"{m}"``/``"{m,n}"``/``"{m,}"``."""
    out = []
    for i, element in enumerate(elements):
        if not (isinstance(element, tuple) and len(element) == 2 and all(isinstance(x, str) for x in element)):
            raise GrammarError(f"pattern element {i} must be a (class or literal, quantifier) pair of str, got {element!r}")
        name, quantifier = element
        if quantifier in _QUANTIFIERS:
            suffix = _QUANTIFIERS[quantifier]
        elif _COUNTED.fullmatch(quantifier):
            suffix = quantifier
        else:
            raise GrammarError(
                f"pattern element {i} ({name!r}): unknown quantifier {quantifier!r} (use 1, +, *, ?, {{m}}, {{m,n}})"
            )
        out.append(_atom(name) + suffix)
    if not out:
        raise GrammarError("a pattern needs at least one element")
    return "".join(out)


def compile_pattern(elements: Iterable[Element]) -> Grammar:
    """The :class:`corral.Grammar` of a pattern (see :func:`pattern_regex`)."""
    from .grammar import Grammar

    return Grammar.regex(pattern_regex(list(elements)))


def static_masks(positions: Sequence[str | Element], vocab: Vocabulary) -> NDArray[np.int32]:
    """Level 1 of the seed: one fixed mask per generation step, decided before generation.

    ``positions[i]`` is what step ``i`` may produce: a class name (``"LOWER"``), a union
    (``"UPPER|DIGIT"``) or a literal character. Returns an int32 bitmask
    ``[len(positions), ceil(vocab.size / 32)]``: bit t of row i is set when token ``t`` is a
    single character that step i allows. Meant for a character-level vocabulary; with
    multi-character tokens, use :func:`compile_pattern`, whose masks follow the text.
    """
    words = (vocab.size + 31) // 32
    masks = np.zeros((len(positions), words), dtype=np.uint32)
    chars: list[tuple[int, str]] = []
    for t in range(vocab.n_tokens):
        if vocab.token_kind(t) != "normal":
            continue
        try:
            text = vocab.token_bytes(t).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if len(text) == 1:
            chars.append((t, text))
    for i, spec in enumerate(positions):
        name = spec[0] if isinstance(spec, tuple) else spec
        if not _is_class(name) and len(name) != 1:
            raise GrammarError(f"position {i}: {name!r} is neither a class nor one character")
        allowed = re.compile(_atom(name))
        for t, ch in chars:
            if allowed.fullmatch(ch):
                masks[i, t >> 5] |= np.uint32(1 << (t & 31))
        if not masks[i].any():
            raise GrammarError(f"position {i}: no token of the vocabulary is in {name!r}")
    return masks.view(np.int32)
