#!/usr/bin/env python
"""Tool-call benchmark: corral's ``Grammar.tool_calls`` against XGrammar's structural tags,
the same description, on one vocabulary (DeepSeek's tokenizer.json), single-threaded.

    python bench/bench_tools.py              # -> bench/results/tools.md, tools.json
    python bench/bench_tools.py --out DIR    # write somewhere else

1. compile, for 1, 10 and 50 tools: the description (``corral.tools.tool_calls_spec``, Hermes
   format, tool_choice auto) -> compiled grammar -> matcher -> first mask, fresh and
   uncached every repetition (corral ``cache=False``, ``GrammarCompiler(cache_enabled=
   False)``); the median of 5;
2. masks: an agent turn (free text, two calls, free text) tokenized by the tokenizer, forced
   through token by token on one compiled grammar per engine (10 tools); every mask-fill
   call timed on its own, and classed by where the step is: free text, the tokens that
   write a call's opening marker (``<tool_call>...`` up to the arguments), or inside the
   arguments. Each peer's mask is compared with corral's at every step, outside the timing.

llguidance has no structural tags (its Lark grammars with ``%json`` can say the same, but
not from this description), so it is not in this run. The JSON arguments are read with
flexible whitespace by both engines (XGrammar's structural tags always allow it).
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


def make_tools(n: int) -> list[dict]:
    """`n` tools with realistic parameters: strings, bounded integers, enums, a nested
    object and an array, some required."""
    tools = []
    for i in range(n):
        params = {
            "type": "object",
            "properties": {
                f"query_{i}": {"type": "string", "maxLength": 64},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "mode": {"enum": ["fast", "full", f"custom_{i}"]},
                "filters": {"type": "object", "properties": {"tag": {"type": "string"}, "after": {"type": "string", "format": "date"}}},
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
        self.tok = tokenizers.Tokenizer.from_file(TOKENIZER_JSON)
        self.cmp = min(self.vocab.size, self.ti.vocab_size)

    def corral(self, spec):
        t0 = ns()
        compiled = corral.compile(corral.Grammar.structural_tag(spec), self.vocab, cache=False)
        m = compiled.matcher()
        bm = corral.allocate_bitmask(1, self.vocab.size)
        m.fill_bitmask(bm, 0)
        return ns() - t0, compiled

    def xgrammar(self, spec):
        t0 = ns()
        compiler = xgrammar.GrammarCompiler(self.ti, max_threads=1, cache_enabled=False)
        compiled = compiler.compile_structural_tag(json.dumps(spec))
        m = xgrammar.GrammarMatcher(compiled)
        bm = xgrammar.allocate_token_bitmask(1, self.ti.vocab_size)
        m.fill_next_token_bitmask(bm)
        return ns() - t0, compiled


def compile_times(e: Engines) -> dict:
    out = {}
    for n in TOOL_COUNTS:
        spec = tool_calls_spec(make_tools(n), format="hermes")
        row = {}
        for name, fn in (("corral", e.corral), ("xgrammar", e.xgrammar)):
            times = [fn(spec)[0] / 1e6 for _ in range(COMPILE_REPS)]
            row[name] = {"median_ms": statistics.median(times), "min_ms": min(times)}
        row["ratio"] = row["corral"]["median_ms"] / row["xgrammar"]["median_ms"]
        out[str(n)] = row
        print(f"compile {n:>2} tools: corral {row['corral']['median_ms']:.2f} ms, xgrammar {row['xgrammar']['median_ms']:.2f} ms", flush=True)
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


def walk(e: Engines) -> dict:
    spec = tool_calls_spec(make_tools(10), format="hermes")
    _, cc = e.corral(spec)
    _, xc = e.xgrammar(spec)
    texts = [turn(i, (i + 3) % 10) for i in range(10)]
    times = {"corral": {}, "xgrammar": {}}
    differ = steps = 0
    only = {"corral": {}, "xgrammar": {}}  # token class -> count, summed over steps
    for text in texts:
        ids = e.tok.encode(text, add_special_tokens=False).ids
        assert e.vocab.decode_bytes(ids) == text.encode()
        cls = classes(text, ids, e.vocab)
        cm = cc.matcher()
        xm = xgrammar.GrammarMatcher(xc)
        cbm = corral.allocate_bitmask(1, e.vocab.size)
        xbm = xgrammar.allocate_token_bitmask(1, e.ti.vocab_size)
        for k, t in enumerate(ids):
            t0 = ns()
            cm.fill_bitmask(cbm, 0)
            t1 = ns()
            xm.fill_next_token_bitmask(xbm)
            t2 = ns()
            times["corral"].setdefault(cls[k], []).append((t1 - t0) / 1e3)
            times["xgrammar"].setdefault(cls[k], []).append((t2 - t1) / 1e3)
            a = np.unpackbits(cbm[0].view(np.uint8), bitorder="little")[: e.cmp]
            b = np.unpackbits(xbm.numpy()[0].view(np.uint8), bitorder="little")[: e.cmp]
            steps += 1
            differ += int(not np.array_equal(a, b))
            for side, ids_only in (("corral", np.flatnonzero(a & ~b)), ("xgrammar", np.flatnonzero(b & ~a))):
                for i in ids_only:
                    c = token_class(e.vocab, int(i))
                    only[side][c] = only[side].get(c, 0) + 1
            assert cm.advance(t), f"corral rejects token {k} of a valid turn"
            assert xm.accept_token(t), f"xgrammar rejects token {k} of a valid turn"
    out = {"steps": steps, "steps_whose_masks_differ": differ, "tokens_only_allowed_by": only}
    for eng, by in times.items():
        out[eng] = {}
        for c, v in by.items():
            v = sorted(v)
            out[eng][c] = {"steps": len(v), "median_us": statistics.median(v), "p99_us": v[min(len(v) - 1, int(0.99 * len(v)))], "max_us": v[-1]}
    return out


def report(res: dict) -> str:
    lines = ["# Tool calls: corral vs XGrammar structural tags", "",
             f"{res['machine'].get('cpu_model', '?')}, single thread, DeepSeek vocabulary ({res['vocab_size']:,} ids); "
             f"corral {corral.__version__ if hasattr(corral, '__version__') else ''} git {res['machine'].get('corral_build', {}).get('git_head', '?')}, "
             f"xgrammar {xgrammar_version()}.", "",
             "## Compile (description -> first mask), median of 5, ms", "",
             "| tools | corral | xgrammar | corral / xgrammar |", "|---:|---:|---:|---:|"]
    for n, row in res["compile"].items():
        lines.append(f"| {n} | {row['corral']['median_ms']:.2f} | {row['xgrammar']['median_ms']:.2f} | {row['ratio']:.2f} |")
    w = res["walk"]
    lines += ["", f"## Masks while forcing 10 agent turns (10 tools), µs ({w['steps']} steps; masks differing: {w['steps_whose_masks_differ']})", "",
              "| where | steps | corral median | corral p99 | corral max | xgrammar median | xgrammar p99 | xgrammar max |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for c in ("free text", "trigger", "arguments"):
        a, b = w["corral"].get(c), w["xgrammar"].get(c)
        if a and b:
            lines.append(f"| {c} | {a['steps']} | {a['median_us']:.1f} | {a['p99_us']:.1f} | {a['max_us']:.0f} | {b['median_us']:.1f} | {b['p99_us']:.1f} | {b['max_us']:.0f} |")
    lines += ["", "Where the masks differ (token ids, summed over steps): "
              + "; ".join(f"only {side} allows " + ", ".join(f"{n:,} {c}" for c, n in sorted(by.items())) for side, by in w["tokens_only_allowed_by"].items() if by)
              + ". corral reads free text as whole UTF-8 characters and never allows a special token that is not a marker; "
              "it allows tokens that end inside a string's escape (`x\\`, the escaped byte in the next token), which XGrammar refuses; "
              "XGrammar allows raw control characters (U+0000-U+001F) inside JSON strings, which JSON forbids; "
              "its JSON arguments may be preceded by up to 16 whitespace characters (XGrammar: none) and have runs of at most 16 (XGrammar: any)."]
    return "\n".join(lines) + "\n"


def xgrammar_version() -> str:
    from importlib.metadata import version

    return version("xgrammar")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    warm = corral.compile(corral.Grammar.regex("a"), corral.Vocabulary.from_token_bytes([b"a"], eos_token_ids=[0]))
    del warm
    e = Engines()
    res = {"machine": machine_info("full"), "vocab_size": e.vocab.size, "compile": compile_times(e), "walk": walk(e)}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tools.json"), "w") as f:
        json.dump(res, f, indent=1)
    md = report(res)
    with open(os.path.join(args.out, "tools.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
