"""Assertions in `Grammar.regex` (Python `re` syntax, `re.fullmatch` meaning): look-ahead,
look-behind, `\\b`, `\\B`, `\\A`, `\\Z`, and `^`/`$` anywhere, under the flags where they
stand. The oracle is Python's own `re`.

Patterns are written by hand (each construct, the flags that change them) and drawn from
a small grammar (seeded); each is tried on every string of up to four characters over a
small alphabet with a newline, and on longer random ones.
"""

from __future__ import annotations

import itertools
import random
import re
import sys

import pytest

import corral

HAND = [
    r"\w+\b.*",
    r".*\bcat\b.*",
    r"(?:(?!ab).)*",
    r"[a-z-]*(?<!-)",
    r"a(?=b)\w",
    r"(?:a|b(?<=ab))+",
    r"x$\n?",
    r"(?m)(?:^a$\n?)+",
    r"(?m)a\n^b",
    r"a\n^b",
    r"\Aa\Z",
    r"a\Z\n",
    r"(?a)\w\b.",
    r"é\b.",
    r"(?i)(?<=A)b.*",
    r"(?s).*(?<!\n)",
    r"\B.\B",
    r"(?:\b.)+",
    r"(?=.*\d)(?=.*[a-z]).{3,}",
    r"(?!$).*",
]

ATOMS = ["a", "b", "x", "[ab]", ".", r"\w", r"\W", r"\d", r"\n", "é"]


def _draw(rng: random.Random, depth: int) -> str:
    if depth == 0:
        return rng.choice(ATOMS)
    k = rng.randrange(11)
    if k < 3:
        return _draw(rng, depth - 1) + _draw(rng, depth - 1)
    if k == 3:
        return f"(?:{_draw(rng, depth - 1)}|{_draw(rng, depth - 1)})"
    if k == 4:
        return f"(?:{_draw(rng, depth - 1)}){rng.choice(['*', '+', '?'])}"
    if k == 5:
        return f"(?{rng.choice('=!')}{_draw(rng, depth - 1)})"
    if k == 6:
        # CPython's look-behinds have a fixed width.
        return f"(?<{rng.choice('=!')}{rng.choice(ATOMS)}{rng.choice(['', rng.choice(ATOMS)])})"
    return rng.choice(["^", "$", r"\b", r"\B", r"\A", r"\Z"])


def _patterns() -> list[str]:
    rng = random.Random(7)
    drawn = [rng.choice(["", "(?m)", "(?s)", "(?a)"]) + _draw(rng, rng.randint(2, 4)) for _ in range(300)]
    return list(dict.fromkeys(HAND + drawn))


def _strings() -> list[str]:
    rng = random.Random(11)
    out = ["".join(p) for n in range(5) for p in itertools.product("ab1 \n", repeat=n)]
    out += ["".join(rng.choice("abxcé1_ -\nA") for _ in range(rng.randint(5, 9))) for _ in range(150)]
    return out + ["cat", "a cat b", "concat", "x\n", "abc1"]


STRINGS = _strings()


def _oracle(p: re.Pattern[str], s: str) -> bool | None:
    # Before Python 3.14 `\B` failed in the empty text; corral follows 3.14.
    if s == "" and sys.version_info < (3, 14) and r"\B" in p.pattern:
        return None
    return p.fullmatch(s) is not None


@pytest.mark.parametrize("pattern", _patterns())
def test_assertions_match_as_re_does(pattern, byte_vocab):
    oracle = re.compile(pattern)
    try:
        compiled = corral.compile(corral.Grammar.regex(pattern), byte_vocab)
    except corral.CorralError as e:
        assert "matches no string" in str(e), (pattern, e)
        assert not any(_oracle(oracle, s) for s in STRINGS), pattern
        return
    wrong = [s for s in STRINGS if (want := _oracle(oracle, s)) is not None and compiled.matches(s.encode()) != want]
    assert not wrong, (pattern, wrong[:5])


def test_what_looks_past_a_look_behind_is_refused_with_its_position():
    with pytest.raises(corral.UnsupportedFeatureError, match="inside a look-behind") as info:
        corral.Grammar.regex(r"ab(?<=b$)")
    assert "position 7" in str(info.value)  # the `$`


def test_look_around_is_bounded_by_the_limits():
    # A look-behind of 1,000 characters after any text: the subset construction tracks
    # every position of it (2^1000 sets); refused by size, not built.
    with pytest.raises(corral.LimitExceededError):
        corral.Grammar.regex(r"(?<=.{1000})x")
    # Repeated boundaries are built once each, and the automaton is bounded.
    small = corral.Limits(max_dfa_states=2000)
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.regex(r"(?:\b.){40}", limits=small)
    assert info.value.limit == "max_dfa_states"
    assert corral.Grammar.regex(r"(?:\b.){4}", limits=small) is not None


def test_word_boundaries_use_the_interpreters_word_characters(byte_vocab):
    # `\b` alone (no `\w` in the pattern) still reads `\w` as the running `re` does.
    compiled = corral.compile(corral.Grammar.regex(r"\w+\b.*"), byte_vocab)
    for s in ["é1 x", "ǅa b", "a\u0661 b"]:
        assert compiled.matches(s.encode()) == (re.fullmatch(r"\w+\b.*", s) is not None), s


def test_alternatives_of_look_aheads_are_bounded_in_one_closure():
    # Twenty groups of two look-aheads each: a million sets of obligations, met before a
    # single character is read. The work of that closure counts against the budget.
    pattern = "".join(f"(?:(?=.{{{i}}}a)|(?=.{{{i}}}b))" for i in range(20)) + ".*"
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.regex(pattern, limits=corral.Limits(dfa_size_limit=1 << 20))
    assert info.value.limit == "dfa_size_limit"


def test_ctrl_c_stops_a_long_look_around_closure(ctrl_c):
    # With the size limits raised, the closure above (here 2^24 sets) runs for minutes:
    # Ctrl-C stops it inside, not after it.
    pattern = "".join(f"(?:(?=.{{{i}}}a)|(?=.{{{i}}}b))" for i in range(24)) + ".*"
    unbounded = corral.Limits(dfa_size_limit=2**40, max_compile_ms=600_000)
    timer = ctrl_c(0.3)
    try:
        with pytest.raises(KeyboardInterrupt):
            corral.Grammar.regex(pattern, limits=unbounded)
    finally:
        timer.cancel()
    assert corral.Grammar.regex(r"a(?=b)b") is not None  # the module still works
