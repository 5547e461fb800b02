"""Tool-call arguments in the XML layouts of models (a structural tag's `json_schema` with a
`style`): random masked walks over Qwen 3.5's vocabulary, read back by a parser written
here from each layout's description (docs/tool_calls.md) and validated with `jsonschema`;
arguments written in each layout accepted token by token, with the tool-call markers as
special tokens and as text; descriptions a layout cannot write refused with a corral
error."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import jsonschema
import numpy as np
import pytest

import corral
from _util import accepts_tokens, allowed_ids
from conftest import real_tokenizer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 12},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "unit": {"enum": ["celsius", "fahrenheit"]},
        "alerts": {"type": "boolean"},
        "stops": {"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 3},
        "opts": {"type": "object", "properties": {"mode": {"enum": ["car", "bus"]}, "fast": {"type": "boolean"}}, "required": ["mode"]},
        "note": {"type": ["string", "null"], "maxLength": 5},
    },
    "required": ["city", "days"],
}

STYLES = ["qwen_xml", "minimax_xml", "minimax_m3_xml", "deepseek_xml", "deepseek_v4_1_xml", "glm_xml", "cohere_xml", "kimi_k3_xml"]
NESTING = {"minimax_m3_xml", "cohere_xml"}
M3 = "]<]minimax[>["
DS = {"deepseek_xml": "<｜DSML｜parameter", "deepseek_v4_1_xml": "<｜DSML｜ parameter"}
CLOSE = {
    "qwen_xml": "</parameter>",
    "minimax_xml": "</parameter>",
    "deepseek_xml": "</｜DSML｜parameter>",
    "deepseek_v4_1_xml": "</｜DSML｜ parameter>",
    "glm_xml": "</arg_value>",
    "cohere_xml": "</cofl:value>",
    "kimi_k3_xml": "<|close|>argument<|sep|>",
}
BEGIN, END = "<tool_call>\n", "\n</tool_call>"


def tagged(style: str, schema: dict[str, Any] = SCHEMA) -> dict[str, Any]:
    content = {"type": "json_schema", "json_schema": schema, "style": style}
    return {"type": "structural_tag", "format": {"type": "tag", "begin": BEGIN, "content": content, "end": END}}


# --- a reader of each layout, written from its description ------------------------------


def raw_schema(schema: dict[str, Any]) -> bool:
    """Is a value of `schema` only ever a string (read raw where no marker says)?"""
    if "enum" in schema:
        return all(isinstance(v, str) for v in schema["enum"])
    return schema.get("type") == "string"


def scalar(text: str, schema: dict[str, Any]) -> Any:
    """A parameter's text where no marker says its type: raw for a string, else JSON
    (a string-or-null reads `null` as null)."""
    if raw_schema(schema):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse(style: str, text: str, schema: dict[str, Any]) -> dict[str, Any]:
    if style == "minimax_m3_xml":
        value, rest = parse_m3(text, schema)
        assert rest.strip() == "", rest
        return value
    if style == "cohere_xml":
        value, pos = parse_cohere_members(text, 0)
        assert text[pos:].strip() == ""
        return value
    patterns = {
        "qwen_xml": r"<parameter=([^>]*)>(.*?)</parameter>",
        "minimax_xml": r'<parameter name="([^"]*)">(.*?)</parameter>',
        "glm_xml": r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>",
        "deepseek_xml": r'<｜DSML｜parameter name="([^"]*)" string="(true|false)">(.*?)</｜DSML｜parameter>',
        "deepseek_v4_1_xml": r'<｜DSML｜ parameter name="([^"]*)" string="(true|false)">(.*?)</｜DSML｜ parameter>',
        "kimi_k3_xml": r'<\|open\|>argument key="([^"]*)" type="(\w+)"<\|sep\|>(.*?)<\|close\|>argument<\|sep\|>',
    }
    out: dict[str, Any] = {}
    pos = 0
    for m in re.finditer(patterns[style], text, re.S):
        assert text[pos : m.start()].strip() == "", f"text between parameters: {text[pos:m.start()]!r}"
        pos = m.end()
        key = m.group(1)
        assert key not in out, f"{key} twice"
        if len(m.groups()) == 2:
            out[key] = scalar(m.group(2), schema["properties"][key])
        else:
            typed, value = m.group(2), m.group(3)
            out[key] = value if typed in ("true", "string") else json.loads(value)
    assert text[pos:].strip() == "", f"left over: {text[pos:]!r}"
    return out


def parse_m3(text: str, schema: dict[str, Any]) -> tuple[Any, str]:
    """MiniMax M3's parameters of an object (`schema`), or its items; the text after."""
    out: dict[str, Any] = {}
    while True:
        stripped = text.lstrip()
        m = re.match(re.escape(M3) + r"<([^>/]*)>", stripped)
        if not m:
            return out, (stripped if out else text)
        key = m.group(1)
        value, text = m3_value(stripped[m.end() :], schema["properties"][key])
        close = f"{M3}</{key}>"
        assert text.startswith(close), text[:40]
        text = text[len(close) :]
        out[key] = value


def m3_value(text: str, schema: dict[str, Any]) -> tuple[Any, str]:
    if schema.get("type") == "object":
        return parse_m3(text, schema)
    if schema.get("type") == "array":
        items = []
        while (stripped := text.lstrip()).startswith(f"{M3}<item>"):
            item, text = m3_value(stripped[len(M3) + 6 :], schema["items"])
            assert text.startswith(f"{M3}</item>")
            text = text[len(M3) + 7 :]
            items.append(item)
        return items, text.lstrip() if items else text
    end = text.index(M3)  # a raw value never holds the marker
    return scalar(text[:end], schema), text[end:]


COHERE_OPEN = re.compile(r'\s*<cofl:value(?: name="([^"]*)")? type="(raw|json|dict|list)">')


def cohere_value(kind: str, text: str, pos: int) -> tuple[Any, int]:
    """A Cohere value of type `kind` from `pos` up to its closing marker (consumed)."""
    if kind in ("raw", "json"):
        end = text.index("</cofl:value>", pos)
        body = text[pos:end]
        return (body if kind == "raw" else json.loads(body)), end + len("</cofl:value>")
    if kind == "dict":
        value, pos = parse_cohere_members(text, pos)
    else:
        value, pos = [], pos
        while m := COHERE_OPEN.match(text, pos):
            assert m.group(1) is None
            item, pos = cohere_value(m.group(2), text, m.end())
            value.append(item)
    pos = len(text[:pos]) + (len(text[pos:]) - len(text[pos:].lstrip()))
    assert text.startswith("</cofl:value>", pos), text[pos : pos + 30]
    return value, pos + len("</cofl:value>")


def parse_cohere_members(text: str, pos: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    while m := COHERE_OPEN.match(text, pos):
        key = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        out[key], pos = cohere_value(m.group(2), text, m.end())
    return out, pos


# --- a writer of each layout -------------------------------------------------------------


def render(style: str, args: dict[str, Any]) -> str:
    return "\n".join(render_member(style, k, v) for k, v in args.items())


def render_member(style: str, key: str, value: Any, name: bool = True) -> str:
    raw = isinstance(value, str)
    text = value if raw else json.dumps(value)
    if style == "qwen_xml":
        return f"<parameter={key}>{text}</parameter>"
    if style == "minimax_xml":
        return f'<parameter name="{key}">{text}</parameter>'
    if style == "glm_xml":
        return f"<arg_key>{key}</arg_key>\n<arg_value>{text}</arg_value>"
    if style in DS:
        return f'{DS[style]} name="{key}" string="{str(raw).lower()}">{text}{CLOSE[style]}'
    if style == "kimi_k3_xml":
        kind = {str: "string", bool: "boolean", int: "number", float: "number", list: "array", dict: "object", type(None): "null"}[type(value)]
        return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}{CLOSE[style]}'
    if style == "minimax_m3_xml":
        tag = key if name else "item"
        if isinstance(value, dict):
            text = "".join(render_member(style, k, v) for k, v in value.items())
        elif isinstance(value, list):
            text = "\n".join(render_member(style, "", v, name=False) for v in value)
        return f"{M3}<{tag}>{text}{M3}</{tag}>"
    kind = "raw" if raw else "dict" if isinstance(value, dict) else "list" if isinstance(value, list) else "json"
    if isinstance(value, dict):
        text = "".join(render_member(style, k, v) for k, v in value.items())
    elif isinstance(value, list):
        text = "".join(render_member(style, "", v, name=False) for v in value)
    named = f' name="{key}"' if name else ""
    return f'<cofl:value{named} type="{kind}">{text}</cofl:value>'


ARGUMENTS = [
    {"city": "Paris", "days": 3},
    {"city": "a<b> & \"c\"", "days": 14, "unit": "fahrenheit", "alerts": False, "stops": ["x", "y z"], "opts": {"mode": "bus", "fast": True}, "note": None},
    {"city": "", "days": 1, "stops": [], "note": "n"},
]


@pytest.fixture(scope="module")
def qwen3():
    return real_tokenizer("qwen3")


@pytest.mark.parametrize("style", STYLES)
def test_arguments_written_in_each_layout_are_read_back_and_accepted(qwen3, style):
    grammar = corral.Grammar.structural_tag(tagged(style))
    vocab = qwen3.vocab.with_special_text(list(grammar.marker_texts))
    compiled = corral.compile(grammar, vocab)
    for args in ARGUMENTS:
        jsonschema.validate(args, SCHEMA)
        body = render(style, args)
        assert parse(style, body, SCHEMA) == args
        text = BEGIN + body + END
        for ids in (qwen3.encode(text), qwen3.encode_plain(text)):  # markers as special tokens, as text
            ok, why = accepts_tokens(compiled, vocab, ids)
            assert ok, f"{style}: {why} in {text!r}"
    # A value ends at the first closing marker: written inside a string, it is refused.
    if style not in NESTING:
        bad = BEGIN + render(style, {"city": "a" + CLOSE[style] + "b", "days": 1}) + END
        assert not compiled.matches(bad.encode())


def walk(compiled: corral.CompiledGrammar, vocab: corral.Vocabulary, rng: random.Random, limit: int = 400) -> list[int]:
    """Tokens chosen at random among those the mask allows, until the end is chosen (or
    forced) or `limit` tokens; the end is chosen now and then where allowed."""
    m = compiled.matcher()
    ids: list[int] = []
    ends = set(vocab.eos_token_ids)
    for _ in range(limit):
        allowed = allowed_ids(m, vocab)
        assert len(allowed) > 0
        choices = [int(t) for t in allowed[:64] if int(t) not in ends] if len(allowed) < 64 else None
        eos_allowed = any(bool(np.isin(e, allowed)) for e in ends)
        if eos_allowed and (choices == [] or rng.random() < 0.3):
            break
        while True:  # a random allowed token other than an end
            t = choices[rng.randrange(len(choices))] if choices else int(allowed[rng.randrange(len(allowed))])
            if t not in ends:
                break
        assert m.advance(t)
        ids.append(t)
    return ids


@pytest.mark.parametrize("style", STYLES)
def test_random_masked_walks_write_valid_arguments(qwen3, style):
    grammar = corral.Grammar.structural_tag(tagged(style))
    vocab = qwen3.vocab.with_special_text(list(grammar.marker_texts))
    compiled = corral.compile(grammar, vocab)
    rng = random.Random(style)
    finished = 0
    for _ in range(12):
        ids = walk(compiled, vocab, rng)
        text = b"".join(vocab.token_bytes(t) for t in ids).decode()
        if not compiled.matches(text.encode()):
            continue  # cut off by the step limit
        finished += 1
        assert text.startswith(BEGIN) and text.endswith(END), text
        args = parse(style, text[len(BEGIN) : -len(END)], SCHEMA)
        jsonschema.validate(args, SCHEMA)
    assert finished >= 6, f"only {finished} walks finished"


def test_a_key_a_layout_cannot_write_is_refused():
    for style, key in [("qwen_xml", "a>b"), ("minimax_xml", 'a"b'), ("glm_xml", "x</arg_key>y"), ("kimi_k3_xml", 'k"')]:
        schema = {"type": "object", "properties": {key: {"type": "string"}}}
        with pytest.raises(corral.InvalidSchemaError, match="ends a key in the XML style"):
            corral.Grammar.structural_tag(tagged(style, schema))
    with pytest.raises(corral.InvalidGrammarError, match=r"/style: unknown style \"yaml\""):
        corral.Grammar.structural_tag(tagged("yaml"))


def test_many_tools_in_an_xml_layout():
    tools = []
    for i in range(1000):
        content = {"type": "json_schema", "json_schema": {"type": "object", "properties": {f"p{i}": {"type": "integer"}}, "required": [f"p{i}"]}, "style": "qwen_xml"}
        tools.append({"type": "tag", "begin": f"<tool_call>\n<function=f{i}>\n", "content": content, "end": "\n</function>\n</tool_call>"})
    spec = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tools}}
    grammar = corral.Grammar.structural_tag(spec)
    tokens = [bytes([b]) for b in range(256)] + [b"</s>"]
    compiled = corral.compile(grammar, corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[256]))
    assert compiled.matches(b"hi <tool_call>\n<function=f999>\n<parameter=p999>7</parameter>\n</function>\n</tool_call>")
    assert not compiled.matches(b"<tool_call>\n<function=f999>\n<parameter=p998>7</parameter>\n</function>\n</tool_call>")


def test_the_layout_is_in_the_mask():
    # An integer parameter's value: JSON digits from its minimum on (or whitespace), never a
    # quote.
    tokens = [bytes([b]) for b in range(256)] + [b"</s>"]
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[256])
    compiled = corral.compile(corral.Grammar.structural_tag(tagged("qwen_xml")), vocab)
    m = compiled.matcher()
    for b in (BEGIN + "<parameter=city>Paris</parameter><parameter=days>").encode():
        assert m.advance(b)
    allowed = {int(t) for t in allowed_ids(m, vocab)}
    assert ord('"') not in allowed and ord("1") in allowed and ord("0") not in allowed and ord(" ") in allowed


# --- Grammar.tool_calls in the families' formats -------------------------------------------

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}},
]
CALLS = [("get_weather", {"city": "Paris", "days": 2}), ("search", {"q": "a <b>"})]


def turn(format: str, calls: list[tuple[str, dict[str, Any]]]) -> str:
    """The calls as each family's chat template writes them (after any free text)."""
    if format == "qwen3_xml":
        return "".join(f"<tool_call>\n<function={n}>\n{render('qwen_xml', a)}\n</function>\n</tool_call>" for n, a in calls)
    if format == "glm":
        return "".join(f"<tool_call>{n}{render('glm_xml', a)}</tool_call>" for n, a in calls)
    if format == "minimax":
        invokes = "".join(f'<invoke name="{n}">\n{render("minimax_xml", a)}\n</invoke>\n' for n, a in calls)
        return f"<minimax:tool_call>\n{invokes}</minimax:tool_call>"
    if format == "deepseek_v3":
        inner = "\n".join(f"<｜tool▁call▁begin｜>function<｜tool▁sep｜>{n}\n```json\n{json.dumps(a)}\n```<｜tool▁call▁end｜>" for n, a in calls)
        return f"<｜tool▁calls▁begin｜>{inner}<｜tool▁calls▁end｜>"
    assert format == "harmony"
    return "<|start|>assistant".join(f"<|channel|>commentary to=functions.{n} <|constrain|>json<|message|>{json.dumps(a)}<|call|>" for n, a in calls)


@pytest.mark.parametrize("format", ["qwen3_xml", "glm", "deepseek_v3", "minimax", "harmony"])
def test_tool_calls_in_each_familys_format(qwen3, format):
    def compiled(**options: Any) -> tuple[corral.CompiledGrammar, corral.Vocabulary]:
        g = corral.Grammar.tool_calls(TOOLS, format=format, **options)
        vocab = qwen3.vocab.with_special_text(list(g.marker_texts))
        return corral.compile(g, vocab), vocab

    def accepts(c_v: tuple[corral.CompiledGrammar, corral.Vocabulary], text: str) -> bool:
        ok, _ = accepts_tokens(c_v[0], c_v[1], qwen3.encode(text))
        return ok

    one, two = turn(format, CALLS[:1]), turn(format, CALLS)
    lead = "" if format == "harmony" else "Let me look. "
    auto = compiled()
    assert accepts(auto, lead + one) and accepts(auto, two)
    assert not accepts(auto, turn(format, [("get_weather", {"days": 2})]))  # city is required
    assert not accepts(auto, turn(format, [("nope", {"q": "x"})]))
    single = compiled(parallel=False)
    assert accepts(single, one) and not accepts(single, two)
    required = compiled(tool_choice="required")
    assert accepts(required, one) and (format == "harmony" or not accepts(required, lead + one))
    named = compiled(tool_choice={"name": "search"})
    assert accepts(named, turn(format, CALLS[1:])) and not accepts(named, one)
    none = compiled(tool_choice="none")
    assert not accepts(none, one)
    thinking = compiled(reasoning=True)
    if format == "harmony":
        analysis = "<|channel|>analysis<|message|>hmm<|end|><|start|>assistant"
        assert accepts(thinking, analysis + one) and not accepts(auto, analysis + one)
    else:
        assert accepts(thinking, "<think>hmm</think>" + lead + one) and not accepts(thinking, one)


def test_a_tool_name_a_format_cannot_write_is_refused():
    tools = [{"type": "function", "function": {"name": "a>b", "parameters": {"type": "object"}}}]
    with pytest.raises(corral.GrammarError, match="ends a name in the qwen3_xml format"):
        corral.Grammar.tool_calls(tools, format="qwen3_xml")
