"""Arguments of the wrong type at the public API: a TypeError naming the argument, never a
truthy string read as True, a foreign error, or an argument silently taken apart."""

from __future__ import annotations

import inspect

import pytest

import corral

BYTES_VOCAB = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"<think>", b"<eos>"], eos_token_ids=[257], special_token_ids=[256])
TOOLS = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]

# One call per public constructor that takes keyword arguments, with valid positional ones.
CALLS = {
    "regex": lambda **kw: corral.Grammar.regex("a", **kw),
    "choice": lambda **kw: corral.Grammar.choice(["a"], **kw),
    "ebnf": lambda **kw: corral.Grammar.ebnf('start ::= "a" ;', **kw),
    "gbnf": lambda **kw: corral.Grammar.gbnf('root ::= "a"', **kw),
    "lark": lambda **kw: corral.Grammar.lark('start: "a"', **kw),
    "json_schema": lambda **kw: corral.Grammar.json_schema({"type": "integer"}, **kw),
    "ban": lambda **kw: corral.Grammar.ban(["x"], **kw),
    "structural_tag": lambda **kw: corral.Grammar.structural_tag({"type": "structural_tag", "format": {"type": "any_text"}}, **kw),
    "tool_calls": lambda **kw: corral.Grammar.tool_calls(TOOLS, **kw),
    "union": lambda **kw: corral.Grammar.union(corral.Grammar.regex("a"), corral.Grammar.regex("b"), **kw),
    "concat": lambda **kw: corral.Grammar.concat(corral.Grammar.regex("a"), corral.Grammar.regex("b"), **kw),
    "compile": lambda **kw: corral.compile(corral.Grammar.regex("a"), BYTES_VOCAB, **kw),
}


def _public_callables():
    out = {name: getattr(corral.Grammar, name) for name, _ in inspect.getmembers(corral.Grammar) if not name.startswith("_")}
    out["compile"] = corral.compile
    return {n: f for n, f in out.items() if callable(f) and not isinstance(inspect.getattr_static(corral.Grammar, n, None), property)}


def _parameters(f):
    try:
        return inspect.signature(f).parameters
    except (TypeError, ValueError):
        return {}


def test_every_constructor_with_limits_or_flags_is_covered():
    """A new public constructor with `limits` or a bool flag must be added to CALLS."""
    for name, f in _public_callables().items():
        params = _parameters(f)
        flags = [p for p in params.values() if p.annotation in (bool, "bool")]
        if "limits" in params or flags:
            assert name in CALLS, f"{name} takes limits or a bool flag: add it to CALLS"


def _flags(name):
    return [p.name for p in _parameters(_public_callables()[name]).values() if p.annotation in (bool, "bool")]


WITH_LIMITS = sorted(n for n in CALLS if "limits" in _parameters(_public_callables()[n]))
WITH_FLAGS = sorted(n for n in CALLS if _flags(n))


def test_the_lists_are_not_empty():
    assert len(WITH_LIMITS) >= 10 and {"ban", "compile", "tool_calls"} <= set(WITH_FLAGS)


@pytest.mark.parametrize("name", WITH_LIMITS)
def test_limits_of_the_wrong_type_are_named(name):
    # The message names the function called, not one it delegates to.
    with pytest.raises(TypeError, match=rf"\b{name}\(\): limits must be (None or )?a corral.Limits"):
        CALLS[name](limits={})
    CALLS[name](limits=corral.Limits())


@pytest.mark.parametrize("name", WITH_FLAGS)
def test_bool_flags_refuse_truthy_strings(name):
    for flag in _flags(name):
        for bad in ("no", 1, None):
            with pytest.raises(TypeError, match=f"{flag} must be True or False"):
                CALLS[name](**{flag: bad})
        for good in (True, False):
            CALLS[name](**{flag: good})


def test_parallel_false_allows_one_call_only():
    one = corral.compile(corral.Grammar.tool_calls(TOOLS, parallel=False), BYTES_VOCAB)
    many = corral.compile(corral.Grammar.tool_calls(TOOLS, parallel=True), BYTES_VOCAB)
    call = b'<tool_call>\n{"name": "a", "arguments": {}}\n</tool_call>'
    assert one.matches(call) and not one.matches(call + call)
    assert many.matches(call + call)


@pytest.mark.parametrize("choice", [{"name": ["a"]}, {"name": None}, {"function": {"name": 3}}, {"name": {"a": 1}}])
def test_tool_choice_naming_no_string_is_a_grammar_error(choice):
    with pytest.raises(corral.GrammarError, match="tool_choice must name a tool by a string"):
        corral.Grammar.tool_calls(TOOLS, tool_choice=choice)


def test_tool_format_of_the_wrong_type_is_a_grammar_error():
    with pytest.raises(corral.GrammarError, match="unknown tool-call format"):
        corral.Grammar.tool_calls(TOOLS, format=["hermes"])  # type: ignore[arg-type]


def test_with_special_text_takes_one_text_or_a_list():
    one = BYTES_VOCAB.with_special_text("<think>")
    assert one is BYTES_VOCAB.with_special_text(["<think>"])
    assert one is BYTES_VOCAB.with_special_text(b"<think>")
    assert one is not BYTES_VOCAB and 256 not in one.special_token_ids
    # One character of the text is not the text: "<" alone enables no special token.
    assert BYTES_VOCAB.with_special_text("<") is BYTES_VOCAB
    for bad in ([2], [None], None, 5):
        with pytest.raises(TypeError, match="with_special_text"):
            BYTES_VOCAB.with_special_text(bad)  # type: ignore[arg-type]
    with pytest.raises(corral.VocabularyError, match="lone surrogate"):
        BYTES_VOCAB.with_special_text(["ok", "\ud800"])


@pytest.mark.parametrize(
    "fmt, where",
    [
        ({"type": "any_text", "excludes": [""]}, "/excludes/0"),
        ({"type": "sequence", "elements": [{"type": "any_text", "excludes": ["a", ""]}]}, "/elements/0/excludes/1"),
    ],
)
def test_an_empty_excluded_string_is_refused(fmt, where):
    spec = {"type": "structural_tag", "format": fmt}
    with pytest.raises(corral.GrammarError, match="empty") as e:
        corral.Grammar.structural_tag(spec)
    assert where in str(e.value)
