from __future__ import annotations

from pathlib import Path

import json
import subprocess

import pytest

import llmroof


def test_multi_gpu_fits_and_shortfalls() -> None:
    one = llmroof.plan(model="llama-3.1-405b", device="h100-sxm", weights="fp8").memory
    assert one.weights_fit is False and one.shortfall_bytes > 300 * 2**30
    eight = llmroof.plan(model="llama-3.1-405b", device="h100-sxm", devices=8, weights="fp8").memory
    assert eight.fits and eight.kv_budget_bytes > 15 * 2**30
    assert llmroof.plan(model="deepseek-v3", device="h200", devices=8, weights="fp8").memory.fits
    assert not llmroof.plan(model="kimi-k2", device="h100-sxm", devices=8, weights="fp8").memory.weights_fit
    assert llmroof.plan(model="kimi-k2", device="h100-sxm", devices=8, nodes=2, weights="fp8").memory.weights_fit
    with pytest.raises(ValueError, match=r"tp x pp \(4 x 1 = 4\) must equal the devices \(8\)"):
        llmroof.plan(model="llama-3.1-70b", device="h100-sxm", devices=8, tp=4)
    with pytest.raises(ValueError, match="needs a Mixture-of-Experts model"):
        llmroof.plan(model="llama-3.1-70b", device="h100-sxm", devices=8, ep=8)


def test_parallel_decode_has_collectives() -> None:
    d = llmroof.decode(model="llama-3.1-70b", device="h100-sxm", devices=4, context=1024)
    names = [op["name"] for op in d.ops]
    assert "comm.all_reduce" in names
    assert d.estimate_s < llmroof.decode(model="llama-3.1-70b", device="h100-sxm", context=1024).estimate_s


def test_load_and_users(cli: str) -> None:
    p = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", context=8192, prompt=2048, rate=2, output=256)
    load = p.to_dict()["load"]
    assert load["stable"] and load["ttft_s"] >= load["prefill_s"]
    assert 0 < load["utilization"] < 1
    assert load["max_rate_at_ttft_target"] > 2
    u = llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=30, ttft_target_s=1, context=8192)
    assert u["max_users"] > 1 and u["per_user_tokens_per_s_estimate"] >= 30
    assert isinstance(u, llmroof.Users) and u.max_users == u["max_users"] and u.limit == u.to_dict()["limit"]
    out = subprocess.run([cli, "users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "30", "--ttft", "1s",
                          "--context", "8k", "--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["max_users"] == u["max_users"]


def test_engines_change_the_kv_budget() -> None:
    budgets = {e: llmroof.plan(model="llama-3.1-8b", device="h100-sxm", engine=e).memory.kv_budget_bytes
               for e in ("vllm", "sglang", "tensorrt-llm", "llama.cpp")}
    assert budgets["llama.cpp"] > budgets["vllm"]
    assert len(set(budgets.values())) == 4
    with pytest.raises(ValueError, match="unknown engine 'vlm'"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", engine="vlm")


def test_seed_alternatives_say_what_must_change(cli: str) -> None:
    out = subprocess.run([cli, "plan", "--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell",
                          "--weights", "fp8", "--kv", "bf16", "--users", "4", "--context", "128k", "--json"],
                         capture_output=True, text=True, check=True).stdout
    alts = {a["change"]: a for a in json.loads(out)["alternatives"]}
    assert alts["KV cache in fp8-e4m3"]["fits"] is True
    assert alts["2 devices (TP 2)"]["fits"] is True
    assert alts["fewer users"]["users"] == 2


def test_calibrate_from_python() -> None:
    from pathlib import Path

    points = Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv"
    r = llmroof.calibrate(points)
    keys = {f["key"] for f in r["fits"]}
    assert "llama.cpp-cuda/gddr" in keys
    gddr = next(f for f in r["fits"] if f["key"] == "llama.cpp-cuda/gddr")
    assert 0.5 < gddr["memory"] <= 1 and gddr["memory_sd"] > 0
    assert all(row["reason"] for row in r["skipped_rows"])
    assert isinstance(r, llmroof.Calibration) and r.scope == r["scope"] and r.points > 500
    assert len(r.fits_frame()) == len(r.fits) and "residuals" not in r.fits_frame().columns
    with pytest.raises(ValueError, match="scope must be"):
        llmroof.calibrate(points, scope="device")


def test_offload_from_python() -> None:
    base = dict(model="qwen3-30b-a3b", device="rtx-3060", weights="q4_k_m", kv="fp16", engine="llama.cpp", context=8192)
    assert not llmroof.plan(**base).memory.weights_fit  # type: ignore[arg-type]
    p = llmroof.plan(offload="experts", **base)  # type: ignore[arg-type]
    assert p.memory.fits
    half = llmroof.plan(offload=0.5, host="epyc-9654", **base)  # type: ignore[arg-type]
    assert half.memory.weight_bytes < llmroof.plan(**base).memory.weight_bytes  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="offload must be a share of layers"):
        llmroof.plan(offload="attention", **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"offload.layers must be in \[0, 1\] \(got 2\)"):
        llmroof.plan(offload=2, **base)  # type: ignore[arg-type]


def test_validation_report_with_plots(cli: str, tmp_path: Path) -> None:
    import sys

    root = Path(__file__).resolve().parents[2]
    subprocess.run([cli, "validate", str(root / "data" / "measured" / "calibration.csv"), "--report", str(tmp_path)],
                   check=True, capture_output=True, text=True)
    subprocess.run([sys.executable, str(root / "scripts" / "validation_plots.py"), str(tmp_path)], check=True,
                   capture_output=True, text=True)
    assert (tmp_path / "decode_tps_per_seq.png").exists()
    report = (tmp_path / "report.md").read_text()
    assert "Worst ten points" in report and "decode_tps_per_seq.png" in report


def test_python_and_command_use_the_same_engine_profile(cli: str) -> None:
    out = subprocess.run([cli, "plan", "--model", "llama-3-8b", "--device", "rtx-4090", "--weights", "q4_k_m",
                          "--kv", "fp16", "--engine", "llama.cpp", "--json"],
                         capture_output=True, text=True, check=True).stdout
    py = llmroof.plan(model="llama-3-8b", device="rtx-4090", weights="q4_k_m", kv="fp16", engine="llama.cpp")
    assert py.to_dict()["efficiency"]["name"] == "fitted llama.cpp-cuda"
    assert py.to_dict()["efficiency"]["fp16_accumulate"] is True
    assert json.loads(out) == py.to_dict()
