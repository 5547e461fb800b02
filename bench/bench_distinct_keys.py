#!/usr/bin/env python
"""What the distinct-keys check costs per mask (corral only).

    python bench/bench_distinct_keys.py            # -> bench/results/distinct_keys.md
    python bench/bench_distinct_keys.py --out DIR

A grammar from ``Grammar.json_schema`` keeps every JSON object's keys distinct with a
run-time check beside the parser (``json_keys`` in corral-core). This script compiles the
same grammar text twice on the DeepSeek vocabulary (129,280 ids), with the check (as
``Grammar.json_schema`` does) and without it (the native grammar built from the same text),
walks a tokenized document through each five times, and times every ``fill_bitmask`` call
on its own. Single-threaded; the two builds run alternately in one process, so machine
noise hits both. Schemas are read with ``spec_exact=True`` so that both builds have the
same language apart from repeated keys.
"""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")


import corral  # noqa: E402
from corral import _core  # noqa: E402
from mask_timing import median_p99_us, setup, walk_times, write_results  # noqa: E402

CASES = {
    "dict of 30 keys `key0`..`key29` (additionalProperties)": (
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {f"key{i}": i for i in range(30)},
    ),
    "person (named keys; open: spec_exact)": (
        {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["name", "age"]},
        {"name": "Ann Lee", "age": 31, "tags": ["a", "bb", "ccc"]},
    ),
    "nested dicts (6 × 5 keys)": (
        {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": {"type": "string"}}},
        {f"k{i}": {f"s{j}": "v" * j for j in range(5)} for i in range(6)},
    ),
    "patternProperties `^k` (half-written keys checked too)": (
        {"type": "object", "patternProperties": {"^k": {"type": "integer"}}, "additionalProperties": False},
        {f"key{i}": i for i in range(30)},
    ),
}
REPEATS = 5


def main() -> None:
    out, tok, vocab, width = setup(__doc__)
    lines = [
        "# Distinct object keys: cost per mask",
        "",
        f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} · corral {corral.__version__ if hasattr(corral, '__version__') else ''} · DeepSeek vocabulary, {vocab.size:,} ids · "
        f"load average {os.getloadavg()[0]:.1f} at start · every mask timed, {REPEATS} walks per build",
        "",
        "| document | tokens | without the check: median / p99 µs | with it: median / p99 µs |",
        "|---|---:|---:|---:|",
    ]
    raw = {}
    for name, (schema, doc) in CASES.items():
        grammar = corral.Grammar.json_schema(schema, spec_exact=True)
        plain = grammar._inner._without_distinct_keys()
        ids = tok.encode(json.dumps(doc, separators=(",", ":")))
        without = walk_times(_core.compile(plain, vocab._inner, None, False), ids, width, REPEATS)
        with_check = walk_times(corral.compile(grammar, vocab, cache=False), ids, width, REPEATS)
        (a, b), (c, d) = median_p99_us(without), median_p99_us(with_check)
        lines.append(f"| {name} | {len(ids)} | {a:.1f} / {b:.0f} | {c:.1f} / {d:.0f} |")
        raw[name] = {"tokens": len(ids), "without_ns": without, "with_ns": with_check}
    write_results(out, "distinct_keys", lines, raw)


if __name__ == "__main__":
    main()
