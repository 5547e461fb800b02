#!/usr/bin/env python
"""What keeping array items distinct (``uniqueItems``) costs per mask (corral only).

    python bench/bench_unique_items.py            # -> bench/results/unique_items.md, .json
    python bench/bench_unique_items.py --out DIR

Each case is a schema with ``uniqueItems: true`` and the same schema without it: for
strings the matcher keeps the items distinct at run time (the check of object keys, which
``crates/corral-core/src/grammar/distinct_keys.rs`` describes); for items of any other
kind it compares each item, where it closes, with the earlier ones as JSON values; for
items from a finite set the grammar names each value once (a ``perm!`` list). A document with an array of 50
distinct items is tokenized on the DeepSeek vocabulary (129,280 ids) and walked through
both grammars, five walks each, alternately in one process (so machine noise hits both),
with every ``fill_bitmask`` timed on its own. Single-threaded. The table gives the median
and p99 per mask, their differences, and the slowest mask of each build.
"""

from __future__ import annotations

import json
import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")

import corral  # noqa: E402
from mask_timing import compare_rows, setup, stamp, write_results  # noqa: E402

WORDS = [f"item-{i:02d}" for i in range(50)]
STRINGS = {"type": "array", "uniqueItems": True, "items": {"type": "string"}}
SERVICE = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}, "tls": {"type": "boolean"}},
    "required": ["name", "port"],
    "additionalProperties": False,
}
# name: (the schema with its uniqueItems, a document); the schema without them is the same
# with every `uniqueItems` removed.
CASES = {
    "50 free strings (matcher check)": (STRINGS, WORDS),
    "50 strings of a pattern (half-written items checked too)": (
        {**STRINGS, "items": {"type": "string", "pattern": "^item-[0-9]+$"}},
        WORDS,
    ),
    "50 strings inside objects, one array per object (matcher check)": (
        {"type": "array", "items": {"type": "object", "properties": {"tags": STRINGS}, "required": ["tags"]}},
        [{"tags": WORDS[i : i + 5]} for i in range(0, 50, 5)],
    ),
    "50 of an enum of 60 (perm! list)": (
        {**STRINGS, "items": {"enum": [f"item-{i:02d}" for i in range(60)]}},
        WORDS,
    ),
    "50 integers (values compared by the matcher)": (
        {"type": "array", "uniqueItems": True, "items": {"type": "integer"}},
        [i * 37 % 1000 for i in range(50)],
    ),
    "50 objects (values compared by the matcher)": (
        {"type": "array", "uniqueItems": True, "items": SERVICE},
        [{"name": f"svc-{i % 7}", "port": 8000 + i, "tls": i % 2 == 0} for i in range(50)],
    ),
    "10 arrays of 5 numbers (values compared by the matcher)": (
        {"type": "array", "uniqueItems": True, "items": {"type": "array", "items": {"type": "number"}}},
        [[i, i + 0.5, 2 * i, -i, 7] for i in range(10)],
    ),
}
REPEATS = 5


def without_unique(schema: dict) -> dict:
    """`schema` with every `uniqueItems` removed."""
    if isinstance(schema, dict):
        return {k: without_unique(v) for k, v in schema.items() if k != "uniqueItems"}
    if isinstance(schema, list):
        return [without_unique(v) for v in schema]
    return schema


def main() -> None:
    out, tok, vocab, width = setup(__doc__)
    lines = [
        "# uniqueItems: cost per mask",
        "",
        stamp(vocab, f"every mask timed, {REPEATS} walks per build, one thread"),
        "",
        "| document | tokens | without uniqueItems: median / p99 µs | with it: median / p99 µs | median / p99 added, µs | slowest mask without / with, µs |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    cases = (
        (
            name,
            corral.compile(corral.Grammar.json_schema(without_unique(schema)), vocab, cache=False),
            corral.compile(corral.Grammar.json_schema(schema), vocab, cache=False),
            tok.encode(json.dumps(doc, separators=(",", ":"))),
        )
        for name, (schema, doc) in CASES.items()
    )
    rows, raw = compare_rows(cases, width, REPEATS)
    write_results(out, "unique_items", lines + rows, raw)


if __name__ == "__main__":
    main()
