"""Differential fuzzing of the regex front-end against Python's `re`.

Random patterns built from regex pieces: corral must never raise anything but a
CorralError; where both compile, `re.fullmatch` and corral agree on random strings; a
syntax error in corral is a syntax error in Python too.
"""

from __future__ import annotations

import re
import warnings

from hypothesis import HealthCheck, given, settings, strategies as st

import corral

PIECES = list("ab.|*+?()[]{}^$-,0123") + [
    r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", "(?:", "[^", r"\.", "é", "😀", "{2}", "{1,3}", "{,2}", "{2,}", "*?", r"\\", "[a-c]",
]
TEXT = "ab01-,.é 2{}😀\n"
VOCAB = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])

patterns = st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join)
texts = st.lists(st.text(alphabet=TEXT, max_size=6), min_size=20, max_size=20)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(patterns, texts)
def test_regex_front_end_agrees_with_python(pattern, strings):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            python = re.compile(pattern)
    except re.error:
        python = None
    try:
        compiled = corral.compile(corral.Grammar.regex(pattern), VOCAB)
    except (corral.UnsupportedFeatureError, corral.EmptyLanguageError):
        return
    except corral.RegexSyntaxError:
        assert python is None, f"corral rejects {pattern!r}, which Python accepts"
        return
    assert python is not None, f"corral builds {pattern!r}, which Python refuses"
    for s in strings:
        assert bool(python.fullmatch(s)) == compiled.matches(s.encode()), (pattern, s)
