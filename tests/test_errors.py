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
    (r"(?<!a$)b", corral.UnsupportedFeatureError, 5, "inside a look-behind"),
    (r"a*+", corral.UnsupportedFeatureError, 1, "possessive quantifier"),
    (r"a{2}+", corral.UnsupportedFeatureError, 1, "possessive quantifier"),
    (r"(?>a)", corral.UnsupportedFeatureError, 0, "atomic group"),
    (r"(a)(?(1)a|b)", corral.UnsupportedFeatureError, 3, "conditional group"),
    (r"(?P<x>a)(?P=x)", corral.UnsupportedFeatureError, 8, "named backreference"),
    (r"\N{EM DASH}", corral.UnsupportedFeatureError, 0, r"\N{...}"),
    (r"(?L)a", corral.RegexSyntaxError, 3, "cannot use 'L' flag"),
    (r"ab(c", corral.RegexSyntaxError, 2, "missing ), unterminated subpattern"),
    (r"a)", corral.RegexSyntaxError, 1, "unbalanced parenthesis"),
    (r"abc[de", corral.RegexSyntaxError, 3, "unterminated character set"),
    (r"a{2,1}", corral.RegexSyntaxError, 2, "min repeat greater than max repeat"),
    (r"[z-a]", corral.RegexSyntaxError, 1, "bad character range z-a"),
    (r"*a", corral.RegexSyntaxError, 0, "nothing to repeat"),
    (r"x**", corral.RegexSyntaxError, 2, "multiple repeat"),
    ("\\", corral.RegexSyntaxError, 0, "bad escape (end of pattern)"),
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
    # Unicode \w (hundreds of ranges) goes to the regex engine, whose NFA of it is larger
    # than this limit; the default limit admits it.
    vocab = corral.Vocabulary.from_token_bytes([b"a", b"</s>"], [1])
    with pytest.raises(corral.LimitExceededError) as info:
        corral.compile(corral.Grammar.regex(r"x\w+y"), vocab, limits=corral.Limits(nfa_size_limit=1 << 14))
    assert info.value.limit == "nfa_size_limit"
    corral.compile(corral.Grammar.regex(r"x\w+y"), vocab)


def test_limit_counted_repetition():
    # Counts of 16 and more are built as a counter: its size is checked against
    # max_dfa_states before it is built. A long count keeps one block of rows (a counted
    # region): the limit bounds the block, and the count only the states it can number.
    vocab = corral.Vocabulary.from_token_bytes([b"a", b"</s>"], [1])
    compiled = corral.compile(corral.Grammar.regex(r"\w{100000}"), vocab)
    assert compiled.matches(b"a" * 100000) and not compiled.matches(b"a" * 99999)
    for pattern in [r"\w{1000000000}", r"(?:\w{5000}){5000}"]:
        with pytest.raises(corral.LimitExceededError) as info:
            corral.compile(corral.Grammar.regex(pattern), vocab)
        assert info.value.limit == "max_dfa_states"
    with pytest.raises(corral.LimitExceededError):
        corral.compile(corral.Grammar.regex(r"[a-zé]{300}", limits=corral.Limits(max_dfa_states=100)), vocab)
    compiled = corral.compile(corral.Grammar.regex(r"[a-zé]{1000}"), vocab)
    assert compiled.matches(b"a" * 1000) and not compiled.matches(b"a" * 999) and not compiled.matches(b"a" * 1001)


def test_rust_panic_becomes_internal_error():
    from corral import _core

    with pytest.raises(corral.InternalError, match="deliberate test panic"):
        _core._panic_for_test()
    # The process is alive and corral still works.
    assert corral.Grammar.regex("a").kind == "regex"


def _error_classes() -> dict:
    from corral import errors

    return {name: getattr(errors, name) for name in errors.__all__}


def test_native_errors_are_the_registered_python_classes():
    from corral import errors

    # The very classes of corral.errors, with their class attributes and docstrings.
    with pytest.raises(corral.RegexSyntaxError) as info:
        corral.Grammar.regex("a(")
    assert type(info.value) is errors.RegexSyntaxError and info.value.pattern == "a("
    with pytest.raises(corral.LimitExceededError) as limit:
        corral.Grammar.regex("a" * 11, limits=corral.Limits(max_pattern_bytes=10))
    assert type(limit.value) is errors.LimitExceededError and limit.value.limit == "max_pattern_bytes"
    assert "Limits.max_pattern_bytes" in str(limit.value)


def test_error_registration_checks_its_classes(byte_vocab):
    from corral import _core

    classes = _error_classes()
    _core._register_errors(classes)  # the same classes again: nothing changes
    missing = {k: v for k, v in classes.items() if k != "DeadEndError"}
    with pytest.raises(TypeError, match="DeadEndError is missing"):
        _core._register_errors(missing)
    with pytest.raises(TypeError, match="MatcherError must derive from CorralError"):
        _core._register_errors({**classes, "MatcherError": ValueError})
    with pytest.raises(TypeError, match="must be a class"):
        _core._register_errors({**classes, "InternalError": "InternalError"})

    class Other(corral.CorralError):
        pass

    with pytest.raises(ImportError, match="MatcherError is already registered"):
        _core._register_errors({**classes, "MatcherError": Other})
    # Refused calls changed nothing.
    with pytest.raises(corral.MatcherError):
        corral.compile(corral.Grammar.regex("a"), byte_vocab).matcher().rollback(5)


def test_unregistered_errors_are_an_import_error_not_a_crash():
    # The native module loaded on its own (without the corral package, so without
    # corral.errors): an error it raises is an ImportError that still says what went wrong.
    from corral import _core

    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('corral._core', {_core.__file__!r})\n"
        "m = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "assert 'corral.errors' not in sys.modules\n"
        "for call in (m._panic_for_test, lambda: m.Grammar.regex('a(')):\n"
        "    try:\n"
        "        call()\n"
        "    except ImportError as e:\n"
        "        print(e)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "not registered" in line]
    assert len(lines) == 2, result.stdout
    assert "InternalError" in lines[0] and "deliberate test panic" in lines[0]
    assert "RegexSyntaxError" in lines[1] and "regex syntax error at position 1" in lines[1]


def test_type_errors():
    with pytest.raises(TypeError):
        corral.Grammar.regex(123)
    with pytest.raises(TypeError):
        corral.compile("a", None)


def test_cli_reports_bad_regex_on_stderr():
    proc = subprocess.run(
        [sys.executable, "-m", "corral", "generate", "--regex", "(?<=a(?=b))"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "inside a look-behind" in proc.stderr and "position 5" in proc.stderr


def test_limit_grammar_size_and_nesting():
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.ebnf('start ::= "a" ;' + " " * 100, limits=corral.Limits(max_grammar_bytes=10))
    assert info.value.limit == "max_grammar_bytes"
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.ebnf("start ::= " + "(" * 300 + '"a"' + ")" * 300 + " ;")
    assert info.value.limit == "max_grammar_nesting"
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.lark("start: " + "(" * 300 + '"a"' + ")" * 300 + "\n")
    assert info.value.limit == "max_grammar_nesting"


def test_limit_grammar_productions():
    text = 'start ::= x{5000} ; x ::= "a" | "(" x ")" ;'
    with pytest.raises(corral.LimitExceededError) as info:
        corral.Grammar.ebnf(text, limits=corral.Limits(max_grammar_productions=1000))
    assert info.value.limit == "max_grammar_productions"
    assert corral.Grammar.ebnf('start ::= x{50} ; x ::= "a" | "(" x ")" ;').kind == "ebnf"


def test_limit_earley_items_per_step(byte_vocab):
    limits = corral.Limits(max_earley_items=60)
    m = corral.compile(corral.Grammar.ebnf('s ::= s s | "a" ;'), byte_vocab, limits=limits).matcher()
    with pytest.raises(corral.LimitExceededError) as info:
        for _ in range(200):
            m.advance(ord("a"))
    assert info.value.limit == "max_earley_items"
    # The failed token left the matcher as it was: it can still be used.
    assert m.is_accepting() and m.num_tokens > 0


def test_mask_cache_limit_changes_nothing_but_caching(byte_vocab):
    text = 'start ::= "[" (start ("," start)*)? "]" ;'
    uncached = corral.compile(corral.Grammar.ebnf(text), byte_vocab, limits=corral.Limits(max_mask_cache_bytes=0))
    cached = corral.compile(corral.Grammar.ebnf(text), byte_vocab)
    a, b = uncached.matcher(), cached.matcher()
    for ch in "[[],[[]]]":
        ma, mb = corral.allocate_bitmask(1, byte_vocab.size), corral.allocate_bitmask(1, byte_vocab.size)
        a.fill_bitmask(ma)
        b.fill_bitmask(mb)
        assert (ma == mb).all()
        assert a.advance(ord(ch)) and b.advance(ord(ch))
    assert uncached.cached_states == 0 and cached.cached_states > 0
