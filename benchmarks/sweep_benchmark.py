#!/usr/bin/env python3
"""Million-point decode sweep from Python: median wall time of 5 runs.

Run after `pip install .`:  python benchmarks/sweep_benchmark.py [--runs N]
(scripts/test.sh runs it with --runs 1, so that it cannot break unseen).
"""
import os
import statistics
import sys
import time

import numpy as np

import llmroof
from llmroof._resolve import _compile


def main() -> None:
    batch = np.arange(1, 1001)
    context = np.linspace(0, 131072, 1000)
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    if runs < 1:
        raise SystemExit("--runs must be >= 1")
    for threads in (1, None):
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            df = llmroof.sweep_decode(model="llama-3.1-70b", device="h100-sxm", weights="fp8",
                                      batch=batch, context=context, threads=threads)
            times.append(time.perf_counter() - t0)
        assert len(df) == 1_000_000
        # The C++ core alone, on the deployment the sweep itself compiles
        # (llmroof._resolve._compile: the checkpoint's formats, the engine's layout).
        dep = _compile(llmroof.Model.get("llama-3.1-70b"), llmroof.Device.get("h100-sxm"), weights="fp8")
        x = np.ascontiguousarray(np.repeat(batch, 1000).astype(float))
        y = np.ascontiguousarray(np.tile(context, 1000))
        t0 = time.perf_counter()
        llmroof._core.sweeps.sweep("decode", [dep], x, y, threads or 0)
        core = time.perf_counter() - t0
        label = "1 thread" if threads else f"{os.cpu_count()} threads (default)"
        print(f"1,000,000-point sweep_decode, {label}: median {statistics.median(times):.3f} s "
              f"(min {min(times):.3f} s) including the DataFrame; C++ core alone {core:.3f} s")


if __name__ == "__main__":
    main()
