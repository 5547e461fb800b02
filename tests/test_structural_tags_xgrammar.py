r"""Structural tags mean what XGrammar means by them: on a vocabulary of single bytes, corral's
mask and XGrammar's are compared at every step of random walks through descriptions that
cover every format corral supports, and through XGrammar's ready-made descriptions of
models' tool-call formats (XGrammar is the oracle here, as the format is its own).

The comparison leaves out where corral chooses differently, as docs/tool_calls.md says:
- bytes from 0x80 up: XGrammar allows bytes that cannot be UTF-8 in free text; corral
  allows only whole characters;
- whitespace corral allows around a JSON value inside a tag, where XGrammar allows none;
- the descriptions' JSON schemas hold no numbers (corral reads `-0`, XGrammar refuses it)
  and no string lengths (XGrammar's `maxLength` strings take raw control characters and
  no escapes; JSON is the other way round);
- the walks write no backslash where a description has JSON: corral writes each string
  one way, as `json.dumps` does (no `\/`, `\u` only for control characters), XGrammar
  reads every escape;
- in an XML layout of arguments, whitespace around a raw string with constraints (an
  `enum` member): XGrammar allows it, corral reads the whole text between the markers as
  the value and allows none;
- on a vocabulary with the models' markers as special tokens: XGrammar reads a special
  token as its text wherever that text may be written (inside a string value), corral
  only where the description names the token or writes its text as a fixed string.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import xgrammar as xgr

import corral

EOS = 256
WHITESPACE = {9, 10, 13, 32}


def tag(begin: str, content: dict, end: str | list[str]) -> dict:
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def text(value: str) -> dict:
    return {"type": "const_string", "value": value}


ANY = {"type": "any_text"}
ONE = text("1")
ARGS = {"type": "json_schema", "json_schema": {"type": "object", "properties": {"q": {"type": "string"}, "m": {"enum": ["a", "b"]}}, "required": ["q"], "additionalProperties": False}}

DESCRIPTIONS = {
    "sequence and regex": {"type": "sequence", "elements": [text("a"), {"type": "regex", "pattern": "[0-9]{1,3}"}]},
    "or": {"type": "or", "elements": [text("ab"), text("ac")]},
    "free text in a tag": tag("<think>", ANY, "</think>"),
    "JSON in a tag": tag("<f>", ARGS, "</f>"),
    "triggers": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>"), tag("<fn>", text("2"), "</fn>")]},
    "at least one": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "at_least_one": True},
    "stop after first": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "stop_after_first": True},
    "exactly one": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "at_least_one": True, "stop_after_first": True},
    "excludes": {"type": "triggered_tags", "triggers": ["<f"], "tags": [tag("<f>", ONE, "</f>")], "excludes": ["<|end|>"]},
    "separator": {"type": "tags_with_separator", "tags": [tag("<a>", ANY, "</a>"), tag("<b>", text("2"), "</b>")], "separator": "\n"},
    "separator, one or more": {"type": "tags_with_separator", "tags": [tag("<a>", ONE, "</a>")], "separator": ",", "at_least_one": True},
    "separator, at most one": {"type": "tags_with_separator", "tags": [tag("<a>", ONE, "</a>")], "separator": ",", "stop_after_first": True},
    "any text with excludes": {"type": "any_text", "excludes": ["ab", "c"]},
    "reasoning then calls": {"type": "sequence", "elements": [tag("<think>", ANY, "</think>"), {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [tag("<tool_call>", ARGS, "</tool_call>")]}]},
    "free text ends at the tag's end": tag("<x>", {"type": "sequence", "elements": [text("A"), ANY]}, "</x>"),
    "triggers inside a tag": tag("<x>", {"type": "triggered_tags", "triggers": ["<y"], "tags": [tag("<y>", ONE, "</y>")]}, "</x>"),
    "end list": tag("<x>", ANY, ["</x>", "<end>"]),
    "GBNF": {"type": "grammar", "grammar": 'root ::= "a" [0-9]+ | "b"'},
    "repetitions": {"type": "sequence", "elements": [{"type": "repeat", "content": text("ab"), "min": 1, "max": 3}, {"type": "star", "content": text("c")}, {"type": "optional", "content": text("d")}]},
    "an end that is a trigger's prefix": {"type": "triggered_tags", "triggers": ["<a"], "tags": [tag("<a>", ANY, "<a/>")]},
    "a trigger shorter than its begin": {"type": "triggered_tags", "triggers": ["ab"], "tags": [tag("abc", ONE, "ba")]},
    "separator inside a tag": tag("[", {"type": "tags_with_separator", "tags": [tag("{", ANY, "}")], "separator": ","}, "]"),
    "nested tags": tag("<o>", tag("<i>", ANY, "</i>"), "</o>"),
    # Where free text stops, as a parser reads it (texts that reach the place: SCRIPTS).
    "free text before more content": tag("<x>", {"type": "sequence", "elements": [ANY, text("!")]}, "</x>"),
    "excludes inside a trigger": {"type": "triggered_tags", "triggers": ["<a"], "tags": [tag("<a>", ONE, "</a>")], "excludes": ["<"]},
    "excludes across a trigger": {"type": "triggered_tags", "triggers": ["<t"], "tags": [tag("<t>", ONE, "</t>")], "excludes": ["x<"]},
    "an end inside an inner trigger": tag("<o>", {"type": "triggered_tags", "triggers": ["<b"], "tags": [tag("<b>", ONE, "</b>")]}, ["</o>", "<"]),
    "straddling triggers": {"type": "triggered_tags", "triggers": ["ab", "bc"], "tags": [tag("ab!", ONE, "."), tag("bc!", ONE, ".")]},
    "dispatch": {"type": "dispatch", "rules": [["<a", tag(">", ONE, "</a>")], ["bb", text("!")]], "excludes": ["zz"]},
    "dispatch once": {"type": "dispatch", "rules": [["<a", tag(">", ONE, "</a>")]], "loop": False},
    "a character budget": tag("<think>", {"type": "any_text", "max_chars": 7, "excludes": ["<t"]}, "</think>"),
    "excluded texts in JSON strings": tag("<f>", {**ARGS, "excludes": ["a<", "<b"]}, "</f>"),
    "excluded texts in raw strings": tag("<f>", {**ARGS, "excludes": ["a<", "<b"], "style": "qwen_xml"}, "</f>"),
}


#: Texts written along some descriptions, where a random walk seldom goes.
SCRIPTS = {
    "free text before more content": [b"<x>a</x>b!</x>", b"<x>ab!</x>"],
    "excludes inside a trigger": [b"x<a>1</a>"],
    "excludes across a trigger": [b"yx<t>1</t>", b"y<t>1</t>"],
    "an end inside an inner trigger": [b"<o>x<b>1</b></o>"],
    "straddling triggers": [b"xabc!1.", b"xbc!1.ab!1."],
}


@pytest.fixture(scope="module")
def engines():
    tokens = [bytes([b]) for b in range(256)] + [b"</s>"]
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[EOS])
    info = xgr.TokenizerInfo(tokens, stop_token_ids=[EOS])
    return vocab, xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)


def compared(ids: set[int], eos: int = EOS) -> set[int]:
    """The allowed ids the comparison looks at: ASCII bytes, markers and EOS (the ids
    from 256 to `eos`)."""
    return {i for i in ids if i < 128 or EOS <= i <= eos}


def compare_along_walks(
    ours: corral.CompiledGrammar,
    theirs,
    seed: str,
    has_json: bool,
    walks: int = 30,
    steps: int = 60,
    script: bytes | None = None,
    raw_strings: bool = False,
    markers: list[bytes] = (),  # type: ignore[assignment]
    special: bool = True,
) -> None:
    """Walks choosing among the bytes both allow, mostly printable text, following any
    path down to a few bytes (a marker being written) and now and then heading for one.
    With `script`, one walk along those bytes, as far as both engines allow them. With
    `markers`, the vocabulary holds them after the bytes, as special tokens (see
    `marker_engines`) unless not `special`: walks write them now and then."""
    rng = random.Random(seed)
    eos = EOS + len(markers)
    size = eos + 1
    ours_bm, theirs_bm = corral.allocate_bitmask(1, size), xgr.allocate_token_bitmask(1, size)
    for _ in range(walks):
        m, x, out = ours.matcher(), xgr.GrammarMatcher(theirs), b""
        for _ in range(steps):
            m.fill_bitmask(ours_bm)
            x.fill_next_token_bitmask(theirs_bm)
            mine, their = allowed(ours_bm, size), allowed(theirs_bm.numpy(), size)
            if whole_characters(out):  # inside a character, XGrammar allows any byte
                a, b = compared(mine, eos), compared(their, eos)
                # XGrammar reads a special token as its text where text is allowed;
                # corral reads one only where the description names it.
                if special:
                    b -= {t for t in b - a if EOS <= t < eos and markers[t - EOS][0] in a}
                if has_json and a - b <= WHITESPACE and b <= a:
                    a = b  # whitespace around a JSON value: corral's choice
                if raw_strings and b - a <= WHITESPACE and a <= b:
                    b = a  # whitespace around a raw string with constraints: none in corral
                assert a == b, f"after {out!r}: corral only {sorted(a - b)}, XGrammar only {sorted(b - a)}"
            both = sorted((mine & their) - ({ord("\\")} if has_json else set()))
            marks = [t for t in both if EOS <= t < eos]
            if script is not None:  # the given text, as far as both allow it
                if len(out) == len(script) or script[len(out)] not in both:
                    break
                both = [script[len(out)]]
            if not both or (eos in both and rng.random() < 0.1):
                break
            printable = [t for t in both if 32 <= t < 127 or t == 10]
            t = rng.choice(both if len(both) <= 3 or not printable else printable)
            if len(both) > 3 and rng.random() < 0.15:
                t = next((c for c in (ord("<"), 0xEF, ord("{"), ord("[")) if c in both), t)
            if marks and script is None and rng.random() < 0.2:
                t = rng.choice(marks)
            if t == eos:
                break
            assert m.advance(t) and x.accept_token(t)
            out += markers[t - EOS] if t >= EOS else bytes([t])


def allowed(bitmask: np.ndarray, size: int = 257) -> set[int]:
    words = np.asarray(bitmask).reshape(-1).view(np.uint32)
    return {i for i in range(size) if (int(words[i // 32]) >> (i % 32)) & 1}


def whole_characters(out: bytes) -> bool:
    try:
        out.decode()
        return True
    except UnicodeDecodeError:
        return False


@pytest.mark.parametrize("name", DESCRIPTIONS)
def test_masks_equal_xgrammars_along_random_walks(engines, name):
    vocab, compiler = engines
    spec = {"type": "structural_tag", "format": DESCRIPTIONS[name]}
    # XGrammar allows whitespace runs of any length in JSON; corral's bound is raised past
    # the walks' length.
    compiled = corral.compile(corral.Grammar.structural_tag(spec, max_whitespace=64), vocab, cache=False)
    theirs = compiler.compile_structural_tag(json.dumps(spec))
    text = json.dumps(spec)
    compare_along_walks(compiled, theirs, name, "json_schema" in text, raw_strings='"style"' in text)
    for script in SCRIPTS.get(name, []):
        compare_along_walks(compiled, theirs, name, False, walks=1, steps=len(script) + 1, script=script)


TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"]}}},
]
#: XGrammar's ready-made descriptions of models' tool-call formats whose arguments are JSON.
JSON_ARGUMENT_MODELS = ["llama", "kimi", "deepseek_r1", "deepseek_v3_1", "qwen_3", "harmony", "exaone"]
#: Those whose arguments are XML (`qwen_xml`, `deepseek_xml`, ...).
XML_ARGUMENT_MODELS = [
    "qwen_3_5", "qwen_3_coder", "mimo", "deepseek_v3_2", "deepseek_v4", "deepseek_v4_1", "glm_4_7",
    "minimax", "minimax_m3", "kimi_k3", "cohere",
]


@pytest.mark.parametrize("model", JSON_ARGUMENT_MODELS)
@pytest.mark.parametrize("tool_choice, reasoning", [("required", False), ("auto", True)])
def test_xgrammars_model_formats_mean_the_same(engines, model, tool_choice, reasoning):
    # Real descriptions nobody here wrote: reasoning and free text, the model's markers
    # (special-token texts such as DeepSeek's), JSON arguments. Required calls without
    # reasoning send every walk into the arguments (a changed key or enum value is caught).
    from xgrammar.builtin_structural_tag import get_model_structural_tag

    vocab, compiler = engines
    spec = get_model_structural_tag(model, tools=TOOLS, tool_choice=tool_choice, reasoning=reasoning).model_dump_json()
    compiled = corral.compile(corral.Grammar.structural_tag(spec, max_whitespace=64), vocab, cache=False)
    compare_along_walks(compiled, compiler.compile_structural_tag(spec), model + tool_choice, True, walks=20, steps=150)


#: Arguments with every kind a parameter's value may have in an XML layout: raw strings
#: (free and from an enum), a boolean, a list, a nested object, a string-or-null.
XML_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}, "alerts": {"type": "boolean"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "plan", "parameters": {"type": "object", "properties": {
        "stops": {"type": "array", "items": {"type": "string"}},
        "opts": {"type": "object", "properties": {"mode": {"enum": ["car", "bus"]}, "note": {"type": ["string", "null"]}}, "required": ["mode"]},
    }, "required": ["stops", "opts"]}}},
]


@pytest.mark.parametrize("model", XML_ARGUMENT_MODELS)
@pytest.mark.parametrize("tool_choice, reasoning", [("required", "disabled"), ("auto", "auto")])
def test_xml_argument_formats_mean_the_same(engines, model, tool_choice, reasoning):
    # Each style's parameters, raw strings, typed markers and nesting, along walks that
    # reach into the arguments; XGrammar allows whitespace around a raw string with
    # constraints (an enum), corral none (see the module docs).
    from xgrammar.builtin_structural_tag import get_model_structural_tag

    vocab, compiler = engines
    spec = get_model_structural_tag(model, tools=XML_TOOLS, tool_choice=tool_choice, reasoning=reasoning).model_dump_json()
    compiled = corral.compile(corral.Grammar.structural_tag(spec, max_whitespace=64), vocab, cache=False)
    theirs = compiler.compile_structural_tag(spec)
    compare_along_walks(compiled, theirs, model + tool_choice, True, walks=20, steps=250, raw_strings=True)


#: The models whose ready-made descriptions bind their markers to special tokens
#: (`token_markers=True`): token begins and ends, runs of tokens, token triggers.
TOKEN_MARKER_MODELS = ["qwen_3_coder", "qwen_3_5", "qwen_3", "glm_4_7"]
MARKERS = [b"<think>", b"</think>", b"<tool_call>", b"</tool_call>", b"<arg_key>", b"</arg_key>", b"<arg_value>", b"</arg_value>"]


@pytest.fixture(scope="module")
def marker_engines():
    """Bytes, then the models' markers as special tokens, then EOS."""
    tokens = [bytes([b]) for b in range(256)] + MARKERS + [b"</s>"]
    eos = len(tokens) - 1
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[eos], special_token_ids=range(256, eos))
    info = xgr.TokenizerInfo(tokens, stop_token_ids=[eos])
    return vocab, xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)


@pytest.mark.parametrize("model", TOKEN_MARKER_MODELS)
@pytest.mark.parametrize("tool_choice, reasoning", [("required", "disabled"), ("auto", "enabled")])
def test_token_marker_formats_mean_the_same(marker_engines, model, tool_choice, reasoning):
    # XGrammar 0.2.9 rewrites these descriptions onto token formats: the reasoning is a
    # run of tokens up to the `</think>` token, calls start at the `<tool_call>` token.
    # GLM's `<arg_key>` is both excluded as a token and written as text: corral reads it
    # as text (see docs/tool_calls.md).
    from xgrammar.builtin_structural_tag import get_model_structural_tag

    vocab, compiler = marker_engines
    tools = TOOLS if model == "qwen_3" else XML_TOOLS
    spec = get_model_structural_tag(
        model, tools=tools, tool_choice=tool_choice, reasoning=reasoning, token_markers=True
    ).model_dump_json()
    compiled = corral.compile(corral.Grammar.structural_tag(spec, max_whitespace=64), vocab, cache=False)
    theirs = compiler.compile_structural_tag(spec)
    compare_along_walks(compiled, theirs, model + tool_choice, True, walks=20, steps=200, raw_strings=True, markers=MARKERS)


#: Tokens of several bytes beside the single bytes, so that a budgeted text starts and
#: ends inside tokens.
LONGER_TOKENS = [b"ab", b"ba", b"</t>", b"</", b"t>", b"b</t>", b"</t>x", b"<t>", b"<t>a", b"aaaa", b"a\n", b"x<t>"]


@pytest.fixture(scope="module")
def longer_engines():
    tokens = [bytes([b]) for b in range(256)] + LONGER_TOKENS + [b"</s>"]
    eos = len(tokens) - 1
    vocab = corral.Vocabulary.from_token_bytes(tokens, eos_token_ids=[eos])
    info = xgr.TokenizerInfo(tokens, stop_token_ids=[eos])
    return vocab, xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)


@pytest.mark.parametrize("budget", [1, 3, 8])
def test_budgets_in_tokens_end_where_xgrammars_do(longer_engines, marker_engines, budget):
    # XGrammar counts the tokens that start inside a budgeted text while masks drive the
    # output: after that many, both allow only what may follow it. Free text between
    # string markers, over tokens that start and end inside it; a run of tokens between
    # token markers.
    vocab, compiler = longer_engines
    think = tag("<t>", {"type": "any_text", "max_tokens": budget}, "</t>")
    spec = {"type": "structural_tag", "format": {"type": "sequence", "elements": [think, {"type": "any_text"}]}}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab, cache=False)
    theirs = compiler.compile_structural_tag(json.dumps(spec))
    compare_along_walks(compiled, theirs, f"text{budget}", False, walks=40, steps=30, markers=LONGER_TOKENS, special=False)
    vocab, compiler = marker_engines
    run = {"type": "any_tokens", "exclude_tokens": ["<tool_call>"], "max_tokens": budget}
    think = {"type": "tag", "begin": {"type": "token", "token": "<think>"}, "content": run, "end": {"type": "token", "token": "</think>"}}
    spec = {"type": "structural_tag", "format": {"type": "sequence", "elements": [think, {"type": "const_string", "value": "ok"}]}}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab, cache=False)
    theirs = compiler.compile_structural_tag(json.dumps(spec))
    compare_along_walks(compiled, theirs, f"tokens{budget}", False, walks=40, steps=30, markers=MARKERS)


#: XGrammar's ready-made descriptions (its registry as of 0.2.8; `gemma_4`, added later,
#: writes arguments in a style corral does not write).
REGISTRY_MODELS = JSON_ARGUMENT_MODELS + XML_ARGUMENT_MODELS


@pytest.mark.parametrize("model", REGISTRY_MODELS)
def test_every_ready_made_description_compiles(model):
    from xgrammar.builtin_structural_tag import get_model_structural_tag

    choices = ["auto", "required", "none", {"type": "function", "function": {"name": "plan"}}]
    for reasoning in ["enabled", "disabled", "auto"]:
        for choice in choices:
            for parallel in [True, False]:
                spec = get_model_structural_tag(
                    model, tools=XML_TOOLS, tool_choice=choice, reasoning=reasoning, parallel_tool_calls=parallel
                ).model_dump_json()
                grammar = corral.Grammar.structural_tag(spec)
                assert grammar.kind == "structural_tag"


def random_description(rng: random.Random, depth: int) -> dict:
    """A random format over a small alphabet, so that triggers, ends, excludes and text
    overlap often: tags inside triggered tags inside tags, ends that begin triggers,
    excludes that straddle them."""
    def word(lo: int, hi: int) -> str:
        return "".join(rng.choice("ab<>/") for _ in range(rng.randint(lo, hi)))

    kind = rng.choice(["const", "regex", "any"] + (["sequence", "or", "optional", "star", "plus", "repeat", "tag", "triggered", "separated"] if depth else []))
    if kind == "const":
        return text(word(1, 3))
    if kind == "regex":
        return {"type": "regex", "pattern": rng.choice(["a+", "[ab]{1,2}", "b?a", "(ab|ba)*c"])}
    if kind == "any":
        return {"type": "any_text", "excludes": [word(1, 2) for _ in range(rng.randint(0, 2))]}
    if kind in ("sequence", "or"):
        return {"type": kind, "elements": [random_description(rng, depth - 1) for _ in range(rng.randint(1, 3))]}
    if kind in ("optional", "star", "plus"):
        return {"type": kind, "content": random_description(rng, depth - 1)}
    if kind == "repeat":
        least = rng.randint(0, 2)
        return {"type": "repeat", "content": random_description(rng, depth - 1), "min": least, "max": rng.choice([least, least + 1, -1])}
    if kind == "tag":
        end = "</" + word(0, 2) + rng.choice(["", ">"])
        return tag("<" + word(0, 2), random_description(rng, depth - 1), [end, word(1, 3)] if rng.random() < 0.4 else end)
    flags = {"at_least_one": rng.random() < 0.3, "stop_after_first": rng.random() < 0.3}
    if kind == "triggered":
        triggers = ["<a", "<b"] if rng.random() < 0.4 else ["<" + rng.choice("ab")]
        tags = [tag(triggers[i % len(triggers)] + word(0, 2), random_description(rng, depth - 1), "</" + word(1, 2)) for i in range(rng.randint(len(triggers), 3))]
        return {"type": "triggered_tags", "triggers": triggers, "tags": tags, "excludes": [word(1, 2)] if rng.random() < 0.3 else [], **flags}
    tags = [tag("<" + word(1, 2), random_description(rng, depth - 1), "</" + word(1, 2)) for _ in range(rng.randint(1, 2))]
    return {"type": "tags_with_separator", "tags": tags, "separator": rng.choice([",", "\n", "ab"]), **flags}


@pytest.mark.parametrize("seed", range(40))
def test_random_descriptions_mean_the_same(engines, seed):
    vocab, compiler = engines
    spec = {"type": "structural_tag", "format": random_description(random.Random(seed), 3)}
    compiled = corral.compile(corral.Grammar.structural_tag(spec), vocab, cache=False)
    compare_along_walks(compiled, compiler.compile_structural_tag(json.dumps(spec)), str(seed), False, walks=15, steps=40)
