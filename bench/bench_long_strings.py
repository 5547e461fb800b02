#!/usr/bin/env python
"""Long bounded strings with a format or a pattern: compile time and masks, corral vs
llguidance vs xgrammar vs outlines-core.

    python bench/bench_long_strings.py            # -> bench/results/long_strings.md, .json
    python bench/bench_long_strings.py --out DIR

Real schemas bound free-text fields that also carry a format or a pattern: a URL of at
most 2,083 characters, an e-mail address of at most 320, a base64 data URL of up to 1.4
million (`sigmacv` in bench/json_schemas/store). corral counts such a bound through the
pattern's automaton as one block of (character, pattern state) rows
(``automata::counted_product``), so the bound's size costs nothing at compile time. Each
case is ``{"v": <string>}`` with a document whose string runs close to its bound (or 6,000
characters for the longest bounds), tokenized on the DeepSeek vocabulary (129,280 ids), the
same options as bench_json.py (compact JSON, single-threaded). Per engine: the compile
(schema -> first mask, median of three fresh compiles in a forked child, killed past 120 s
or 8 GiB), then every mask along the document timed alone (median, p99 and the slowest,
over two walks), and whether the engine accepts a document one character past the bound
(it must not). Engines run in forked children of one process that loaded every vocabulary.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_json as bj  # noqa: E402
from bench_cfg import bit  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ENGINES = ["corral", "llguidance", "xgrammar", "outlines-core"]
SLUG = "^[a-z0-9]+(-[a-z0-9]+)*$"
DATA_URL = "^data:image\\/(jpeg|png|webp|gif);base64,[A-Za-z0-9+/]+={0,2}$"


def url(n: int) -> str:
    """An http URL of exactly n characters."""
    head = "https://example.com/a/"
    return head + "".join("abcdefghij/"[i % 11] for i in range(n - len(head)))


def slug(n: int) -> str:
    return "".join("abcde-"[i % 6] if i % 6 != 5 or i + 1 < n else "z" for i in range(n))


def data_url(n: int) -> str:
    head = "data:image/png;base64,"
    return head + "".join("QUJDRA"[i % 6] for i in range(n - len(head)))


# name: (string schema, a valid string near the bound, one past the bound)
CASES = {
    "format uri, maxLength 2083": ({"type": "string", "format": "uri", "maxLength": 2083}, url(2080), url(2084)),
    "format email, maxLength 320": (
        {"type": "string", "format": "email", "maxLength": 320},
        "a" * 64 + "@" + ".".join(["b" * 60] * 4) + "." + "c" * 7,
        "a" * 64 + "@" + ".".join(["b" * 60] * 4) + "." + "c" * 12,
    ),
    "format hostname, maxLength 253": (
        {"type": "string", "format": "hostname", "maxLength": 253},
        ".".join(["h" * 60] * 4) + "." + "x" * 8,
        ".".join(["h" * 60] * 4) + "." + "x" * 10,
    ),
    "pattern (slug), maxLength 65536": ({"type": "string", "pattern": SLUG, "maxLength": 65536}, slug(6000), None),
    "pattern (data URL), maxLength 1400000": ({"type": "string", "pattern": DATA_URL, "maxLength": 1400000}, data_url(6000), None),
    "pattern (slug), maxLength 1000, one past": ({"type": "string", "pattern": SLUG, "maxLength": 1000}, slug(998), slug(1001)),
}


def run_case(engine, setup, schema, ids, past_ids):
    """In a forked child: three fresh compiles, then two timed walks; one past the bound."""
    compiles = []
    runner = None
    for _ in range(3):
        t0 = time.perf_counter_ns()
        runner = bj.Runner(engine, setup, schema)
        compiles.append(time.perf_counter_ns() - t0)
    times = []
    for _ in range(2):
        runner.reset()
        for t in ids:
            t0 = time.perf_counter_ns()
            runner.fill(*runner.fargs)
            times.append(time.perf_counter_ns() - t0)
            if not runner.advance(t):
                return {"status": "refused the valid document"}
    runner.fill(*runner.fargs)
    accepts = bit(runner.row, setup.eos[0]) and runner.accepting()
    past = None
    if past_ids is not None:
        runner.reset()
        past = all(runner.advance(t) for t in past_ids)
        if past:
            runner.fill(*runner.fargs)
            past = bool(bit(runner.row, setup.eos[0]) and runner.accepting())
    times.sort()
    return {
        "status": "ok" if accepts else "valid document not accepted at its end",
        "compile_ms": statistics.median(compiles) / 1e6,
        "mask_median_us": statistics.median(times) / 1e3,
        "mask_p99_us": times[int(len(times) * 0.99)] / 1e3,
        "mask_max_us": times[-1] / 1e3,
        "masks": len(times),
        "accepts_past_bound": past,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--engines", default=",".join(ENGINES))
    args = ap.parse_args()
    engines = args.engines.split(",")
    setup = bj.Setup(lambda *a: None)
    results = {}
    for name, (string, text, past) in CASES.items():
        schema = {"type": "object", "properties": {"v": string}, "required": ["v"], "additionalProperties": False}
        doc = json.dumps({"v": text}, separators=(",", ":"))
        ids = setup.tok.encode(doc, add_special_tokens=False).ids
        past_ids = None if past is None else setup.tok.encode(json.dumps({"v": past}, separators=(",", ":")), add_special_tokens=False).ids
        results[name] = {"chars": len(text), "tokens": len(ids)}
        for e in engines:
            status = bj.run_forked(functools.partial(run_case, e, setup, schema, ids, past_ids), 120, 8 << 30)
            if status[0] == "ok":
                r = status[1]
            elif status[0] == "crashed":
                r = {"status": "refused: " + status[1].split("\n")[0][:160]}
            else:
                r = {"status": f"{status[0]} ({status[1]})"}
            results[name][e] = r
            print(f"{name:45} {e:14} {json.dumps(r)[:160]}", flush=True)
    write(results, engines, Path(args.out))


def cell(r):
    if r.get("status") != "ok":
        return r.get("status", "?")[:60]
    past = {None: "", True: " **accepts past the bound**", False: ""}[r["accepts_past_bound"]]
    return f"{r['compile_ms']:.1f} ms · {r['mask_median_us']:.1f} / {r['mask_p99_us']:.0f} / {r['mask_max_us']:.0f} µs{past}"


def write(results, engines, out: Path):
    out.mkdir(parents=True, exist_ok=True)
    lines = [
        "# Long bounded strings with a format or a pattern",
        "",
        "Written by `bench/bench_long_strings.py` (see its docstring). Per cell: compile (schema -> first mask, median of 3 fresh) · mask median / p99 / slowest along the document. DeepSeek vocabulary, single-threaded, compact JSON.",
        "",
        "| case | chars · tokens | " + " | ".join(engines) + " |",
        "|---|---|" + "---|" * len(engines),
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['chars']} · {r['tokens']} | " + " | ".join(cell(r[e]) for e in engines) + " |")
    (out / "long_strings.md").write_text("\n".join(lines) + "\n")
    (out / "long_strings.json").write_text(json.dumps(results, indent=1))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
