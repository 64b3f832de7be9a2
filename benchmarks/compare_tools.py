#!/usr/bin/env python3
"""llmroof side by side with llm-analysis and GenZ (genz-llm) on the same scenarios.

Creates a throwaway virtual environment, installs `llm-analysis` and
`genz-llm` from PyPI there, runs every scenario through each tool (timing
each estimate), runs the same scenarios through llmroof in this interpreter,
and prints one markdown table: time per estimate, its ratio to llmroof's, and
each tool's predicted tokens/s beside llmroof's bound and estimate.

    python benchmarks/compare_tools.py [--venv DIR] [--repeat N] [--no-peers]

`--no-peers` runs llmroof's side alone (no environment, no download): what
`scripts/test.sh` runs, briefly, so that the script cannot break unseen.

llmroof's time per estimate is measured two ways: one Python call
(`llmroof.decode` or `llmroof.prefill`, the cached deployment) and amortised over a vectorised
sweep (`llmroof.sweep_decode`, the way design spaces are meant to be swept).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

# Each model and device by the name each tool knows it: llmroof, llm-analysis
# (None: it ships no config and cannot fetch one offline), GenZ.
LLAMA2_7B = ("llama-2-7b", "NousResearch_Llama-2-7b-hf", "llama2_7b")
LLAMA31_70B = ("llama-3.1-70b", None, "meta-llama/meta-llama-3.1-70b")
MIXTRAL = ("mixtral-8x7b", None, "mixtral_8x7b")
A100 = ("a100-80gb-sxm", "a100-sxm-80gb", "A100_80GB_GPU")
H100 = ("h100-sxm", "h100-sxm-80gb", "H100_GPU")
DTYPE = {"bf16": "w16a16e16"}  # llm-analysis names of the formats (its fp8 runs are not compared)


def scenario(name: str, kind: str, model: tuple, device: tuple, fmt: str, batch: int, seq: int) -> tuple:
    """(name, kind, llmroof args, llm-analysis args or None, GenZ args)."""
    ours = dict(model=model[0], device=device[0], weights=fmt)
    ours.update(dict(batch=batch, context=seq) if kind == "decode" else dict(prompt=seq))
    la = None if model[1] is None else dict(model=model[1], gpu=device[1], dtype=DTYPE[fmt], batch=batch, seq=seq)
    return (name, kind, ours, la, dict(model=model[2], system=device[2], bits=fmt, batch=batch, seq=seq))


SCENARIOS = [
    scenario("Llama-2-7B decode b1 A100-80GB bf16", "decode", LLAMA2_7B, A100, "bf16", 1, 1024),
    scenario("Llama-2-7B decode b64 A100-80GB bf16", "decode", LLAMA2_7B, A100, "bf16", 64, 1024),
    scenario("Llama-2-7B decode b1 H100 bf16", "decode", LLAMA2_7B, H100, "bf16", 1, 1024),
    scenario("Llama-3.1-70B decode b1 H100 fp8", "decode", LLAMA31_70B, H100, "fp8", 1, 1024),
    scenario("Llama-3.1-70B decode b64 H100 fp8", "decode", LLAMA31_70B, H100, "fp8", 64, 1024),
    scenario("Llama-2-7B prefill 2048 A100-80GB bf16", "prefill", LLAMA2_7B, A100, "bf16", 1, 2048),
    scenario("Mixtral-8x7B decode b1 H100 fp8", "decode", MIXTRAL, H100, "fp8", 1, 1024),
]

WORKER = r'''
import json, statistics, sys, time, warnings
warnings.filterwarnings("ignore")
import logging; logging.disable(logging.WARNING)
scenarios, repeat = json.loads(sys.argv[1]), int(sys.argv[2])
out = {}
def timed(fn, n):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); r = fn(); ts.append(time.perf_counter() - t0)
    return r, statistics.median(ts)
for name, kind, la, gz in scenarios:
    row = {}
    if la is not None:
        try:
            from llm_analysis.analysis import LLMAnalysis
            from llm_analysis.config import get_model_config_by_name, get_gpu_config_by_name, get_dtype_config_by_name
            def run():
                a = LLMAnalysis(get_model_config_by_name(la["model"]), get_gpu_config_by_name(la["gpu"]),
                                get_dtype_config_by_name(la["dtype"]), flops_efficiency=1, hbm_memory_efficiency=1)
                return a.inference(batch_size_per_gpu=la["batch"], seq_len=la["seq"], num_tokens_to_generate=1 if kind == "prefill" else 2)
            r, t = timed(run, repeat)
            tps = la["seq"] / r["prefill_latency"] if kind == "prefill" else la["batch"] / r["decode_latency"]
            row["llm-analysis"] = {"time_s": t, "tokens_per_s": tps}
        except Exception as e:
            row["llm-analysis"] = {"error": f"{type(e).__name__}: {e}"[:120]}
    if gz is not None:
        try:
            from GenZ import decode_moddeling, prefill_moddeling
            if kind == "prefill":
                fn = lambda: prefill_moddeling(model=gz["model"], batch_size=gz["batch"], input_tokens=gz["seq"],
                                               system_name=gz["system"], bits=gz["bits"])
            else:
                fn = lambda: decode_moddeling(model=gz["model"], batch_size=gz["batch"], input_tokens=gz["seq"],
                                              output_tokens=1, system_name=gz["system"], bits=gz["bits"])
            r, t = timed(fn, max(1, repeat // 20))
            # GenZ's prefill throughput is in requests/s.
            tps = r["Throughput"] * gz["seq"] if kind == "prefill" else r["Throughput"]
            row["GenZ"] = {"time_s": t, "tokens_per_s": tps}
        except Exception as e:
            row["GenZ"] = {"error": f"{type(e).__name__}: {e}"[:120]}
    out[name] = row
print(json.dumps(out))
'''


def tools_venv(path: Path) -> Path:
    py = path / "bin" / "python"
    if not py.exists():
        venv.create(path, with_pip=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "llm-analysis", "genz-llm"], check=True)
    return py


def llmroof_times(repeat: int) -> dict[str, dict[str, float]]:
    import numpy as np

    import llmroof

    out = {}
    llmroof.sweep_decode(model="llama-2-7b", device="h100-sxm", batch=[1, 2])  # warm-up: imports, caches
    n = 1_000_000
    for name, kind, args, _, _ in SCENARIOS:
        fn = (lambda a=args: llmroof.prefill(**a)) if kind == "prefill" else (lambda a=args: llmroof.decode(**a))
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = fn()
            ts.append(time.perf_counter() - t0)
        # Amortised over a vectorised sweep of a million points around the scenario.
        if kind == "prefill":
            t0 = time.perf_counter()
            llmroof.sweep_prefill(model=args["model"], device=args["device"], weights=args["weights"],
                                  prompt=np.arange(1, 1001), cached=np.arange(0, 1000))
        else:
            t0 = time.perf_counter()
            llmroof.sweep_decode(model=args["model"], device=args["device"], weights=args["weights"],
                                 batch=np.arange(1, 1001), context=np.linspace(0, 131072, 1000))
        sweep = (time.perf_counter() - t0) / n
        # The estimate itself, timed in C++ (median of 5 runs of 200,000).
        core = statistics.median(
            llmroof._core.sweeps.time_decode_ns(llmroof.Model.get(args["model"]).fields,
                                                llmroof.Device.get(args["device"]).fields, args["weights"],
                                                float(args.get("batch", 1)), 200_000) for _ in range(5)) * 1e-9
        out[name] = {"call_s": statistics.median(ts), "sweep_s": sweep, "core_s": core,
                     "estimate": r.tokens_per_s_estimate, "bound": r.tokens_per_s_bound}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--venv", type=Path, default=None, help="reuse this environment for the other tools")
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--no-peers", action="store_true", help="time llmroof alone (installs nothing)")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    others: dict[str, dict] = {name: {"llm-analysis": {"skipped": "not run (--no-peers)"},
                                      "GenZ": {"skipped": "not run (--no-peers)"}} for name, *_ in SCENARIOS}
    if not args.no_peers:
        with tempfile.TemporaryDirectory() as tmp:
            py = tools_venv(args.venv or Path(tmp) / "tools")
            payload = json.dumps([[n, k, la, gz] for n, k, _, la, gz in SCENARIOS])
            res = subprocess.run([str(py), "-c", WORKER, payload, str(args.repeat)], capture_output=True,
                                 text=True, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
            others = json.loads(res.stdout.strip().splitlines()[-1])
    ours = llmroof_times(args.repeat)
    print("| scenario | llmroof per estimate: C++ / sweep / Python call | llm-analysis | GenZ | "
          "tokens/s: llmroof bound / estimate | llm-analysis | GenZ |")
    print("|---|---|---|---|---|---|---|")
    for name, *_ in SCENARIOS:
        o = ours[name]
        cells = []
        for tool in ("llm-analysis", "GenZ"):
            r = others[name].get(tool)
            if r is None:
                cells.append(("cannot express this scenario", "-"))
            elif "skipped" in r:
                cells.append((r["skipped"], "-"))
            elif "error" in r:
                cells.append((f"failed: {r['error']}", "-"))
            else:
                cells.append((f"{r['time_s'] * 1e6:,.0f} us ({r['time_s'] / o['core_s']:,.0f}x C++, "
                              f"{r['time_s'] / o['sweep_s']:,.0f}x sweep, {r['time_s'] / o['call_s']:,.0f}x call)",
                              f"{r['tokens_per_s']:,.1f}"))
        print(f"| {name} | {o['core_s'] * 1e9:,.0f} ns / {o['sweep_s'] * 1e9:,.0f} ns / {o['call_s'] * 1e6:,.0f} us | "
              f"{cells[0][0]} | {cells[1][0]} | "
              f"{o['bound']:,.1f} / {o['estimate']:,.1f} | {cells[0][1]} | {cells[1][1]} |")


if __name__ == "__main__":
    sys.exit(main())
