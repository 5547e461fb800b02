"""The GPU side of a serving step, on a CUDA device: `corral.apply_bitmask` on logits of a
batch of 256 rows × 152,064 tokens (Qwen's vocabulary width), and the host-to-device copy
of the int32 masks (pinned and pageable), alone and overlapped with a stand-in forward pass
(a matrix product on the default stream while the masks copy on a side stream).

Needs torch with CUDA and corral installed (`pip install .`); not SGLang or vLLM. Prints a
table and writes `device_bitmask.json` under `$OUT` (or `bench/results/`)::

    python bench/device_bitmask.py [--batch 256] [--vocab 152064] [--repeats 50]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

import numpy as np
import torch

import corral


def _timed(fn, repeats: int) -> dict:
    """Median and max wall time of `fn` (CUDA work finished inside each timing), ms."""
    times = []
    for _ in range(repeats + 3):
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times = times[3:]  # warm-up
    return {"median_ms": statistics.median(times), "max_ms": max(times)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--vocab", type=int, default=152064)
    ap.add_argument("--repeats", type=int, default=50)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark measures the GPU path")
    dev = torch.device("cuda")
    words = (args.vocab + 31) // 32
    rng = np.random.default_rng(0)
    # Masks as a JSON Schema gives them: most words zero, some mixed, a few all-allowed.
    host = np.zeros((args.batch, words), dtype=np.int32)
    mixed = rng.random((args.batch, words)) < 0.05
    host[mixed] = rng.integers(-(2**31), 2**31, size=int(mixed.sum()), dtype=np.int64).astype(np.int32)
    host[:, :4] = -1
    pinned = torch.from_numpy(host).pin_memory()
    pageable = torch.from_numpy(host.copy())
    on_device = pinned.to(dev)
    results: dict = {"device": torch.cuda.get_device_name(dev), "batch": args.batch, "vocab": args.vocab}

    for dtype in (torch.float32, torch.bfloat16):
        logits = torch.randn(args.batch, args.vocab, device=dev, dtype=dtype)
        name = str(dtype).split(".")[-1]
        results[f"apply_{name}_mask_on_device"] = _timed(lambda lg=logits: corral.apply_bitmask(lg, on_device), args.repeats)
        results[f"apply_{name}_mask_pinned_host"] = _timed(lambda lg=logits: corral.apply_bitmask(lg, pinned), args.repeats)
        # Exact: the masked logits are -inf exactly where the bit is clear.
        check = torch.zeros(args.batch, args.vocab, device=dev, dtype=dtype)
        corral.apply_bitmask(check, on_device)
        bits = np.unpackbits(host.view(np.uint8), bitorder="little").reshape(args.batch, -1)[:, : args.vocab].astype(bool)
        assert np.array_equal(torch.isfinite(check).cpu().numpy(), bits), f"{name}: wrong mask"

    target = torch.empty_like(on_device)
    results["h2d_pinned"] = _timed(lambda: target.copy_(pinned, non_blocking=True), args.repeats)
    results["h2d_pageable"] = _timed(lambda: target.copy_(pageable, non_blocking=True), args.repeats)

    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    side = torch.cuda.Stream()

    def forward() -> None:
        torch.mm(a, a)

    def overlapped() -> None:
        with torch.cuda.stream(side):
            target.copy_(pinned, non_blocking=True)
        forward()
        torch.cuda.current_stream().wait_stream(side)

    results["forward_alone"] = _timed(forward, args.repeats)
    results["forward_with_mask_copy"] = _timed(overlapped, args.repeats)

    print(f"{results['device']}: batch {args.batch} x vocab {args.vocab}")
    print("| measure | median ms | max ms |")
    print("|---|---|---|")
    for key, value in results.items():
        if isinstance(value, dict):
            print(f"| {key} | {value['median_ms']:.3f} | {value['max_ms']:.3f} |")
    out = Path(os.environ.get("OUT") or Path(__file__).resolve().parent / "results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "device_bitmask.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
