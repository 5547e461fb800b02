"""Structural tags (``Grammar.structural_tag``, XGrammar's format) through real tokenizers:
valid agent turns are accepted token by token, random walks end in turns whose tool calls
parse back and validate against each tool's parameters, and malformed descriptions name
their place."""

from __future__ import annotations

import json
import pickle
import random
import re

import jsonschema
import pytest

import corral
from _util import accepts_tokens, allowed_ids

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city"], "additionalProperties": False}
TIME = {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"], "additionalProperties": False}
TOOLS = {"get_weather": WEATHER, "get_time": TIME}


def hermes_tag(name: str, schema: dict) -> dict:
    return {
        "type": "tag",
        "begin": f'<tool_call>\n{{"name": "{name}", "arguments": ',
        "content": {"type": "json_schema", "json_schema": schema},
        "end": "}\n</tool_call>",
    }


def tools_spec(**flags) -> dict:
    return {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [hermes_tag(n, s) for n, s in TOOLS.items()], **flags}}


def reasoning_spec() -> dict:
    return {"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": "</think>"},
        tools_spec()["format"],
    ]}}


CALL_RE = re.compile(r'<tool_call>\n(\{"name": "([a-z_]+)", "arguments": (.*?)\})\n</tool_call>', re.S)


def parsed_calls(text: str) -> list[tuple[str, dict]]:
    """The calls of a turn, parsed back: each is JSON, names a tool and has valid arguments."""
    calls = []
    for m in CALL_RE.finditer(text):
        whole = json.loads(m.group(1))
        assert whole["name"] == m.group(2)
        jsonschema.validate(whole["arguments"], TOOLS[whole["name"]])
        calls.append((whole["name"], whole["arguments"]))
    # Outside the calls, no trigger.
    assert "<tool_call>" not in CALL_RE.sub("", text)
    return calls


VALID_TURNS = [
    "No tool needed: it is sunny.",
    'Let me look.<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>',
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call> Done.',
    'Broken <tool_cal is not a trigger.',
]


@pytest.mark.parametrize("turn", range(len(VALID_TURNS)))
def test_valid_turns_are_accepted_token_by_token(tokenizer, turn):
    text = VALID_TURNS[turn]
    compiled = corral.compile(corral.Grammar.structural_tag(tools_spec()), tokenizer.vocab)
    ids = tokenizer.encode(text)
    assert tokenizer.vocab.decode_bytes(ids) == text.encode()
    ok, why = accepts_tokens(compiled, tokenizer.vocab, ids)
    assert ok, why
    parsed_calls(text)


def test_reasoning_then_calls(deepseek):
    compiled = corral.compile(corral.Grammar.structural_tag(reasoning_spec()), deepseek.vocab)
    good = "<think>Which tool? <tool_call> is how I call.</think>" + VALID_TURNS[1]
    assert accepts_tokens(compiled, deepseek.vocab, deepseek.encode(good))[0]
    assert not compiled.matches(b"no reasoning first")
    assert not compiled.matches(b"<think>a</think><tool_call>oops")
    assert compiled.matches(b"<think>a</think>b</think>")  # after the reasoning, free text


def test_random_walks_end_in_valid_calls(deepseek):
    """Random tokens inside forced calls (at least one, stop after the first), finished
    by the matcher's completion: every turn parses back into a valid call."""
    vocab = deepseek.vocab
    compiled = corral.compile(corral.Grammar.structural_tag(tools_spec(at_least_one=True, stop_after_first=True)), vocab)
    rng = random.Random(5)
    names = set()
    for _ in range(12):
        m, out = compiled.matcher(), b""
        for _ in range(rng.randint(5, 30)):
            allowed = [int(t) for t in allowed_ids(m, vocab) if int(t) not in vocab.eos_token_ids]
            if not allowed:
                break
            t = rng.choice(allowed)
            assert m.advance(t)
            out += vocab.token_bytes(t)
        out += m.completion()
        assert compiled.matches(out), out
        calls = parsed_calls(out.decode())
        assert len(calls) == 1
        names.add(calls[0][0])
    assert names == set(TOOLS)


def test_options_pickling_and_errors():
    compact = corral.Grammar.structural_tag(tools_spec(), whitespace="compact")
    flexible = corral.Grammar.structural_tag(json.dumps(tools_spec()))
    assert compact != flexible and flexible == corral.Grammar.structural_tag(tools_spec())
    assert pickle.loads(pickle.dumps(compact)) == compact
    bv = corral.Vocabulary.from_token_bytes([bytes([b]) for b in range(256)] + [b"</s>"], eos_token_ids=[256])
    spaced = b'<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>'
    assert corral.compile(flexible, bv).matches(spaced)
    assert not corral.compile(compact, bv).matches(spaced)
    assert corral.compile(compact, bv).matches(spaced.replace(b'{"zone": "UTC"}', b'{"zone":"UTC"}'))
    bad = tools_spec()
    bad["format"]["triggers"].append("<call>")
    with pytest.raises(corral.InvalidGrammarError, match=r"/format/triggers/1.*begins no tag"):
        corral.Grammar.structural_tag(bad)
    with pytest.raises(corral.InvalidGrammarError, match="unknown format type"):
        corral.Grammar.structural_tag({"type": "structural_tag", "format": {"type": "paragraph"}})
    with pytest.raises(corral.InvalidSchemaError, match="structural tag at /format/tags/0/content/json_schema"):
        bad_schema = {"type": "tag", "begin": "<a>", "end": "</a>", "content": {"type": "json_schema", "json_schema": {"type": 5}}}
        corral.Grammar.structural_tag({"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<a>"], "tags": [bad_schema]}})
    with pytest.raises(TypeError):
        corral.Grammar.structural_tag(["not", "a", "spec"])  # type: ignore[arg-type]


def test_tool_definitions_as_servers_pass_them(byte_vocab):
    call = b'<tool_call>\n{"name": "ping", "arguments": {"host": "a"}}\n</tool_call>'
    # `parameters: None` (a model's `model_dump()`) is a tool that takes any object.
    for fn in ({"name": "ping", "parameters": None}, {"name": "ping"}):
        grammar = corral.Grammar.tool_calls([{"type": "function", "function": fn}])
        compiled = corral.compile(grammar, byte_vocab)
        assert compiled.matches(b"ok " + call) and not compiled.matches(call.replace(b'{"host": "a"}', b"[1]"))
        # An open object keeps its keys distinct inside the call; the text around it is not JSON.
        assert not compiled.matches(call.replace(b'{"host": "a"}', b'{"host": "a", "host": "b"}'))
        assert compiled.matches(b'{"a": 1, "a": 2} ' + call)
    # No tools: free text in which the marker cannot be written, as with tool_choice "none".
    empty = corral.compile(corral.Grammar.tool_calls([]), byte_vocab)
    assert empty.matches(b"No tool can help here.") and not empty.matches(b"x <tool_call>")
    for choice in ("required", {"name": "ping"}):
        with pytest.raises(corral.GrammarError, match="required|not among"):
            corral.Grammar.tool_calls([], tool_choice=choice)
    for markers in (("", ""), ("<think>", ""), ("<think>",)):
        with pytest.raises(corral.GrammarError, match="reasoning must be two non-empty"):
            corral.Grammar.tool_calls([{"name": "ping"}], reasoning=markers)  # type: ignore[arg-type]
    with pytest.raises(corral.GrammarError, match="must be a list"):
        corral.Grammar.tool_calls({"name": "ping"})  # type: ignore[arg-type]


QWEN_TOOLS = [{"type": "function", "function": {"name": n, "parameters": s}} for n, s in TOOLS.items()]
QWEN_TURN = (
    "<think>\nThe user wants the weather; <tool_call> is how I ask.\n</think>\n\n"
    'Checking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"zone": "UTC"}}\n</tool_call>'
)


@pytest.mark.parametrize("spelling", ["special tokens", "plain text"])
def test_qwen_turns_with_markers_as_special_tokens_or_text(qwen3, spelling):
    vocab = qwen3.vocab
    ids = qwen3.encode(QWEN_TURN) if spelling == "special tokens" else qwen3.encode_plain(QWEN_TURN)
    markers = {i for i in ids if vocab.token_kind(i) == "special"}
    assert bool(markers) == (spelling == "special tokens")
    grammar = corral.Grammar.tool_calls(QWEN_TOOLS, format="hermes", reasoning=("<think>", "</think>"))
    compiled = corral.compile(grammar, vocab)
    ok, why = accepts_tokens(compiled, vocab, ids)
    assert ok, why
    # Only the markers' special tokens count as text; others stay forbidden.
    m = compiled.matcher()
    allowed = set(allowed_ids(m, vocab).tolist())
    think, im_start = 248068, 248045
    assert think in allowed and im_start not in allowed


def test_tool_choice_none_forbids_the_marker_token(qwen3):
    vocab = qwen3.vocab
    compiled = corral.compile(corral.Grammar.tool_calls(QWEN_TOOLS, format="hermes", tool_choice="none"), vocab)
    m = compiled.matcher()
    tool_call = 248058
    for t in qwen3.encode_plain("Some text, then "):
        assert tool_call not in set(allowed_ids(m, vocab).tolist())
        assert m.advance(t)
    assert tool_call not in set(allowed_ids(m, vocab).tolist())
    assert not compiled.matches(b"<tool_call>")
    required = corral.compile(corral.Grammar.tool_calls(QWEN_TOOLS, format="hermes", tool_choice={"name": "get_time"}), vocab)
    m = required.matcher()
    assert set(allowed_ids(m, vocab).tolist()) >= {tool_call}
    assert not required.matches(b"hello")
    assert required.matches(b'<tool_call>\n{"name": "get_time", "arguments": {"zone": "CET"}}\n</tool_call>')
    assert not required.matches(b'<tool_call>\n{"name": "get_weather", "arguments": {"city": "x"}}\n</tool_call>')


def test_mistral_calls_after_the_tool_calls_token():
    from conftest import real_tokenizer

    mistral = real_tokenizer("mistral")
    vocab = mistral.vocab
    marker = 5  # [TOOL_CALLS], a control token of mistral's v3 tokenizer
    assert vocab.token_kind(marker) == "special"
    compiled = corral.compile(corral.Grammar.tool_calls(QWEN_TOOLS, format="mistral"), vocab)
    call = '[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time", "arguments": {"zone": "UTC"}}]'
    assert accepts_tokens(compiled, vocab, [marker, *mistral.encode(call)])[0]
    assert accepts_tokens(compiled, vocab, mistral.encode("Plain answer."))[0]
    single = corral.compile(corral.Grammar.tool_calls(QWEN_TOOLS, format="mistral", parallel=False), vocab)
    assert not accepts_tokens(single, vocab, [marker, *mistral.encode(call)])[0]


def test_hostile_descriptions_give_corral_errors(byte_vocab):
    def nested(levels: int) -> dict:
        deep: dict = {"type": "const_string", "value": "x"}
        for _ in range(levels):
            deep = {"type": "sequence", "elements": [deep, {"type": "const_string", "value": "y"}]}
        return deep

    # 200 levels of JSON: past serde_json's default bound, within the document depth limit.
    for spec in (nested(100), json.dumps(nested(100))):
        compiled = corral.compile(corral.Grammar.structural_tag(spec), byte_vocab)
        assert compiled.matches(b"x" + b"y" * 100) and not compiled.matches(b"x" + b"y" * 99)
    for too_deep in (nested(300), json.dumps(nested(300))):
        with pytest.raises(corral.LimitExceededError) as e:
            corral.Grammar.structural_tag(too_deep)
        assert e.value.limit == "max_schema_document_depth"
    very_deep: dict = {}
    node = very_deep
    for _ in range(100_000):
        node["content"] = {}
        node = node["content"]
    with pytest.raises(corral.LimitExceededError):
        corral.Grammar.structural_tag(very_deep)
    with pytest.raises(corral.InvalidGrammarError, match="at /value: nan is not a JSON number"):
        corral.Grammar.structural_tag({"type": "const_string", "value": float("nan")})
    with pytest.raises(corral.InvalidGrammarError, match="not valid JSON"):
        corral.Grammar.structural_tag('{"type": "const_string", "value": NaN}')
    with pytest.raises(corral.LimitExceededError):
        corral.Grammar.structural_tag({"type": "repeat", "min": 10**9, "max": -1, "content": {"type": "const_string", "value": "a"}})


def _no_repeated_key(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


def test_walks_through_json_regions_finish_and_validate(deepseek):
    """Random walks through a triggered tag whose arguments need the run-time check (keys
    open to others, distinct items), starting from text that looks like JSON and repeats
    keys and items: every allowed token sampled has a completion whose tagged values
    repeat no key or item and validate; the text around them is free."""
    schema = {
        "type": "object",
        "properties": {
            "ids": {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 0, "maximum": 3}},
            "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string", "maxLength": 1}},
        },
        "additionalProperties": {"type": "integer"},
    }
    tag = {"type": "tag", "begin": "<c>", "content": {"type": "json_schema", "json_schema": schema}, "end": "</c>"}
    spec = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<c>"], "tags": [tag]}}
    vocab = deepseek.vocab
    eos = vocab.eos_token_ids[0]
    compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab)

    def check(text: bytes) -> None:
        for part in text.split(b"<c>")[1:]:
            value = json.loads(part.split(b"</c>")[0], object_pairs_hook=_no_repeated_key)
            jsonschema.validate(value, schema)
            for k in ("ids", "tags"):
                assert len(value.get(k, [])) == len({json.dumps(x) for x in value.get(k, [])}), value

    rng = random.Random(5)
    starts = ['hi {"a":1,"a":2} [1,1] "x" <c>', '<c>{"ids":[1,', '<c>{"a":1,"', '<c>{"tags":["a","', '<c>{"a":1}</c> {"a":1,"']
    for start in starts:
        m = compiled.matcher()
        out = b""
        for t in deepseek.encode(start):
            assert m.advance(t), out
            out += vocab.token_bytes(t)
        for _ in range(25):
            allowed = [int(t) for t in allowed_ids(m, vocab)]
            assert allowed, out
            for t in rng.sample(allowed, min(3, len(allowed))):
                if t != eos:
                    ahead = m.copy()
                    assert ahead.advance(t)
                    rest = ahead.completion()
                    assert rest is not None, out + vocab.token_bytes(t)
                    check(out + vocab.token_bytes(t) + rest)
            # Lean on short tokens with JSON punctuation: they repeat keys and items.
            lean = [t for t in allowed if t != eos and len(vocab.token_bytes(t)) <= 3 and any(c in vocab.token_bytes(t) for c in b'{}[]",:0123')]
            choices = lean if lean and rng.random() < 0.8 else [t for t in allowed if t != eos]
            if not choices:
                break
            t = rng.choice(choices)
            assert m.advance(t)
            out += vocab.token_bytes(t)
        rest = m.completion()
        assert rest is not None, out
        check(out + rest)


def test_free_text_beside_a_json_value_is_not_read_as_json(byte_vocab):
    # Where free text may stand for the value, text that looks like JSON repeats what it
    # likes (the check stays off there: wider than the grammar, never narrower); after a
    # marker, only the value can follow, and it is checked.
    either = {"type": "structural_tag", "format": {"type": "or", "elements": [{"type": "json_schema", "json_schema": {"type": "object"}}, {"type": "any_text"}]}}
    compiled = corral.compile(corral.Grammar.structural_tag(either), byte_vocab)
    assert compiled.matches(b'{"a":1,"a":2}') and compiled.matches(b'{"a":1}')
    tag = {"type": "tag", "begin": "<c>", "content": {"type": "json_schema", "json_schema": {"type": "object"}}, "end": "</c>"}
    marked = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<c>"], "tags": [tag]}}
    compiled = corral.compile(corral.Grammar.structural_tag(marked), byte_vocab)
    assert compiled.matches(b'{"a":1,"a":2} <c>{"a":1,"b":2}</c>') and not compiled.matches(b'<c>{"a":1,"a":2}</c>')


def test_deep_descriptions_as_text_need_no_python_recursion(byte_vocab, tmp_path):
    # Read by the core, not by Python's json (which stops near 1,000 levels); the places
    # of the formats are kept as steps, not as one pointer per level.
    levels = 3_000
    text = '{"type": "optional", "content": ' * levels + '{"type": "const_string", "value": "a"}' + "}" * levels
    limits = corral.Limits(max_schema_document_depth=2 * levels + 10)
    grammar = corral.Grammar.structural_tag(text, limits=limits)
    assert grammar.marker_texts == ("a",)
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(b"a") and compiled.matches(b"") and not compiled.matches(b"aa")
    # The command line passes the text as it is: the depth limit answers, not Python.
    path = tmp_path / "deep.json"
    path.write_text(text)
    from corral.cli import main

    assert main(["generate", "--structural-tag", str(path), "--max-tokens", "2"]) == 2


def test_a_part_that_allows_nothing_is_dropped_with_a_warning(byte_vocab):
    tools = [
        {"type": "function", "function": {"name": "never", "parameters": False}},
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}},
    ]
    with pytest.warns(corral.GrammarWarning, match="allows no text"):
        grammar = corral.Grammar.tool_calls(tools)
    compiled = corral.compile(grammar, byte_vocab)
    assert compiled.matches(b'<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>')
    assert not compiled.matches(b'<tool_call>\n{"name": "never", "arguments": {}}\n</tool_call>')
    with pytest.raises(corral.EmptyLanguageError):
        corral.Grammar.tool_calls(tools[:1], tool_choice="required")
    with pytest.warns(corral.GrammarWarning, match="allows no JSON value"):
        either = corral.Grammar.ebnf('root ::= %json {"not": {}} | "a"')
    assert corral.compile(either, byte_vocab).matches(b"a")


def test_markers_of_xml_styles_are_marker_texts():
    spec = {"type": "tag", "begin": "<tool_call>", "content": {"type": "json_schema", "json_schema": {"type": "object"}, "style": "kimi_k3_xml"}, "end": "</tool_call>"}
    texts = corral.Grammar.structural_tag(spec).marker_texts
    assert "<tool_call>" in texts and "</tool_call>" in texts and "<|close|>argument<|sep|>" in texts


def test_token_and_dispatch_formats():
    tokens = [bytes([b]) for b in range(256)] + [b"</s>", b"<think>", b"</think>", b"[CALL]"]
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[256], special_token_ids=[257, 258, 259])
    # A whole token, by text or by id: the special token itself, not its text spelled.
    for token, text in (("<think>", b"<think>"), (257, b"<think>"), ("[CALL]", b"[CALL]")):
        spec = {"type": "sequence", "elements": [{"type": "token", "token": token}, {"type": "const_string", "value": "x"}]}
        compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab)
        ok, _ = accepts_tokens(compiled, vocab, [tokens.index(text), ord("x")])
        spelled, _ = accepts_tokens(compiled, vocab, list(text + b"x"))
        assert ok and not spelled, token
    with pytest.raises(corral.InvalidGrammarError, match="token id"):
        corral.Grammar.structural_tag({"type": "token", "token": ""})
    with pytest.raises(corral.VocabularyError, match="think"):
        corral.compile(corral.Grammar.structural_tag({"type": "token", "token": "think"}), vocab)
    # Reasoning as a run of tokens up to the `</think>` token, then calls that start at the
    # `[CALL]` token; other special tokens may be written in the run, text spelling the
    # end is text.
    run = {"type": "tag", "begin": {"type": "token", "token": "<think>"}, "content": {"type": "any_tokens", "exclude_tokens": ["[CALL]"]}, "end": {"type": "token", "token": 258}}
    calls = {"type": "token_dispatch", "rules": [["[CALL]", {"type": "regex", "pattern": "[0-9]+;"}]]}
    compiled = corral.compile(corral.Grammar.structural_tag({"type": "sequence", "elements": [run, calls]}), vocab)
    think, end, call = 257, 258, 259
    for ok in ([think, *b"a</think>", think, end, *b"hi", call, *b"12;", *b"x"], [think, end, call, *b"1;", call, *b"2;"]):
        assert accepts_tokens(compiled, vocab, ok)[0], ok
    for bad in ([think, call, end], [think, end, call, *b"x"], [think, end, call, *b"1"], [*b"<think>", end]):
        assert not accepts_tokens(compiled, vocab, bad)[0], bad
    # A run that excludes nothing still writes special tokens, as one that excludes some.
    for run in ({"type": "any_tokens"}, {"type": "any_tokens", "exclude_tokens": [5]}):
        assert accepts_tokens(corral.compile(corral.Grammar.structural_tag(run), vocab), vocab, [*b"a", call, think])[0], run
    # One token but some, between whole tokens: exactly one.
    one = {"type": "tag", "begin": {"type": "token", "token": "<think>"}, "content": {"type": "exclude_token", "exclude_tokens": ["[CALL]", ord("z")]}, "end": {"type": "token", "token": 258}}
    compiled = corral.compile(corral.Grammar.structural_tag(one), vocab)
    for ok in ([think, ord("a"), end], [think, 0xC3, end]):
        assert accepts_tokens(compiled, vocab, ok)[0], ok
    for bad in ([think, end], [think, *b"ab", end], [think, call, end], [think, ord("z"), end]):
        assert not accepts_tokens(compiled, vocab, bad)[0], bad
    # Free text in which each pattern starts its format.
    rules = [["<call>", {"type": "regex", "pattern": "[0-9]+;"}]]
    compiled = corral.compile(corral.Grammar.structural_tag({"type": "dispatch", "rules": rules, "loop": False}), vocab)
    assert compiled.matches(b"see <call>12;") and not compiled.matches(b"see <call>x") and not compiled.matches(b"<call>1; more")
