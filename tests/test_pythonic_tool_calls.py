"""Llama 4's pythonic tool calls (`Grammar.tool_calls(format="llama4")`, the `pythonic`
style of a structural tag's `json_schema`): random masked walks over Qwen 3's vocabulary
read back as a Python reader of the format does (the turn is a list of calls with keyword
arguments whose values are literals: `ast.parse`, `ast.literal_eval`), arguments validated
with `jsonschema`; transcripts written as the model writes them accepted token by token;
names and schemas the format cannot write refused with a corral error."""

from __future__ import annotations

import ast
import random
from typing import Any

import jsonschema
import pytest

import corral
from _util import accepts_tokens
from conftest import real_tokenizer
from test_xml_tool_arguments import walk

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 12},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "alerts": {"type": "boolean"},
        "stops": {"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 3},
        "opts": {"type": "object", "properties": {"mode": {"enum": ["car", None]}, "fast": {"type": "boolean"}}, "required": ["mode"]},
        "note": {"type": ["string", "null"], "maxLength": 5},
    },
    "required": ["city", "days"],
}
SEARCH: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 16}, "limit": {"type": "integer", "maximum": 50}}, "required": ["q"]}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
    {"type": "function", "function": {"name": "search", "parameters": SEARCH}},
    {"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}},
]
SCHEMAS = {t["function"]["name"]: t["function"]["parameters"] for t in TOOLS}


def read_calls(text: str) -> list[tuple[str, dict[str, Any]]] | None:
    """The calls of a turn as a Python reader of the format reads them (None: the turn is
    text): the python tokens around the list dropped, then a list of calls whose
    arguments are keywords with literal values."""
    if text.startswith("<|python_start|>"):
        text = text[len("<|python_start|>") :].replace("<|python_end|>", "")
    if not text.startswith("["):
        return None
    body = ast.parse(text, mode="eval").body
    assert isinstance(body, ast.List), text
    calls = []
    for call in body.elts:
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args, ast.dump(call)
        args = {}
        for kw in call.keywords:
            assert kw.arg is not None and kw.arg not in args
            args[kw.arg] = ast.literal_eval(kw.value)
        calls.append((call.func.id, args))
    return calls


def write_calls(calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The calls as Llama 4 writes them: `[name(key=value, ...), ...]`, values as Python
    literals with double-quoted strings."""
    def literal(v: Any) -> str:
        if isinstance(v, str):
            return '"' + repr(v)[1:-1].replace('"', '\\"').replace("\\'", "'") + '"'
        if isinstance(v, list):
            return "[" + ", ".join(literal(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{literal(k)}: {literal(x)}" for k, x in v.items()) + "}"
        return repr(v)

    return "[" + ", ".join(f"{n}(" + ", ".join(f"{k}={literal(v)}" for k, v in a.items()) + ")" for n, a in calls) + "]"


CALLS = [
    ("get_weather", {"city": "Paris", "days": 3}),
    ("get_weather", {"city": 'a "q" b', "days": 14, "unit": "fahrenheit", "alerts": False, "stops": ["x", "y z"], "opts": {"mode": None, "fast": True}, "note": None}),
    ("search", {"q": "é <b>", "limit": -2}),
    ("ping", {}),
]


@pytest.fixture(scope="module")
def qwen3():
    return real_tokenizer("qwen3")


def test_calls_written_as_the_model_writes_them_are_read_back_and_accepted(qwen3):
    compiled = corral.compile(corral.Grammar.tool_calls(TOOLS, format="llama4"), qwen3.vocab)
    for calls in ([CALLS[0]], CALLS):
        text = write_calls(calls)
        assert read_calls(text) == calls
        for turn in (text, "<|python_start|>" + text + "<|python_end|>"):
            ok, why = accepts_tokens(compiled, qwen3.vocab, qwen3.encode_plain(turn))
            assert ok, f"{why} in {turn!r}"
    for bad in (
        '[get_weather(city="Paris")]',  # days is required
        '[get_weather(days=3, city="Paris")]',  # schema order
        "[get_weather(city='Paris', days=3)]",  # one quoting
        '[get_weather(city="Paris", days=3, alerts=true)]',  # Python's True
        '[nope(q="x")]',
        '[search(q="x")',
        '[search(q="x")] and more',
    ):
        assert not compiled.matches(bad.encode()), bad
    # Text not starting with `[` is text to a reader, whatever it holds.
    assert compiled.matches(b"The weather is fine.") and compiled.matches(b"") and compiled.matches(b'See [search(q="x")]')
    assert not compiled.matches(b"[not a call") and not compiled.matches(b"text <|python_start|>")


@pytest.mark.parametrize("tool_choice", ["required", "auto", {"name": "search"}])
def test_random_masked_walks_write_calls_a_reader_takes(qwen3, tool_choice):
    grammar = corral.Grammar.tool_calls(TOOLS, format="llama4", tool_choice=tool_choice)
    compiled = corral.compile(grammar, qwen3.vocab)
    rng = random.Random(str(tool_choice))
    finished = calls_seen = 0
    for _ in range(14):
        ids = walk(compiled, qwen3.vocab, rng)
        text = b"".join(qwen3.vocab.token_bytes(t) for t in ids).decode()
        if not compiled.matches(text.encode()):
            continue  # cut off by the step limit
        finished += 1
        calls = read_calls(text)
        if calls is None:
            assert tool_choice == "auto", text
            continue
        for name, args in calls:
            assert tool_choice in ("auto", "required") or name == tool_choice["name"]
            jsonschema.validate(args, SCHEMAS[name])
            calls_seen += 1
    assert finished >= 6 and (tool_choice == "auto" or calls_seen >= 3), (finished, calls_seen)


def test_choices_parallel_and_reasoning():
    def grammar(**options: Any) -> corral.CompiledGrammar:
        tokens = [bytes([b]) for b in range(256)] + [b"</s>"]
        vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[256])
        return corral.compile(corral.Grammar.tool_calls(TOOLS, format="llama4", **options), vocab)

    one, two = write_calls(CALLS[:1]).encode(), write_calls(CALLS[:2]).encode()
    single = grammar(parallel=False)
    assert single.matches(one) and not single.matches(two)
    required = grammar(tool_choice="required")
    assert required.matches(two) and not required.matches(b"text")
    none = grammar(tool_choice="none")
    assert none.matches(b"text") and not none.matches(one)
    thinking = grammar(reasoning=True)
    assert thinking.matches(b"<think>hmm</think>" + one) and not thinking.matches(one)


def test_names_the_format_cannot_write_are_refused():
    for name in ("get-weather", "class", "None", "_x", "2go"):
        tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}]
        with pytest.raises(corral.GrammarError, match="no Python identifier"):
            corral.Grammar.tool_calls(tools, format="llama4")
    for key in ("from", "a b", "x-y"):
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {key: {}}}}}]
        with pytest.raises(corral.InvalidSchemaError, match="no Python keyword argument"):
            corral.Grammar.tool_calls(tools, format="llama4")
    unique = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    with pytest.raises(corral.UnsupportedSchemaError, match="Python literals"):
        corral.Grammar.tool_calls([{"type": "function", "function": {"name": "f", "parameters": unique}}], format="llama4")
