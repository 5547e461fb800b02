#!/usr/bin/env python
"""What checking ``format: "regex"`` costs per mask (corral only: llguidance refuses the
format, "Unknown format: regex"; XGrammar drops it and allows any string).

    python bench/bench_regex_format.py            # -> bench/results/regex_format.md, .json
    python bench/bench_regex_format.py --out DIR

The regular expressions are real ones: every distinct ``pattern`` of the JSON Schema Store
schemas in ``bench/json_schemas/store`` that is an ECMAScript regular expression (as the
check reads them; the others are left out), in sorted order, cut into documents of 25.
Each document is an array of those strings, tokenized on the DeepSeek vocabulary (129,280
ids) and walked through two grammars, alternately in one process (so machine noise hits
both): ``{"type": "array", "items": {"type": "string", "format": "regex"}}`` and the same
without ``format``. Every ``fill_bitmask`` is timed on its own; one thread. The whole
measurement runs twice (``--runs``), each with both grammars compiled afresh, so the
spread between runs shows the machine's noise; a last line ("again") walks the last
run's grammars once more, with every pattern state's refused tokens already kept.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import corral  # noqa: E402
from mask_timing import deepseek, walk_times  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PER_DOCUMENT = 25
CHECKED = {"type": "array", "items": {"type": "string", "format": "regex"}}
PLAIN = {"type": "array", "items": {"type": "string"}}


def store_patterns() -> list[str]:
    """Every distinct `pattern` string of the Store schemas, sorted."""
    found: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            if isinstance(x.get("pattern"), str):
                found.add(x["pattern"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for path in sorted((REPO / "bench" / "json_schemas" / "store").glob("*.json")):
        walk(json.loads(path.read_text(encoding="utf-8")))
    return sorted(found)


def pct(times: list, q: float) -> float:
    return times[min(len(times) - 1, int(len(times) * q))] / 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    tok = deepseek()
    vocab = tok.vocab
    width = (vocab.size + 31) // 32
    t0 = time.perf_counter()
    checked = corral.compile(corral.Grammar.json_schema(CHECKED), vocab, cache=False)
    compile_checked = time.perf_counter() - t0
    t0 = time.perf_counter()
    plain = corral.compile(corral.Grammar.json_schema(PLAIN), vocab, cache=False)
    compile_plain = time.perf_counter() - t0
    patterns = store_patterns()
    valid = [p for p in patterns if checked.matches(json.dumps([p], ensure_ascii=False, separators=(",", ":")).encode())]
    docs = [valid[i : i + PER_DOCUMENT] for i in range(0, len(valid), PER_DOCUMENT)]
    ids = [tok.encode(json.dumps(d, ensure_ascii=False, separators=(",", ":"))) for d in docs]
    lines = [
        '# format: "regex": cost per mask',
        "",
        f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} · DeepSeek vocabulary, {vocab.size:,} ids · load average "
        f"{os.getloadavg()[0]:.1f} at start · every mask timed, one thread",
        "",
        f"{len(valid)} of the {len(patterns)} distinct `pattern` strings of the Store schemas are ECMAScript regular "
        f"expressions; {len(docs)} documents of up to {PER_DOCUMENT}, {sum(map(len, ids)):,} tokens. Compile (schema to "
        f"compiled grammar): {compile_plain * 1000:.1f} ms without the format, {compile_checked * 1000:.1f} ms with it.",
        "",
        "| run | masks | without format: median / p99 / max µs | with format: median / p99 / max µs | median added, µs | masks over 1 ms with |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    raw = []
    # Each run compiles both grammars afresh (the masks of pattern states are kept per
    # compiled grammar: a run starts with none); the last line walks the last run's
    # grammars again, every state met already.
    for run in [*range(1, args.runs + 1), "again"]:
        if run != "again":
            checked = corral.compile(corral.Grammar.json_schema(CHECKED), vocab, cache=False)
            plain = corral.compile(corral.Grammar.json_schema(PLAIN), vocab, cache=False)
        without, with_check = [], []
        for doc_ids in ids:  # alternately, one document at a time
            without += walk_times(plain, doc_ids, width, 1)
            with_check += walk_times(checked, doc_ids, width, 1)
        without.sort()
        with_check.sort()
        a, c = pct(without, 0.5), pct(with_check, 0.5)
        lines.append(
            f"| {run} | {len(with_check):,} | {a:.1f} / {pct(without, 0.99):.0f} / {without[-1] / 1000:.0f} | "
            f"{c:.1f} / {pct(with_check, 0.99):.0f} / {with_check[-1] / 1000:.0f} | {c - a:+.1f} | "
            f"{sum(t > 1_000_000 for t in with_check)} |"
        )
        raw.append({"run": run, "without_ns": without, "with_ns": with_check})
    text = "\n".join(lines) + "\n"
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "regex_format.md").write_text(text)
    (out / "regex_format.json").write_text(json.dumps({"patterns": len(patterns), "valid": len(valid), "runs": raw}))


if __name__ == "__main__":
    main()
