#!/usr/bin/env python
"""Tool-call benchmark: corral's ``Grammar.tool_calls`` against XGrammar's structural tags
and llguidance's Lark, the same constraint, on one vocabulary (DeepSeek's tokenizer.json),
single-threaded.

    python bench/bench_tools.py              # -> bench/results/tools.md, tools.json
    python bench/bench_tools.py --out DIR    # write somewhere else
    python bench/bench_tools.py --xml-only   # XML styles of arguments -> tools_xml.md
    python bench/bench_tools.py --budget-only  # a reasoning budget in tokens -> tools_budget.md

1. compile, for 1, 10 and 50 tools: the description (``corral.tools.tool_calls_spec``, Hermes
   format, tool_choice auto) -> compiled grammar -> matcher -> first mask, fresh and
   uncached every repetition (corral ``cache=False``, ``GrammarCompiler(cache_enabled=
   False)``); the median of 5;
2. masks: an agent turn (free text, two calls, free text) tokenized by the tokenizer, forced
   through token by token on one compiled grammar per engine (10 tools); every mask-fill
   call timed on its own, and classed by where the step is: free text, the tokens that
   write a call's opening marker (``<tool_call>...`` up to the arguments), or inside the
   arguments. Each step's time is the least of 5 passes, each on grammars compiled
   afresh (every pass pays the first visits: a lazy engine's included), the engines taking
   turns at every agent turn; the machine's stalls, which a single pass meets at random
   steps, are so left out for every engine alike. Each peer's mask is compared with
   corral's at every step, outside the timing.

llguidance has no structural tags; the same constraint is written in its Lark
(``lark_tool_calls``): free text up to each trigger as a lazy rule
``/(?s:.*)<tool_call>/`` (its lexer is greedy, so a negated free text before a literal
trigger cannot end), each call as the fixed text around a ``%json`` of the tool's
parameters, and the last free text as ``/(?s:.*)/ & ~/(?s:.*<tool_call>.*)/``. The JSON
arguments are read with flexible whitespace by every engine (XGrammar's structural tags
always allow it). Each engine replays a whole turn at a time, so that one engine's mask
fills do not evict another's caches within a turn.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

for _var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import llguidance  # noqa: E402
import llguidance.hf  # noqa: E402
import llguidance.numpy  # noqa: E402
import numpy as np  # noqa: E402
import tokenizers  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
import xgrammar  # noqa: E402

import corral  # noqa: E402
from corral.tools import tool_calls_spec  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_cfg import EOS_TOKEN, TOKENIZER_JSON, machine_info  # noqa: E402

ns = time.perf_counter_ns
TOOL_COUNTS = (1, 10, 50)
COMPILE_REPS = 5


def make_tools(n: int, plain_strings: bool = False) -> list[dict]:
    """`n` tools with realistic parameters: strings, bounded integers, enums, a nested
    object and an array, some required. `plain_strings`: no string length or format
    (XGrammar's minimax_m3_xml refuses them)."""
    tools = []
    for i in range(n):
        query = {"type": "string"} if plain_strings else {"type": "string", "maxLength": 64}
        after = {"type": "string"} if plain_strings else {"type": "string", "format": "date"}
        params = {
            "type": "object",
            "properties": {
                f"query_{i}": query,
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "mode": {"enum": ["fast", "full", f"custom_{i}"]},
                "filters": {"type": "object", "properties": {"tag": {"type": "string"}, "after": after}},
                "fields": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            },
            "required": [f"query_{i}", "limit"],
            "additionalProperties": False,
        }
        tools.append({"type": "function", "function": {"name": f"tool_{i}", "description": f"tool number {i}", "parameters": params}})
    return tools


def turn(i: int, j: int) -> str:
    call = lambda k, extra: (  # noqa: E731
        f'<tool_call>\n{{"name": "tool_{k}", "arguments": {{"query_{k}": "weather in Paris, tomorrow", "limit": {extra}, '
        f'"mode": "fast", "filters": {{"tag": "news", "after": "2026-01-31"}}, "fields": ["title", "url"]}}}}\n</tool_call>'
    )
    return (f"I will look this up with two tools, then summarize what they return for you.\n{call(i, 5)}\n{call(j, 12)}\n"
            "Both calls are on their way; the answer follows once they return.")


class Engines:
    def __init__(self):
        self.hf = transformers.PreTrainedTokenizerFast(tokenizer_file=TOKENIZER_JSON, eos_token=EOS_TOKEN)
        self.vocab = corral.Vocabulary.from_huggingface(self.hf)
        self.ti = xgrammar.TokenizerInfo.from_huggingface(self.hf, vocab_size=self.vocab.size)
        self.lt = llguidance.hf.from_tokenizer(self.hf)
        self.tok = tokenizers.Tokenizer.from_file(TOKENIZER_JSON)
        self.cmp = min(self.vocab.size, self.ti.vocab_size, self.lt.vocab_size)

    def corral(self, spec):
        t0 = ns()
        compiled = corral.compile(corral.Grammar.structural_tag(spec), self.vocab, cache=False)
        m = compiled.matcher()
        bm = corral.allocate_bitmask(1, self.vocab.size)
        m.fill_bitmask(bm, 0)
        return ns() - t0, compiled

    def llguidance(self, tools):
        t0 = ns()
        m = llguidance.LLMatcher(self.lt, llguidance.grammar_from("lark", lark_tool_calls(tools)), log_level=0)
        if m.is_error():
            raise RuntimeError(f"llguidance: {m.get_error()}")
        bm = llguidance.numpy.allocate_token_bitmask(1, self.lt.vocab_size)
        llguidance.numpy.fill_next_token_bitmask(m, bm, 0)
        return ns() - t0, m

    def xgrammar(self, spec):
        t0 = ns()
        compiler = xgrammar.GrammarCompiler(self.ti, max_threads=1, cache_enabled=False)
        compiled = compiler.compile_structural_tag(json.dumps(spec))
        m = xgrammar.GrammarMatcher(compiled)
        bm = xgrammar.allocate_token_bitmask(1, self.ti.vocab_size)
        m.fill_next_token_bitmask(bm)
        return ns() - t0, compiled


END = "}\n</tool_call>"


def lark_tool_calls(tools: list[dict]) -> str:
    """The Hermes-format turn of ``tool_calls_spec(tools)`` (tool_choice auto, parallel) in
    llguidance's Lark: free text, calls each opened by ``<tool_call>``, free text."""
    calls = []
    for t in tools:
        f = t["function"]
        begin = json.dumps(f'\n{{"name": {json.dumps(f["name"])}, "arguments": ')
        calls.append(f'{begin} %json {json.dumps(f["parameters"])} {json.dumps(END)}')
    return ("start: (free call)* TAIL\n"
            "free[lazy]: /(?s:.*)<tool_call>/\n"
            "TAIL: /(?s:.*)/ & ~/(?s:.*<tool_call>.*)/\n"
            "call: " + "\n    | ".join(calls) + "\n")


def compile_times(e: Engines) -> dict:
    out = {}
    for n in TOOL_COUNTS:
        tools = make_tools(n)
        spec = tool_calls_spec(tools, format="hermes")
        row = {}
        for name, fn, arg in (("corral", e.corral, spec), ("xgrammar", e.xgrammar, spec), ("llguidance", e.llguidance, tools)):
            times = [fn(arg)[0] / 1e6 for _ in range(COMPILE_REPS)]
            row[name] = {"median_ms": statistics.median(times), "min_ms": min(times)}
        row["ratio"] = row["corral"]["median_ms"] / row["xgrammar"]["median_ms"]
        row["ratio_llguidance"] = row["corral"]["median_ms"] / row["llguidance"]["median_ms"]
        out[str(n)] = row
        print(f"compile {n:>2} tools: corral {row['corral']['median_ms']:.2f} ms, xgrammar {row['xgrammar']['median_ms']:.2f} ms, "
              f"llguidance {row['llguidance']['median_ms']:.2f} ms", flush=True)
    return out


def classes(text: str, ids: list[int], vocab: corral.Vocabulary) -> list[str]:
    """Per step (before token k is forced): where the output stands."""
    spans = []  # (start, end, class) of markers and arguments
    pos = 0
    while (start := text.find("<tool_call>", pos)) >= 0:
        args = text.index('"arguments": ', start) + len('"arguments": ')
        close = text.index("\n</tool_call>", args) - 1  # the call's closing brace
        spans += [(start, args, "trigger"), (args, close, "arguments")]
        pos = close
    out, offset = [], 0
    raw = text.encode()
    for t in ids:
        cls = "free text"
        char_offset = len(raw[:offset].decode(errors="ignore"))
        for a, b, c in spans:
            if a <= char_offset < b:
                cls = c
        out.append(cls)
        offset += len(vocab.token_bytes(t))
    return out


def token_class(vocab: corral.Vocabulary, i: int) -> str:
    """What kind of token a disagreement is about."""
    if vocab.token_kind(i) != "normal":
        return vocab.token_kind(i)
    b = vocab.token_bytes(i)
    try:
        text = b.decode()
    except UnicodeDecodeError:
        return "part of a UTF-8 character"
    return "whitespace only" if text.strip() == "" else "other"


class Replay:
    """One engine's matcher over one compiled grammar: fill, bits, advance."""

    def __init__(self, e: Engines, engine: str, compiled):
        self.engine = engine
        if engine == "corral":
            self.m = compiled.matcher()
            self.bm = corral.allocate_bitmask(1, e.vocab.size)
            self.row = self.bm[0]
            self.fill, self.args = self.m.fill_bitmask, (self.bm, 0)
        elif engine == "xgrammar":
            self.m = xgrammar.GrammarMatcher(compiled)
            self.bm = xgrammar.allocate_token_bitmask(1, e.ti.vocab_size)
            self.row = self.bm.numpy()[0]
            self.fill, self.args = self.m.fill_next_token_bitmask, (self.bm,)
        else:
            self.m = compiled.deep_copy()
            self.bm = llguidance.numpy.allocate_token_bitmask(1, e.lt.vocab_size)
            self.row = self.bm[0]
            self.fill, self.args = llguidance.numpy.fill_next_token_bitmask, (self.m, self.bm, 0)

    def advance(self, t: int) -> bool:
        if self.engine == "corral":
            return bool(self.m.advance(t))
        if self.engine == "xgrammar":
            return bool(self.m.accept_token(t))
        return bool(self.m.consume_token(t)) and not self.m.is_error()


WALK_REPEATS = 5


def replay_turn(e: Engines, engine: str, compiled, ids: list[int]) -> tuple[list[float], list]:
    """One turn of `engine` on `compiled` (a matcher of its own): each mask fill's µs, and
    the mask rows (kept packed: unpacked rows for every step would be a few hundred MB,
    whose pages and caches would weigh on the timings)."""
    per, rows = [], []
    r = Replay(e, engine.split()[0], compiled)
    for k, t in enumerate(ids):
        t0 = ns()
        r.fill(*r.args)
        per.append((ns() - t0) / 1e3)
        rows.append(r.row.copy())
        assert r.advance(t), f"{engine} rejects token {k} of a valid turn"
    return per, rows


def timed_replays(e: Engines, makers: dict, turns: list[tuple[list[int], list[str]]]) -> tuple[dict, dict]:
    """Per engine (`makers`: name -> a function compiling its grammar): each step's least
    time over `WALK_REPEATS` passes, each on grammars compiled afresh (so every pass pays
    the first visits), the engines taking turns at every agent turn (so that a slow
    stretch of the machine weighs on them alike); and the masks of the first pass, by
    class."""
    best: dict = {}
    masks: dict = {}
    order = list(makers)
    for rep in range(WALK_REPEATS):
        shift = rep % len(order)
        engines = order[shift:] + order[:shift]
        compiled = {engine: makers[engine]() for engine in engines}
        per: dict = {engine: [] for engine in engines}
        rows: dict = {engine: [] for engine in engines}
        for ids, _ in turns:
            for engine in engines:
                p, r = replay_turn(e, engine, compiled[engine], ids)
                per[engine] += p
                rows[engine] += r
        for engine in engines:
            best[engine] = per[engine] if engine not in best else [min(a, b) for a, b in zip(best[engine], per[engine], strict=True)]
            masks.setdefault(engine, rows[engine])
    classes_all = [c for _, cls in turns for c in cls]
    times = {engine: {} for engine in makers}
    for engine, steps in best.items():
        for c, v in zip(classes_all, steps, strict=True):
            times[engine].setdefault(c, []).append(v)
    return times, masks


def walk(e: Engines) -> dict:
    tools = make_tools(10)
    spec = tool_calls_spec(tools, format="hermes")
    makers = {"corral": lambda: e.corral(spec)[1], "xgrammar": lambda: e.xgrammar(spec)[1], "llguidance": lambda: e.llguidance(tools)[1]}
    texts = [turn(i, (i + 3) % 10) for i in range(10)]
    turns = []
    for text in texts:
        ids = e.tok.encode(text, add_special_tokens=False).ids
        assert e.vocab.decode_bytes(ids) == text.encode()
        turns.append((ids, classes(text, ids, e.vocab)))
    times, masks = timed_replays(e, makers, turns)
    out = {"steps": len(masks["corral"])}
    for peer in ("xgrammar", "llguidance"):
        only: dict = {"corral": {}, peer: {}}  # token class -> count, summed over steps
        differ = 0
        for packed_a, packed_b in zip(masks["corral"], masks[peer], strict=True):
            a, b = (np.unpackbits(p.view(np.uint8), bitorder="little")[: e.cmp] for p in (packed_a, packed_b))
            differ += int(not np.array_equal(a, b))
            for side, ids_only in (("corral", np.flatnonzero(a & ~b)), (peer, np.flatnonzero(b & ~a))):
                for i in ids_only:
                    c = token_class(e.vocab, int(i))
                    only[side][c] = only[side].get(c, 0) + 1
        out[f"differ_{peer}"] = {"steps_whose_masks_differ": differ, "tokens_only_allowed_by": only}
    for eng, by in times.items():
        out[eng] = {}
        for c, v in by.items():
            v = sorted(v)
            out[eng][c] = {"steps": len(v), "median_us": statistics.median(v), "p99_us": v[min(len(v) - 1, int(0.99 * len(v)))], "max_us": v[-1]}
    return out


XML_STYLES = ("qwen_xml", "minimax_xml", "minimax_m3_xml", "deepseek_xml", "deepseek_v4_1_xml", "glm_xml", "cohere_xml", "kimi_k3_xml")
XML_BEGIN, XML_END = "<tool_call>\n<function={name}>\n", "\n</function>\n</tool_call>"
M3 = "]<]minimax[>["


def xml_spec(tools: list[dict], style: str) -> dict:
    """Free text in which ``<tool_call>`` starts a call whose arguments are written in `style`."""
    tags = [{"type": "tag", "begin": XML_BEGIN.format(name=t["function"]["name"]),
             "content": {"type": "json_schema", "json_schema": t["function"]["parameters"], "style": style}, "end": XML_END}
            for t in tools]
    return {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": tags}}


def xml_member(style: str, key: str, value, item: bool = False) -> str:
    """One parameter (or, nesting, one item) as `style` writes it."""
    raw = isinstance(value, str)
    text = value if raw else json.dumps(value)
    if style == "minimax_m3_xml":
        tag = "item" if item else key
        if isinstance(value, dict):
            text = "".join(xml_member(style, k, v) for k, v in value.items())
        elif isinstance(value, list):
            text = "".join(xml_member(style, "", v, item=True) for v in value)
        return f"{M3}<{tag}>{text}{M3}</{tag}>"
    if style == "cohere_xml":
        kind = "raw" if raw else "dict" if isinstance(value, dict) else "list" if isinstance(value, list) else "json"
        if isinstance(value, dict):
            text = "".join(xml_member(style, k, v) for k, v in value.items())
        elif isinstance(value, list):
            text = "".join(xml_member(style, "", v, item=True) for v in value)
        name = "" if item else f' name="{key}"'
        return f'<cofl:value{name} type="{kind}">{text}</cofl:value>'
    if style == "qwen_xml":
        return f"<parameter={key}>{text}</parameter>"
    if style == "minimax_xml":
        return f'<parameter name="{key}">{text}</parameter>'
    if style == "glm_xml":
        return f"<arg_key>{key}</arg_key><arg_value>{text}</arg_value>"
    if style in ("deepseek_xml", "deepseek_v4_1_xml"):
        sp = " " if style == "deepseek_v4_1_xml" else ""
        return f'<｜DSML｜{sp}parameter name="{key}" string="{str(raw).lower()}">{text}</｜DSML｜{sp}parameter>'
    kind = {str: "string", int: "number", dict: "object", list: "array"}[type(value)]
    return f'<|open|>argument key="{key}" type="{kind}"<|sep|>{text}<|close|>argument<|sep|>'


def xml_turn(style: str, i: int, j: int) -> str:
    def call(k: int, limit: int) -> str:
        args = {f"query_{k}": "weather in Paris, tomorrow", "limit": limit, "mode": "fast",
                "filters": {"tag": "news", "after": "2026-01-31"}, "fields": ["title", "url"]}
        return XML_BEGIN.format(name=f"tool_{k}") + "\n".join(xml_member(style, key, v) for key, v in args.items()) + XML_END
    return (f"I will look this up with two tools, then summarize what they return for you.\n{call(i, 5)}\n{call(j, 12)}\n"
            "Both calls are on their way; the answer follows once they return.")


def xml_classes(text: str, ids: list[int], vocab: corral.Vocabulary) -> list[str]:
    spans, pos = [], 0
    while (start := text.find("<tool_call>", pos)) >= 0:
        args = text.index(">\n", text.index("<function=", start)) + 2
        close = text.index(XML_END, args)
        spans += [(start, args, "trigger"), (args, close, "arguments")]
        pos = close
    out, offset, raw = [], 0, text.encode()
    for t in ids:
        char_offset = len(raw[:offset].decode(errors="ignore"))
        out.append(next((c for a, b, c in spans if a <= char_offset < b), "free text"))
        offset += len(vocab.token_bytes(t))
    return out


def xml_styles(e: Engines) -> dict:
    """Per style: compile (1, 10, 50 tools) and masks along 4 turns (10 tools), corral
    and XGrammar, the masks compared at every step."""
    out: dict = {}
    for style in XML_STYLES:
        row: dict = {"compile": {}}
        for n in TOOL_COUNTS:
            spec = xml_spec(make_tools(n, plain_strings=style == "minimax_m3_xml"), style)
            times = {name: statistics.median(fn(spec)[0] / 1e6 for _ in range(3)) for name, fn in (("corral", e.corral), ("xgrammar", e.xgrammar))}
            row["compile"][str(n)] = times
        spec = xml_spec(make_tools(10, plain_strings=style == "minimax_m3_xml"), style)
        makers = {"corral": lambda spec=spec: e.corral(spec)[1], "xgrammar": lambda spec=spec: e.xgrammar(spec)[1]}
        turns = []
        for i in range(4):
            text = xml_turn(style, i, (i + 3) % 10)
            ids = e.tok.encode(text, add_special_tokens=False).ids
            assert e.vocab.decode_bytes(ids) == text.encode(), style
            turns.append((ids, xml_classes(text, ids, e.vocab)))
        times, masks = timed_replays(e, makers, turns)
        row["differing_steps"] = sum(
            int(not np.array_equal(*(np.unpackbits(p.view(np.uint8), bitorder="little")[: e.cmp] for p in pair)))
            for pair in zip(masks["corral"], masks["xgrammar"], strict=True))
        row["steps"] = len(masks["corral"])
        for eng, by in times.items():
            row[eng] = {c: {"median_us": statistics.median(v), "max_us": max(v)} for c, v in by.items()}
        out[style] = row
        c, x = row["corral"], row["xgrammar"]
        print(f"{style}: compile 50 tools corral {row['compile']['50']['corral']:.1f} ms, xgrammar {row['compile']['50']['xgrammar']:.1f} ms; "
              f"argument median corral {c['arguments']['median_us']:.1f} µs, xgrammar {x['arguments']['median_us']:.1f} µs; "
              f"max corral {max(v['max_us'] for v in c.values()):.0f} µs", flush=True)
    return out


def xml_report(res: dict) -> list[str]:
    lines = ["", "## XML styles of arguments (the same description, XGrammar's `style`)", "",
             "Compile, median of 3, ms; masks along 4 turns (10 tools), µs.", "",
             "| style | compile 1 (corral / xgr) | compile 10 | compile 50 | free text median | trigger median | arguments median (corral / xgr) | corral max | xgr max | steps differing |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for style, row in res.items():
        comp = " | ".join(f"{row['compile'][n]['corral']:.1f} / {row['compile'][n]['xgrammar']:.1f}" for n in ("1", "10", "50"))
        c, x = row["corral"], row["xgrammar"]
        med = lambda d, k: f"{d[k]['median_us']:.1f}" if k in d else "-"  # noqa: E731
        cells = " | ".join(f"{med(c, k)} / {med(x, k)}" for k in ("free text", "trigger", "arguments"))
        lines.append(f"| {style} | {comp} | {cells} | {max(v['max_us'] for v in c.values()):.0f} | "
                     f"{max(v['max_us'] for v in x.values()):.0f} | {row['differing_steps']} of {row['steps']} |")
    return lines


def report(res: dict) -> str:
    lines = ["# Tool calls: corral vs XGrammar structural tags and llguidance Lark", "",
             f"{res['machine'].get('cpu_model', '?')}, single thread, DeepSeek vocabulary ({res['vocab_size']:,} ids); "
             f"corral git {res['machine'].get('corral_build', {}).get('git_head', '?')}, "
             f"xgrammar {package_version('xgrammar')}, llguidance {package_version('llguidance')}.", "",
             "## Compile (description -> first mask), median of 5, ms", "",
             "| tools | corral | xgrammar | llguidance | corral / xgrammar | corral / llguidance |", "|---:|---:|---:|---:|---:|---:|"]
    for n, row in res["compile"].items():
        lines.append(f"| {n} | {row['corral']['median_ms']:.2f} | {row['xgrammar']['median_ms']:.2f} | {row['llguidance']['median_ms']:.2f} "
                     f"| {row['ratio']:.3f} | {row['ratio_llguidance']:.2f} |")
    w = res["walk"]
    engines = ("corral", "xgrammar", "llguidance")
    lines += ["", f"## Masks while forcing 10 agent turns (10 tools), µs ({w['steps']} steps)", "",
              "| where | steps | " + " | ".join(f"{g} median | {g} p99 | {g} max" for g in engines) + " |",
              "|---|---:|" + "---:|" * 9]
    for c in ("free text", "trigger", "arguments"):
        rows = [w[g].get(c) for g in engines]
        if all(rows):
            cells = " | ".join(f"{r['median_us']:.1f} | {r['p99_us']:.1f} | {r['max_us']:.0f}" for r in rows)
            lines.append(f"| {c} | {rows[0]['steps']} | {cells} |")
    for peer in ("xgrammar", "llguidance"):
        d = w[f"differ_{peer}"]
        lines += ["", f"Masks differing from {peer}'s: {d['steps_whose_masks_differ']} of {w['steps']} steps; "
                  + "; ".join(f"only {side} allows " + ", ".join(f"{n:,} {c}" for c, n in sorted(by.items()))
                              for side, by in d["tokens_only_allowed_by"].items() if by) + "."]
    lines += ["", "Why they differ: see bench/README.md (tool calls)."]
    if "xml" in res:
        lines += xml_report(res["xml"])
    if "budget" in res:
        lines += budget_report(res["budget"])
    return "\n".join(lines) + "\n"


BUDGET = 160
REASONING = ("The user wants the weather in Paris tomorrow and a short summary of the news. "
             "I should call the search tool twice: once for the forecast, once for the headlines, "
             "then write a short answer that cites both results. ") * 2


def budget_turns(e: Engines) -> list[tuple[list[int], list[str], int]]:
    """Reasoning in `<think>` (about 100 tokens), then a Hermes turn; per step, where it
    is (`reasoning`, then the classes of ``classes``), and the reasoning's token count."""
    out = []
    for i in range(4):
        text = f"<think>{REASONING}</think>{turn(i, (i + 3) % 10)}"
        ids = e.tok.encode(text, add_special_tokens=False).ids
        assert e.vocab.decode_bytes(ids) == text.encode()
        end = text.index("</think>") + len("</think>")
        cls = classes(text, ids, e.vocab)
        pos, inside = 0, 0
        for k, t in enumerate(ids):
            if pos < end:
                cls[k] = "reasoning"
                inside += 1
            pos += len(e.vocab.token_bytes(t))
        out.append((ids, cls, inside))
    return out


def budgets(e: Engines) -> dict:
    """Masks along 4 turns with reasoning before the calls (10 tools): corral without a
    budget, corral and XGrammar with ``max_tokens`` on the reasoning (a budget the turns
    stay within), the budgeted masks compared at every step."""
    tools = make_tools(10)
    plain = tool_calls_spec(tools, format="hermes", reasoning=True)
    budgeted = tool_calls_spec(tools, format="hermes", reasoning=True, reasoning_budget=BUDGET)
    makers = {"corral": lambda: e.corral(plain)[1], "corral budget": lambda: e.corral(budgeted)[1],
              "xgrammar budget": lambda: e.xgrammar(budgeted)[1]}
    turns = budget_turns(e)
    assert all(inside <= BUDGET for _, _, inside in turns)
    times, masks = timed_replays(e, makers, [(ids, cls) for ids, cls, _ in turns])
    differ = sum(
        int(not np.array_equal(*(np.unpackbits(p.view(np.uint8), bitorder="little")[: e.cmp] for p in pair)))
        for pair in zip(masks["corral budget"], masks["xgrammar budget"], strict=True))
    out: dict = {"budget": BUDGET, "steps": len(masks["corral"]), "reasoning_tokens": [n for _, _, n in turns],
                 "differing_steps_budgeted": differ}
    for eng, by in times.items():
        out[eng] = {c: {"median_us": statistics.median(v), "max_us": max(v)} for c, v in by.items()}
    return out


def budget_report(res: dict) -> list[str]:
    engines = ("corral", "corral budget", "xgrammar budget")
    lines = ["", f"## A reasoning budget (`max_tokens: {res['budget']}` on the `<think>` text)", "",
             f"Masks along 4 turns ({res['steps']} steps; reasoning of {res['reasoning_tokens'][0]} tokens), "
             "median / max, µs.", "",
             "| where | " + " | ".join(engines) + " |", "|---|" + "---:|" * len(engines)]
    for c in ("reasoning", "free text", "trigger", "arguments"):
        cells = " | ".join(f"{res[g][c]['median_us']:.1f} / {res[g][c]['max_us']:.0f}" if c in res[g] else "-" for g in engines)
        lines.append(f"| {c} | {cells} |")
    lines += ["", f"Budgeted masks differing between corral and XGrammar: {res['differing_steps_budgeted']} of {res['steps']} steps."]
    return lines


def package_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def write_part(out: str, name: str, data: dict, lines: list[str]) -> None:
    """Writes one part's results as `name`.json and `name`.md under `out`, and prints the table."""
    md = "\n".join(lines) + "\n"
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(data, f, indent=1)
    with open(os.path.join(out, f"{name}.md"), "w") as f:
        f.write(md)
    print(md)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--xml-only", action="store_true", help="only the XML styles of arguments (-> tools_xml.md)")
    ap.add_argument("--budget-only", action="store_true", help="only the reasoning budget in tokens (-> tools_budget.md)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warm = corral.compile(corral.Grammar.regex("a"), corral.Vocabulary.from_token_bytes([b"a"], eos_token_ids=[0]))
    del warm
    e = Engines()
    os.makedirs(args.out, exist_ok=True)
    head = f"{machine_info('full').get('cpu_model', '?')}, single thread, DeepSeek vocabulary ({e.vocab.size:,} ids), xgrammar {package_version('xgrammar')}."
    if args.budget_only:
        res = budgets(e)
        write_part(args.out, "tools_budget", res, ["# A reasoning budget in tokens: corral vs XGrammar", "", head] + budget_report(res))
        return
    if args.xml_only:
        xml = xml_styles(e)
        write_part(args.out, "tools_xml", xml, ["# Tool-call arguments as XML: corral vs XGrammar", "", head] + xml_report(xml))
        return
    res = {"machine": machine_info("full"), "vocab_size": e.vocab.size, "compile": compile_times(e), "walk": walk(e), "xml": xml_styles(e), "budget": budgets(e)}
    with open(os.path.join(args.out, "tools.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = report(res)
    with open(os.path.join(args.out, "tools.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
