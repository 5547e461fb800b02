"""`Grammar.regex` means what Python's `re.fullmatch` means, for Python's whole syntax.

A differential test against `re` (the oracle) on patterns drawn from all of Python's
syntax: flags global and scoped, class edge cases, every quantifier form, groups of every
kind, escapes, anchors, and junk that `re` refuses. For each pattern:

* `re.compile` refuses it: corral raises `RegexSyntaxError` at `re`'s position;
* corral refuses a pattern `re` accepts: only with `UnsupportedFeatureError` for a
  construct a DFA over the whole output cannot express (or `EmptyLanguageError` when `re`
  matches none of the strings either);
* otherwise corral and `re.fullmatch` agree on strings drawn from the pattern itself and
  from characters that fold or classify unusually (`ſ`, the Kelvin sign, `İ`, `ı`, ...).

`CORRAL_REGEX_DIALECT_EXAMPLES=20000 pytest tests/test_regex_dialect.py` runs a longer search.
"""

from __future__ import annotations

import os
import random
import re
import sys
import warnings

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import corral

EXAMPLES = int(os.environ.get("CORRAL_REGEX_DIALECT_EXAMPLES", "800"))
VOCAB = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])

# Characters whose case or class differs between readings of a pattern.
TRICKY = [
    "\u017f",  # ſ: lower case of S under Unicode folding only
    "\u212a",  # Kelvin sign: lower case is k
    "\u0130",  # İ: lower case is i
    "\u0131",  # ı: shares its upper case with i
    "\x1c", "\x1d", "\x1e", "\x1f",  # Unicode whitespace, not ASCII whitespace
    "\x85", "\xa0", "\u2028",
    "\u00b5", "\u03bc", "\u00df", "\u1e9e", "\u03c2", "\u03c3", "\u03a3", "\u01c5",
    "\u0663",  # Arabic-Indic digit three
    "\u00e9", "\u00c9", "\U00010400", "\U00010428", "\U0001f600",
    "\n", " ", "\t", "_", "-", "]",
]
LITERALS = list("abcABCzZsSkKiI019_-]^[&~|#:{},. ") + TRICKY


def _python(pattern: str):
    """`re.compile(pattern)`, or the exception it raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # FutureWarning for `[[`, `--`, `&&` ...
        try:
            return re.compile(pattern), None
        except Exception as e:  # re.error, and OverflowError / ValueError for some
            return None, e


# Constructs corral refuses although `re` accepts them (a DFA over the whole output
# cannot express them, or corral has no table for them), by the words of the error.
UNSUPPORTED = (
    "backreference",
    "look-ahead",
    "look-behind",
    "conditional",
    "atomic",
    "possessive",
    "word-boundary",
    "start anchor",
    "end anchor",
    "named character escape",
)


def _unknowable(refusal) -> bool:
    r"""Is `re`'s refusal one corral cannot see? corral has no Unicode name table, so it
    cannot tell a bad `\N{name}` from a good one, nor a range with a named end that is
    reversed (it refuses every `\N{...}` once the rest of the pattern is valid)."""
    return refusal is not None and ("undefined character name" in str(refusal) or "\\N" in str(refusal))


def _check(pattern: str, strings) -> None:
    compiled_re, refusal = _python(pattern)
    try:
        compiled = corral.compile(corral.Grammar.regex(pattern), VOCAB)
    except corral.RegexSyntaxError as e:
        assert compiled_re is None, f"corral refuses {pattern!r}, which re accepts: {e}"
        if getattr(refusal, "pos", None) is not None and not _unknowable(refusal):
            assert e.position == refusal.pos, f"{pattern!r}: re says {refusal}, corral {e}"
        return
    except corral.UnsupportedFeatureError as e:
        # Only constructs a DFA cannot express (or `\N{name}`, which corral cannot read).
        assert any(w in e.construct for w in UNSUPPORTED), f"{pattern!r}: {e.construct}"
        # Syntax errors come first: a pattern re refuses is a syntax error (before 3.11,
        # re itself refused atomic groups and possessive repetitions).
        older = sys.version_info < (3, 11) and ("atomic" in e.construct or "possessive" in e.construct)
        assert compiled_re is not None or _unknowable(refusal) or older, f"re refuses {pattern!r}: {refusal}; corral: {e}"
        return
    except corral.EmptyLanguageError:
        assert compiled_re is not None, f"corral accepts {pattern!r}, which re refuses: {refusal}"
        for s in strings:
            assert compiled_re.fullmatch(s) is None, f"corral finds no string for {pattern!r}; re matches {s!r}"
        return
    assert compiled_re is not None, f"corral accepts {pattern!r}, which re refuses: {refusal}"
    for s in strings:
        want = compiled_re.fullmatch(s) is not None
        assert compiled.matches(s.encode()) == want, f"/{pattern}/ on {s!r}: re says {want}"


# --- Patterns from Python's whole syntax -------------------------------------------------
# A pattern is drawn as a small tree that renders to its text and can also draw strings
# that (mostly) match it; `re` decides what actually matches.


class Piece:
    """Pattern text and a way to draw a string it probably matches."""

    def __init__(self, text: str, sample=None):
        self.text = text
        self._sample = sample

    def sample(self, rng: random.Random) -> str:
        return self._sample(rng) if self._sample else ""


def _lit(c: str) -> Piece:
    text = "\\" + c if c in ".^$*+?{}[]()|\\" else c
    return Piece(text, lambda r: c if r.random() < 0.6 else r.choice([c.upper()[0], c.lower()[0], c]))


ESCAPES = {
    r"\d": "1\u0663", r"\D": "a-\u017f", r"\w": "a_1\u00e9\u212a", r"\W": "-\x1c ", r"\s": " \t\n\x1c\x85\u2028",
    r"\S": "a-\u00e9", r"\n": "\n", r"\t": "\t", r"\x41": "A", r"\u017f": "\u017fsS", r"\U0001F600": "\U0001f600",
    r"\0": "\0", r"\01": "\x01", r"\101": "Aa", r"\-": "-", r"\]": "]", r"\\": "\\", r"\.": ".", r"\ ": " ",
    r"\#": "#", r"\a": "\a", r"\f": "\f", r"\v": "\v", r"\}": "}", r"\&": "&",
}
BAD_OR_ZERO_WIDTH = [
    r"\b", r"\B", r"\A", r"\Z", r"\q", r"\p{L}", r"\P{L}", r"\e", r"\z", r"\8", r"\400", r"\12", r"\1", r"\x4",
    r"\u12", r"\U00110000", r"\N{DIGIT ONE}", r"\N{NOT A NAME}", r"\N", "\\",
]

CLASS_ATOMS = list("abzAZ09-]^[&~|#: .") + TRICKY[:12] + [
    r"\d", r"\w", r"\s", r"\W", r"\S", r"\D", r"\b", r"\n", r"\x41", r"\-", r"\]", r"\\", r"\0", r"\101", r"\u00e9",
    r"\U00010400", r"\8", r"\A", r"\p", r"\N{DIGIT ONE}",
]
CLASS_RUNS = ["--", "&&", "~~", "||", "[:alpha:]", "[", "a-z", "A-Z", "--A", "!--", "a-\\d", "z-a", "\\d-z", "0-9",
              "\u0100-\u017f", "\U00010400-\U00010430", "K-k", "A-\u212a"]


@st.composite
def char_class(draw) -> Piece:
    text = "[" + draw(st.sampled_from(["", "", "^"]))
    text += draw(st.sampled_from(["", "", "", "]", "-", "]-a", "^"]))
    for _ in range(draw(st.integers(0, 4))):
        text += draw(st.sampled_from(CLASS_ATOMS)) if draw(st.booleans()) else draw(st.sampled_from(CLASS_RUNS))
        if draw(st.integers(0, 4)) == 0:
            text += "-" + draw(st.sampled_from(CLASS_ATOMS))
    text += draw(st.sampled_from(["", "", "-", "\\"]))
    text += draw(st.sampled_from(["]"] * 12 + ["", "]]"]))
    members = [c for c in text if c not in "[]\\^"] + TRICKY
    return Piece(text, lambda r: r.choice(members))


QUANTIFIERS = [("*", 0, 3), ("+", 1, 3), ("?", 0, 1), ("{2}", 2, 2), ("{,2}", 0, 2), ("{1,}", 1, 3), ("{,}", 0, 3),
               ("{1,3}", 1, 3), ("{0}", 0, 0), ("{0,0}", 0, 0), ("{2,2}", 2, 2), ("{3,1}", 1, 1)]
LITERAL_BRACES = ["{}", "{ 1}", "{1,2", "{x}", "{", "{,", "{1, 2}"]


@st.composite
def quantified(draw, piece: Piece) -> Piece:
    if draw(st.integers(0, 5)) == 0:
        brace = draw(st.sampled_from(LITERAL_BRACES))
        return Piece(piece.text + brace, lambda r: piece.sample(r) + brace)
    q, lo, hi = draw(st.sampled_from(QUANTIFIERS))
    suffix = draw(st.sampled_from(["", "", "", "", "?", "+", "*", "??", "{1,3}", "?{1,3}"]))

    def sample(r):
        return "".join(piece.sample(r) for _ in range(r.randint(lo, hi)))

    return Piece(piece.text + q + suffix, sample)


FLAG_SETS = ["i", "a", "s", "x", "m", "u", "ai", "ix", "is", "sx", "-i", "-x", "i-s", "a-i", "u-i", "L", "t", "au", "z", "-"]


@st.composite
def group(draw, inner: Piece) -> Piece:
    kind = draw(st.integers(0, 13))
    text, sample = inner.text, inner.sample
    if kind <= 3:
        return Piece("(" + text + ")", sample)
    if kind <= 5:
        return Piece("(?:" + text + ")", sample)
    if kind <= 8:
        return Piece("(?" + draw(st.sampled_from(FLAG_SETS)) + ":" + text + ")", sample)
    if kind == 9:
        return Piece("(?P<" + draw(st.sampled_from(["n", "m", "1", "n-"])) + ">" + text + ")", sample)
    if kind == 10:
        return Piece("(?#" + draw(st.sampled_from(["", "c", " x ", "("])) + ")", None)
    other = draw(st.sampled_from(["(?=", "(?!", "(?<=", "(?<!", "(?>", "(?(1)", "(?(n)", "(?P=n)", "(?<x>", "(?P>"]))
    return Piece(other + ("" if other.endswith(")") else text + ")"), sample)


@st.composite
def atom(draw, depth: int) -> Piece:
    kind = draw(st.integers(0, 12))
    if kind <= 3:
        return _lit(draw(st.sampled_from(LITERALS)))
    if kind <= 5:
        e = draw(st.sampled_from(sorted(ESCAPES)))
        return Piece(e, lambda r: r.choice(ESCAPES[e]))
    if kind == 6:
        return Piece(draw(st.sampled_from(BAD_OR_ZERO_WIDTH)), lambda r: r.choice(["", "\n", "a"]))
    if kind <= 8:
        return draw(char_class())
    if kind == 9:
        return Piece(".", lambda r: r.choice(LITERALS + ["\n"]))
    if kind == 10:
        text = draw(st.sampled_from(["^", "$", " ", "#c\n", "{", "}", "]", ")", "(", "|"]))
        return Piece(text, lambda r: text if text in " {}]" else r.choice(["", "\n"]))
    if depth < 3:
        return draw(group(draw(alternation(depth + 1))))
    return _lit(draw(st.sampled_from(LITERALS)))


@st.composite
def sequence(draw, depth: int) -> Piece:
    pieces = []
    for _ in range(draw(st.integers(0, 4))):
        p = draw(atom(depth))
        if draw(st.integers(0, 3)) == 0:
            p = draw(quantified(p))
        pieces.append(p)
    return Piece("".join(p.text for p in pieces), lambda r: "".join(p.sample(r) for p in pieces))


@st.composite
def alternation(draw, depth: int = 0) -> Piece:
    branches = [draw(sequence(depth))]
    while draw(st.integers(0, 3)) == 0:
        branches.append(draw(sequence(depth)))
    return Piece("|".join(b.text for b in branches), lambda r: r.choice(branches).sample(r))


@st.composite
def patterns(draw) -> Piece:
    body = draw(alternation())
    prefix = draw(st.sampled_from([""] * 6 + ["(?i)", "(?a)", "(?x)", "(?s)", "(?m)", "(?ai)", "(?ix)", "(?u)", "(?t)",
                                              "(?L)", "(?i)(?a)", "(?a)(?u)", "(?#c)(?i)"]))
    suffix = draw(st.sampled_from([""] * 12 + ["(?i)", ")", "("]))
    return Piece(prefix + body.text + suffix, body.sample)


def _mutate(s: str, r: random.Random) -> str:
    roll = r.random()
    if roll < 0.15 and s:
        i = r.randrange(len(s))
        return s[:i] + s[i + 1:]
    if roll < 0.3:
        i = r.randint(0, len(s))
        return s[:i] + r.choice(TRICKY + ["a", "A", "\n"]) + s[i:]
    if roll < 0.4:
        return s.swapcase()
    return s


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(patterns(), st.randoms(use_true_random=False))
def test_regex_agrees_with_python_re(piece, rng):
    strings = {""}
    for _ in range(12):
        strings.add(_mutate(piece.sample(rng), rng))
    alphabet = [c for c in piece.text if c not in "\\()[]{}?*+|"] + TRICKY
    for _ in range(6):
        strings.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))))
    _check(piece.text, sorted(strings))


# --- The reported defects, each a regression test with re as the oracle ---------------------

MATCH_CASES = [
    # `{` forms: `{,}` repeats; what is not a repetition is a literal brace.
    ("a{,}", ["", "a", "aaaa", "a{,}"]),
    ("a{,2}", ["", "aa", "aaa", "a{,2}"]),
    ("a{1,}", ["", "a", "aaa"]),
    ("a{ 1}", ["a{ 1}", "a"]),
    ("a{", ["a{", "a"]),
    ("a{x}", ["a{x}", "a"]),
    ("a{1,2", ["a{1,2", "a"]),
    ("{}", ["{}", ""]),
    ("{}a", ["{}a"]),
    ("x{}", ["x{}", "x"]),
    # `]` first in a class is a literal and can start a range.
    ("[]-a]", ["]", "^", "_", "a", "b", "-"]),
    ("[^]-a]", ["]", "_", "b", "-"]),
    ("[]]", ["]", "]]"]),
    ("[]-]", ["]", "-", "^"]),
    ("[^]]", ["]", "a"]),
    ("[]a]", ["]", "a"]),
    # Scoped flags apply inside their group only.
    (r"(?a:x)|\S", ["\x1c", "x", "\u00e9", " "]),
    (r"(?a:\w)|\d", ["\u00e9", "\u0663", "a"]),
    (r"(?a:\d)\d", ["1\u0663", "\u06631"]),
    (r"(?i:a)a", ["aa", "Aa", "aA"]),
    (r"(?-i:a)b", ["ab", "aB"]),
    (r"(?i)a(?-i:b)", ["Ab", "AB"]),
    (r"(?s:.).", ["\n\n", "\na", "a\n"]),
    (r"(?x:a b)c d", ["abc d", "abcd"]),
    (r"(?m:a)b", ["ab"]),
    (r"(?u:\w)", ["\u00e9"]),
    (r"(?a)(?u:\w)\w", ["\u00e9a", "a\u00e9"]),
    (r"(?ai:k)k", ["Kk", "\u212ak"]),
    # Case folding: Python's, ASCII-only under (?a).
    ("(?ai)s", ["s", "S", "\u017f"]),
    ("(?ai)k", ["k", "K", "\u212a"]),
    ("(?i)s", ["s", "S", "\u017f"]),
    ("(?i)k", ["k", "K", "\u212a"]),
    ("(?i)i", ["i", "I", "\u0130", "\u0131"]),
    ("(?i)\u0131", ["i", "I", "\u0130", "\u0131"]),
    ("(?i)\u0130", ["i", "I", "\u0130", "\u0131"]),
    ("(?i)[a-z]", ["\u212a", "\u017f", "\u0130", "\u0131", "Q"]),
    ("(?i)[^a-z]", ["\u212a", "\u017f", "\u0130", "\u0131", "Q", "1"]),
    ("(?ai)[a-z]", ["\u212a", "\u017f", "Q"]),
    ("(?i)\u00b5", ["\u00b5", "\u03bc", "\u039c"]),
    ("(?i)\u00df", ["\u00df", "\u1e9e", "SS"]),
    ("(?i)\u03c3", ["\u03c3", "\u03c2", "\u03a3"]),
    ("(?i)[\U00010400x]", ["\U00010400", "\U00010428", "x", "X"]),
    ("(?i)\U00010400|x", ["\U00010400", "\U00010428"]),
    ("(?i)[\U00010400-\U00010401]", ["\U00010400", "\U00010428", "\U00010401"]),
    ("(?ai)[\U00010400-\U00010401]", ["\U00010400", "\U00010428"]),
    # `--` and other set-operation spellings are plain characters in a class.
    ("[--A]", ["5", "-", "A", "B", ","]),
    ("[^--A-Z]", ["5", "B", "a", "-"]),
    ("[!--]", ["!", "-", ",", "."]),
    ("[+--]", ["+", ",", "-", "a"]),
    ("[a&&b]", ["&", "a", "b", "c"]),
    ("[a~~b]", ["~", "a"]),
    ("[a||b]", ["|", "a"]),
    ("[[]", ["["]),
    ("[[:alpha:]]", ["a", "a]", ":]", "[]"]),
    ("[\\[-\\]]", ["[", "\\", "]"]),
    # Anchors and escapes.
    ("a$", ["a", "a\n"]),
    ("^a$", ["a", "a\n"]),
    (r"\Aa\Z", ["a", "a\n"]),
    ("(?m)^a$", ["a", "a\n"]),
    (r"\0", ["\0"]),
    (r"\012", ["\n"]),
    (r"\101", ["A"]),
    (r"[\101-\103]", ["A", "B", "D"]),
    (r"\x41\u0042\U00000043", ["ABC"]),
    (r"[\b]", ["\b"]),
    ("a(?#comment)b", ["ab"]),
    ("a(?#x)*", ["", "a", "aaa"]),
    # Verbose mode: Python's whitespace, `#` comments, literal inside classes.
    ("(?x)a b # comment\nc", ["abc", "a bc"]),
    ("(?x)[ #]", [" ", "#"]),
    ("(?x)a\\ b", ["a b", "ab"]),
    ("(?x)a\u00a0b", ["a\u00a0b", "ab"]),
    ("(?x)a *", ["", "aaa", "a "]),
    ("(?x)a{1, 2}", ["a{1,2}", "a"]),
    ("(?P<name>a)b", ["ab"]),
]


@pytest.mark.parametrize("pattern,strings", MATCH_CASES, ids=[p for p, _ in MATCH_CASES])
def test_reported_patterns_agree_with_re(pattern, strings):
    assert _python(pattern)[0] is not None
    _check(pattern, strings)


REFUSED = [
    "a???", "a+?{1,3}", "a{1,3}?{1,3}", "a**", "a*{1,3}", "a{2}{3}", "*a", "+", "{1}", "^*", "$+", r"\b?", r"\A*",
    "(?i)*", "a|*", "(*)", r"[--\d]", "[z-a]", r"[\d-z]", r"[a-\w]", "[a--]", r"\q", r"\e", r"\z", r"\p{L}", r"\P{L}",
    r"[\p{L}]", r"\8", r"[\8]", r"\400", r"[\400]", r"\12", r"\1", r"(a)\2", r"(a\1)", r"\x4", r"\u12",
    r"\U00110000", "\\", "a\\", "(a", "a)", ")", "[a", "[]", "[^]", "[]a", "(?", "(?z)", "(?P", "(?Px)", "(?<x>a)",
    "(?P<1>a)", "(?P<>a)", "(?P<a", "(?P<a>x)(?P<a>y)", "(?P=x)", "(?P<a>(?P=a))", "(?#", "(?i", "(?i-", "(?-:a)",
    "(?L)a", "(?au)a", "(?-a:a)", "(?-u:a)", "(?t:a)", "(?i-i:a)", "a|(?i)b", "((?i)a)", "a(?i)", "(?a)(?u)a",
    "(?t)a*", "(?<=a|bc)d", "(?<=a*)b", "(?(0)a)", "(?(2)a|b)", "(?(a)b)", "(?(1)a|b|c)", "a{2,1}", "a{99999999999}",
    r"\N", r"\Nx", r"\N{", r"\N{}", r"(?x)[a",
]


@pytest.mark.parametrize("pattern", REFUSED)
def test_what_re_refuses_is_a_syntax_error(pattern):
    compiled, refusal = _python(pattern)
    assert compiled is None, f"re accepts {pattern!r}"
    with pytest.raises(corral.RegexSyntaxError) as info:
        corral.Grammar.regex(pattern)
    if getattr(refusal, "pos", None) is not None:
        assert info.value.position == refusal.pos, f"re: {refusal}; corral: {info.value}"


UNSUPPORTED_CASES = [
    (r"(a)\1", "backreference"),
    (r"(?P<x>a)(?P=x)", "named backreference"),
    ("(a)(?(1)b|c)", "conditional"),
    ("(?>a)", "atomic"),
    ("a*+", "possessive"),
    ("a{1,2}+", "possessive"),
    ("(?<=a(?=b))c", "inside a look-behind"),
    (r"(?<!\b)c", "inside a look-behind"),
    (r"\N{DIGIT ONE}", "named character escape"),
]


@pytest.mark.parametrize("pattern,construct", UNSUPPORTED_CASES)
def test_constructs_a_dfa_cannot_express_are_named(pattern, construct):
    assert _python(pattern)[0] is not None
    with pytest.raises(corral.UnsupportedFeatureError) as info:
        corral.Grammar.regex(pattern)
    assert construct in info.value.construct


def test_p_escapes_are_refused_with_a_hint():
    for pattern in (r"\p{L}", r"\P{L}+", r"[\p{L}]", r"a\pL"):
        assert _python(pattern)[0] is None
        with pytest.raises(corral.RegexSyntaxError, match=r"no \\p"):
            corral.Grammar.regex(pattern)
    # Grammars read terminals the same way.
    with pytest.raises(corral.GrammarError):
        corral.compile(corral.Grammar.ebnf(r"start ::= /\p{L}+/"), VOCAB)


def _casefix_groups():
    """Lower-case characters that share their upper case with another (what `re` adds
    under IGNORECASE), computed from `str` methods."""
    groups = {}
    for cp in range(sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        if c.lower()[0] == c:
            groups.setdefault(c.upper(), []).append(c)
    return [g for g in groups.values() if len(g) > 1]


def test_ignorecase_folds_every_shared_upper_case_like_re():
    for group in _casefix_groups():
        candidates = set(group)
        for c in group:
            candidates.update({c.upper()[0], c.upper(), c.title()[0]})
        candidates = sorted(x for x in candidates if len(x) == 1)
        for c in group:
            for prefix in ("(?i)", "(?ai)"):
                _check(prefix + re.escape(c), candidates)
                _check(prefix + "[" + re.escape(c) + "x]", candidates)


SWEEPS = [r"(?i)[a-z]", r"(?i)[^a-z]", r"(?i)[\xc0-\xff]", r"(?i)[\u0370-\u03ff]", r"(?i)[\u0400-\u04ff]",
          r"(?i)[\u1e00-\u1fff]", r"(?i)[\u2100-\u218f]", r"(?ai)[a-z]", r"(?i)[\w\-]", r"(?i)\W", r"(?i)[^\W\d]",
          r"(?i)[\u0100-\u017f]x", r"(?i)k|s|i", r"(?i)[A-Z0-9_]", r"(?i)[\uab70-\uabbf]", r"(?i)[\U00010400-\U0001044f]"]


@pytest.mark.parametrize("pattern", SWEEPS)
def test_ignorecase_sets_agree_with_re_on_every_cased_character(pattern):
    # Every character that has a case (in the interpreter's Unicode), and their neighbours.
    chars = [chr(cp) for cp in range(0x3000) if not 0xD800 <= cp <= 0xDFFF]
    chars += [chr(cp) for cp in range(0xA640, 0xAC00)] + [chr(cp) for cp in range(0x10400, 0x10500)]
    if pattern.endswith("x"):
        chars = [c + "x" for c in chars]
    _check(pattern, chars)


# --- Grammar terminals read classes and regexes the same way --------------------------------

TERMINAL_CASES = [
    ("[--A]", ["5", "-", "A", "B"]),
    ("[^--A-Z]", ["5", "B", "a"]),
    ("[]-a]", ["]", "^", "b"]),
    ("[a&&b]", ["&", "c"]),
]


@pytest.mark.parametrize("cls,strings", TERMINAL_CASES)
def test_ebnf_classes_and_regex_terminals_agree_with_re(cls, strings):
    oracle = re.compile(cls)
    for text in (f"start ::= {cls}", f"start ::= /{cls}/", f"start ::= /{cls}+/"):
        compiled = corral.compile(corral.Grammar.ebnf(text), VOCAB)
        plus = text.endswith("+/")
        for s in strings + [s * 2 for s in strings]:
            want = (re.fullmatch(f"(?:{cls})+", s) if plus else oracle.fullmatch(s)) is not None
            assert compiled.matches(s.encode()) == want, f"{text!r} on {s!r}"


def test_lark_regex_terminals_agree_with_lark():
    import lark

    text = 'start: A B C\nA: /[--A]+/\nB: /(?i)ab/\nC: /[^]x]/\n'
    parser = lark.Lark(text, parser="earley", lexer="dynamic_complete")
    compiled = corral.compile(corral.Grammar.lark(text), VOCAB)
    for s in ["5-AabQ", "5AB]", "-aBx", "BabQ", ",,Abz", "5AbQ", "5aBé"]:
        try:
            parser.parse(s)
            want = True
        except lark.exceptions.LarkError:
            want = False
        assert compiled.matches(s.encode()) == want, s


def test_terminal_flags_stay_in_their_terminal():
    # `/(?i)ab/` joined after other text would put global flags mid-pattern: they are scoped.
    compiled = corral.compile(corral.Grammar.ebnf('start ::= "x" /(?i)ab/ "c"'), VOCAB)
    for s in ["xabc", "xABc", "xAbC", "XABc"]:
        assert compiled.matches(s.encode()) == (re.fullmatch("x(?i:ab)c", s) is not None), s


# Code points where a \d, \w or \s reading may differ between Unicode tables: recent
# additions (U+1C89 is a letter since Unicode 16) and a spread over every plane.
CLASS_PROBES = [chr(c) for c in (0x1C89, 0x1C8A, 0x0660, 0x1D7CE, 0x2028, 0x1680, 0x180E, 0x00B2, 0x2160, 0xFF10)] + [
    chr(c) for c in range(0x300, 0x30000, 997) if not 0xD800 <= c < 0xE000
]


@pytest.mark.parametrize("cls", [r"\w", r"\d", r"\s", r"\W", r"[\w-]"])
def test_structural_tag_regexes_read_classes_as_re(cls):
    """A structural tag's `regex` format means what `Grammar.regex` means (Python's `re`),
    not corral's own Unicode tables."""
    oracle = re.compile(cls)
    tag = {"type": "structural_tag", "format": {"type": "regex", "pattern": cls}}
    compiled = corral.compile(corral.Grammar.structural_tag(tag), VOCAB)
    direct = corral.compile(corral.Grammar.regex(cls), VOCAB)
    for ch in CLASS_PROBES:
        want = oracle.fullmatch(ch) is not None
        assert compiled.matches(ch.encode()) == want, f"{cls} on U+{ord(ch):04X}"
        assert direct.matches(ch.encode()) == want, f"{cls} on U+{ord(ch):04X}"
