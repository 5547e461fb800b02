#!/usr/bin/env python
"""Properties in any order vs in the schema's order: compile time and cost per mask.

    python bench/bench_property_order.py            # -> bench/results/property_order.md
    python bench/bench_property_order.py --out DIR

For objects of 10, 50 and 200 optional properties (integers, strings and booleans, no
other keys), ``Grammar.json_schema`` builds the grammar with ``property_order="schema"``
and with ``property_order="any"`` (a ``perm!`` list whose parser items carry the keys
seen). Compile time is schema → compiled grammar on the DeepSeek vocabulary (129,280 ids,
no cache), the median of 3. Masks: an object with every property, in the schema's order
(which both grammars accept), is walked token by token and every ``fill_bitmask`` call is
timed; for ``any`` the same object with its keys shuffled is walked too. Each measurement
is made twice in the same run (``run 1``, ``run 2``) to show the machine's noise.
Single-threaded. A schema-order grammar that is regular as a whole (small objects of
scalar values) is matched by one DFA (``engine``: DFA); an ``any`` grammar never is (its
``perm!`` is not regular), so it always runs on the parser.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time

os.environ.setdefault("RAYON_NUM_THREADS", "1")


import corral  # noqa: E402
from mask_timing import median_p99_us, setup, walk_times, write_results  # noqa: E402

SIZES = (10, 50, 200)
REPEATS = 3


def schema_of(n: int) -> dict:
    types = ({"type": "integer"}, {"type": "string"}, {"type": "boolean"})
    return {"type": "object", "properties": {f"field_{i}": types[i % 3] for i in range(n)}, "additionalProperties": False}


def document(n: int, shuffled: bool) -> str:
    values = (7, "some text", True)
    keys = [f"field_{i}" for i in range(n)]
    if shuffled:
        random.Random(n).shuffle(keys)
    return json.dumps({k: values[int(k.split("_")[1]) % 3] for k in keys}, separators=(",", ":"))


def compile_ms(schema: dict, order: str, vocab) -> float:
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        corral.compile(corral.Grammar.json_schema(schema, property_order=order), vocab, cache=False)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def mask_us(compiled, ids, width) -> tuple:
    return median_p99_us(walk_times(compiled, ids, width, REPEATS))


def main() -> None:
    out, tok, vocab, width = setup(__doc__)
    rows = []
    raw: dict = {}
    for n in SIZES:
        schema = schema_of(n)
        ordered = tok.encode(document(n, False))
        shuffled = tok.encode(document(n, True))
        compiled = {o: corral.compile(corral.Grammar.json_schema(schema, property_order=o), vocab, cache=False) for o in ("schema", "any")}
        for run in (1, 2):
            c_schema, c_any = compile_ms(schema, "schema", vocab), compile_ms(schema, "any", vocab)
            m_schema = mask_us(compiled["schema"], ordered, width)
            m_any = mask_us(compiled["any"], ordered, width)
            m_any_shuffled = mask_us(compiled["any"], shuffled, width)
            engine = "DFA" if "states=0 " not in repr(compiled["schema"]) else "parser"
            rows.append((n, run, len(ordered), engine, c_schema, c_any, m_schema, m_any, m_any_shuffled))
            raw[f"{n}/{run}"] = {"compile_ms": {"schema": c_schema, "any": c_any}, "mask_us": {"schema": m_schema, "any": m_any, "any_shuffled": m_any_shuffled}}
    lines = [
        "# Property order: `any` (perm! list) vs `schema`",
        "",
        f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} · DeepSeek vocabulary, {vocab.size:,} ids · single-threaded · "
        f"load average {os.getloadavg()[0]:.1f} at start · compile: median of {REPEATS}; masks: every call over {REPEATS} walks",
        "",
        "| properties | run | tokens | schema order's engine | compile ms: schema / any (ratio) | mask µs median: schema / any (ratio) | mask µs p99: schema / any (ratio) | any, keys shuffled: median / p99 µs |",
        "|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for n, run, k, engine, cs, ca, ms, ma, mas in rows:
        lines.append(
            f"| {n} | {run} | {k} | {engine} | {cs:.1f} / {ca:.1f} ({ca / cs:.2f}×) | {ms[0]:.1f} / {ma[0]:.1f} ({ma[0] / ms[0]:.2f}×) | "
            f"{ms[1]:.0f} / {ma[1]:.0f} ({ma[1] / ms[1]:.2f}×) | {mas[0]:.1f} / {mas[1]:.0f} |"
        )
    write_results(out, "property_order", lines, raw, indent=1)


if __name__ == "__main__":
    main()
