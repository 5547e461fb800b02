"""First visits: corral's mask times along the first walk of fresh compiles, where every
mask of a state not seen before is built rather than read from the cache.

The workload is bench_serving.py's (the schemas of `bench/json_schemas` with their
instances, and tool calls inside a structural tag), compiled with the SGLang backend's
options (flexible whitespace, at most 16, the masks into each terminal warmed up after the
compile as the backend does; ``--no-warm`` leaves that out), on the DeepSeek vocabulary, one
thread. Each run compiles every request afresh (no cache), walks each of its documents once and times
every ``fill_bitmask``; a step's time is its median over the runs. Reported: the steps'
median and p99, how many steps take over 0.3, 0.5 and 1 ms, their total, and the slowest
steps with the text before them::

    python bench/bench_first_visits.py            # -> bench/results/first_visits.md, .json
    python bench/bench_first_visits.py --runs 5
    python bench/bench_first_visits.py --skip 0,2,3,4,6,1.0,1.1,1.2,5.1,5.2   # what bench_serving measures

(``--skip`` leaves out requests and documents as bench_serving.py does: the ones a peer
refuses, which bench_serving prints.)

Pin it to one core (``taskset -c 0``) and compare two builds by running it under each;
the machines are noisy, so interleave the runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import bench_serving  # noqa: E402  (the workload and tokenizer are bench_serving's)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "results" / "first_visits"))
    ap.add_argument("--skip", default="", help="requests (3) and documents (1.2) to leave out, comma-separated")
    ap.add_argument("--no-warm", action="store_true", help="leave out warm_up() after each compile (the SGLang backend calls it)")
    args = ap.parse_args()
    skip = {x for x in args.skip.split(",") if x}
    import corral

    corral.set_num_threads(1)
    tok = bench_serving._tokenizer()
    vocab = corral.Vocabulary.from_huggingface(tok, eos_token_ids=[tok.eos_token_id], size=len(tok))
    work = bench_serving._workload()
    words = (len(tok) + 31) // 32
    steps: dict[tuple[int, int, int], list[float]] = {}
    before: dict[tuple[int, int, int], str] = {}
    for _ in range(args.runs):
        for i, (key, docs) in enumerate(work):
            if str(i) in skip:
                continue
            spec = json.loads(key[1])
            if key[0] == "json":
                grammar = corral.Grammar.json_schema(spec, whitespace="flexible", max_whitespace=16)
            else:
                grammar = corral.Grammar.structural_tag(spec)
            compiled = corral.compile(grammar, vocab, cache=False)
            if not args.no_warm:
                compiled.warm_up()
            mask = np.zeros((1, words), dtype=np.int32)
            for j, doc in enumerate(docs):
                if f"{i}.{j}" in skip:
                    continue
                ids = tok.encode(doc, add_special_tokens=False) + [tok.eos_token_id]
                m = compiled.matcher()
                for k, t in enumerate(ids):
                    start = time.perf_counter_ns()
                    m.fill_bitmask(mask, 0)
                    steps.setdefault((i, j, k), []).append((time.perf_counter_ns() - start) / 1e3)
                    before.setdefault((i, j, k), tok.decode(ids[max(0, k - 3) : k]))
                    if not m.advance(t):
                        raise SystemExit(f"request {i} document {j}: token {k} refused")
    med = {key: float(np.median(v)) for key, v in steps.items()}
    x = np.array(list(med.values()))
    summary = {
        "runs": args.runs,
        "steps": len(x),
        "median_us": float(np.median(x)),
        "p99_us": float(np.percentile(x, 99)),
        "over_0.3ms": int((x > 300).sum()),
        "over_0.5ms": int((x > 500).sum()),
        "over_1ms": int((x > 1000).sum()),
        "total_ms": float(x.sum() / 1e3),
    }
    slow = sorted(med.items(), key=lambda kv: -kv[1])[:15]
    lines = [
        f"First walks of fresh compiles, bench_serving's workload, DeepSeek vocabulary, 1 thread; per-step medians of {args.runs} runs",
        "",
        "| steps | median (µs) | p99 (µs) | over 0.3 ms | over 0.5 ms | over 1 ms | total (ms) |",
        "|---|---|---|---|---|---|---|",
        f"| {summary['steps']} | {summary['median_us']:.1f} | {summary['p99_us']:.1f} | {summary['over_0.3ms']} | "
        f"{summary['over_0.5ms']} | {summary['over_1ms']} | {summary['total_ms']:.1f} |",
        "",
        "Slowest steps (request.document.step, µs, the text before):",
        "",
        *[f"* {a}.{b}.{c}: {v:.0f} after {before[(a, b, c)]!r}" for (a, b, c), v in slow],
    ]
    print("\n".join(lines))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"summary": summary, "slowest": [[list(k), v] for k, v in slow]}, indent=1))
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
