#!/usr/bin/env python3
"""Million-point decode sweep from Python: median wall time of 5 runs.

Run after `pip install .`:  python benchmarks/sweep_benchmark.py
"""
import os
import statistics
import time

import numpy as np

import llmroof


def main() -> None:
    batch = np.arange(1, 1001)
    context = np.linspace(0, 131072, 1000)
    for threads in (1, None):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            df = llmroof.sweep_decode(model="llama-3.1-70b", device="h100-sxm", weights="fp8",
                                      batch=batch, context=context, threads=threads)
            times.append(time.perf_counter() - t0)
        assert len(df) == 1_000_000
        t0 = time.perf_counter()
        llmroof._core.sweeps.sweep("decode", [llmroof.Model.get("llama-3.1-70b").fields],
                                   [llmroof.Device.get("h100-sxm").fields], ["fp8"], ["bf16"],
                                   np.repeat(batch, 1000).astype(float), np.tile(context, 1000), 1, None, "vllm",
                                   None, threads or 0)
        core = time.perf_counter() - t0
        label = "1 thread" if threads else f"{os.cpu_count()} threads (default)"
        print(f"1,000,000-point sweep_decode, {label}: median {statistics.median(times):.3f} s "
              f"(min {min(times):.3f} s) including the DataFrame; C++ core alone {core:.3f} s")


if __name__ == "__main__":
    main()
