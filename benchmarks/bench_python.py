#!/usr/bin/env python3
"""Cost of one estimate from Python: the resolved-once Estimator, the one-shot
functions and the vectorised sweep. Medians of repeated timings (no assertions:
machines are noisy). Usage: python benchmarks/bench_python.py [--quick]
(--quick: a few repeats, what scripts/test.sh runs so that the script cannot
break unseen; its figures mean nothing)."""
from __future__ import annotations

import statistics
import sys
import time
from typing import Callable

import numpy as np

import llmroof


QUICK = "--quick" in sys.argv[1:]


def median_us(fn: Callable[[], object], repeat: int = 2000) -> float:
    repeat = 5 if QUICK else repeat
    for _ in range(2 if QUICK else 50):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def main() -> None:
    est = llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm")
    rows = [
        ("Estimator.decode(batch=8, context=4096)", median_us(lambda: est.decode(batch=8, context=4096))),
        ("Estimator.prefill(prompt=2048)", median_us(lambda: est.prefill(prompt=2048))),
        ("llmroof.decode(model=..., device=...) (resolve + estimate)",
         median_us(lambda: llmroof.decode(model="llama-3.1-8b", device="h100-sxm", batch=8), repeat=500)),
    ]
    batch = np.arange(1, 1001, dtype=float)
    context = np.linspace(0, 131072, 1000)
    llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", batch=batch, context=context)  # warm-up:
    # the first sweeps of a process pay the pandas import and the first touch of a million-row frame
    runs = []
    for _ in range(1 if QUICK else 3):
        t0 = time.perf_counter()
        df = llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", batch=batch, context=context)
        runs.append((time.perf_counter() - t0) / len(df) * 1e9)
    per_point = statistics.median(runs)
    for name, us in rows:
        print(f"{name:62s} {us:8.2f} us")
    print(f"{'sweep_decode, 1,000,000 points, per point (warm, median of 3)':62s} {per_point:8.1f} ns")


if __name__ == "__main__":
    main()
