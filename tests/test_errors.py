"""Bad input gets a clear corral error that says what and where; limits are enforced."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

import corral

# (pattern, exception class, position, text the message must contain)
BAD_PATTERNS = [
    (r"(a)\1", corral.UnsupportedFeatureError, 3, "backreference"),
    (r"a(?=b)", corral.UnsupportedFeatureError, 1, "look-ahead"),
    (r"(?<!a)b", corral.UnsupportedFeatureError, 0, "look-behind"),
    (r"a*+", corral.UnsupportedFeatureError, 1, "possessive quantifier"),
    (r"a{2}+", corral.UnsupportedFeatureError, 4, "possessive quantifier"),
    (r"(?>a)", corral.UnsupportedFeatureError, 0, "atomic group"),
    (r"(?(1)a|b)", corral.UnsupportedFeatureError, 0, "conditional group"),
    (r"a\bc", corral.UnsupportedFeatureError, 1, "word-boundary"),
    (r"a^b", corral.UnsupportedFeatureError, 1, "start anchor"),
    (r"a$b", corral.UnsupportedFeatureError, 1, "end anchor"),
    (r"(?P<x>a)(?P=x)", corral.UnsupportedFeatureError, 8, "named backreference"),
    (r"\N{EM DASH}", corral.UnsupportedFeatureError, 0, r"\N{...}"),
    (r"(?L)a", corral.UnsupportedFeatureError, 2, "locale flag"),
    (r"ab(c", corral.RegexSyntaxError, 2, "unclosed group"),
    (r"a)", corral.RegexSyntaxError, 1, "unopened group"),
    (r"abc[de", corral.RegexSyntaxError, 3, "unterminated character class"),
    (r"a{2,1}", corral.RegexSyntaxError, 1, "start must be <= the end"),
    (r"[z-a]", corral.RegexSyntaxError, 1, "start must be <= the end"),
    (r"*a", corral.RegexSyntaxError, 0, "missing expression"),
    (r"x**", corral.RegexSyntaxError, 2, "multiple repeat"),
    ("\\", corral.RegexSyntaxError, 0, "lone backslash"),
]


@pytest.mark.parametrize("pattern,cls,position,text", BAD_PATTERNS, ids=[p for p, *_ in BAD_PATTERNS])
def test_bad_pattern_errors(pattern, cls, position, text):
    with pytest.raises(cls) as info:
        corral.Grammar.regex(pattern)
    err = info.value
    assert isinstance(err, corral.CorralError) and isinstance(err, corral.GrammarError)
    assert err.position == position
    assert err.pattern == pattern
    message = str(err)
    assert text in message
    assert f"at position {position}" in message
    # The caret line points at the position.
    lines = message.splitlines()
    assert lines[-1].index("^") - 4 == position, message


def test_python_re_agrees_these_are_errors_or_unsupported():
    import re

    for pattern, cls, _, _ in BAD_PATTERNS:
        if cls is corral.RegexSyntaxError:
            with pytest.raises(re.error):
                re.compile(pattern)


def test_empty_language():
    with pytest.raises(corral.EmptyLanguageError, match="no string"):
        corral.compile(corral.Grammar.regex(r"[^\s\S]"), corral.Vocabulary.from_token_bytes([b"a"], [0]))


def test_limit_dfa_size():
    vocab = corral.Vocabulary.from_token_bytes([b"a", b"b", b"</s>"], [2])
    limits = corral.Limits(dfa_size_limit=1 << 18)
    with pytest.raises(corral.LimitExceededError) as info:
        corral.compile(corral.Grammar.regex(r"(a|b)*a(a|b){24}"), vocab, limits=limits)
    assert info.value.limit == "dfa_size_limit" and info.value.value == 1 << 18
    assert "Limits.dfa_size_limit" in str(info.value)


def test_limit_dfa_size_default_is_quick():
    """With the default limits an exploding pattern errors out, in bounded time and memory."""
    vocab = corral.Vocabulary.from_token_bytes([b"a", b"b", b"</s>"], [2])
    start = time.monotonic()
    with pytest.raises(corral.LimitExceededError) as info:
        corral.compile(corral.Grammar.regex(r"(a|b)*a(a|b){40}"), vocab, cache=False)
    assert info.value.limit in ("dfa_size_limit", "max_dfa_states")
    assert time.monotonic() - start < 120


def test_limit_dfa_states():
    vocab = corral.Vocabulary.from_token_bytes([b"a", b"</s>"], [1])
    with pytest.raises(corral.LimitExceededError) as info:
        corral.compile(corral.Grammar.regex(r"a{500}"), vocab, limits=corral.Limits(max_dfa_states=100))
    assert info.value.limit == "max_dfa_states"


def test_limit_pattern_length_and_nesting():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.regex("a" * 101, limits=corral.Limits(max_pattern_bytes=100))
    assert info.value.limit == "max_pattern_bytes"
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.regex("(" * 300 + ")" * 300)
    assert info.value.limit == "regex_nest_limit"


def test_limit_nfa_size():
    with pytest.raises(corral.LimitExceededError) as info:
        vocab = corral.Vocabulary.from_token_bytes([b"a", b"</s>"], [1])
        corral.compile(corral.Grammar.regex(r"\w{1000}"), vocab, limits=corral.Limits(nfa_size_limit=1 << 16))
    assert info.value.limit == "nfa_size_limit"


def test_limits_defaults_are_documented():
    limits = corral.Limits()
    assert limits.dfa_size_limit == 256 << 20
    assert limits.max_dfa_states == 200_000
    assert "dfa_size_limit" in repr(limits)
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "limits.md").read_text()
    for name in ("max_pattern_bytes", "regex_nest_limit", "nfa_size_limit", "dfa_size_limit", "max_dfa_states", "max_forced_tokens"):
        row = next(line for line in doc.splitlines() if line.startswith(f"| `{name}`"))
        assert f"| {getattr(limits, name)} |" in row, row


def test_rust_panic_becomes_internal_error():
    from corral import _core

    with pytest.raises(corral.InternalError, match="deliberate test panic"):
        _core._panic_for_test()
    # The process is alive and corral still works.
    assert corral.Grammar.regex("a").kind == "regex"


def test_type_errors():
    with pytest.raises(TypeError):
        corral.Grammar.regex(123)
    with pytest.raises(TypeError):
        corral.compile("a", None)


def test_cli_reports_bad_regex_on_stderr():
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "generate", "--regex", "a(?=b)"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "look-ahead" in proc.stderr and "position 1" in proc.stderr
