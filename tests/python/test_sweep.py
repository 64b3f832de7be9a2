from __future__ import annotations

import time

import numpy as np
import pytest

import llmroof


def test_sweep_matches_single_estimates() -> None:
    df = llmroof.sweep_decode(model=["llama-3.1-8b", "qwen3-30b-a3b"], device=["h100-sxm", "rtx-4090"],
                              weights=["bf16", "fp8"], kv="bf16", batch=[1, 8], context=[0, 4096])
    assert len(df) == 2 * 2 * 2 * 1 * 2 * 2
    for row in df.sample(6, random_state=1).itertuples():
        one = llmroof.decode(model=row.model, device=row.device, weights=row.weights, kv=row.kv,
                             batch=row.batch, context=row.context)
        assert row.tpot_s_estimate == pytest.approx(one.estimate_s, rel=1e-12)
        assert row.tpot_s_bound == pytest.approx(one.bound_s, rel=1e-12)
    assert (df["tpot_s_bound"] <= df["tpot_s_estimate"]).all()
    assert set(df.columns) >= {"model", "device", "weights", "kv", "batch", "context", "fits",
                               "tokens_per_s_per_user_estimate", "tokens_per_s_total_estimate"}


def test_sweep_columns_their_order_and_types() -> None:
    df = llmroof.sweep_decode(model=["llama-3.1-8b", "qwen3-30b-a3b"], device="h100-sxm", weights=["bf16", "fp8"],
                              batch=[1, 64], context=[0, 131072])
    assert list(df.columns) == [
        "model", "device", "weights", "kv", "batch", "context", "tpot_s_bound", "tpot_s_estimate", "bytes_per_step",
        "weight_bytes_per_step", "kv_read_bytes_per_step", "flop_per_step", "tokens_per_s_per_user_estimate",
        "tokens_per_s_per_user_bound", "tokens_per_s_total_estimate", "power_w", "joules_per_token", "fits",
        "compute_bound"]
    assert all(df[c].dtype == "category" for c in ("model", "device", "weights", "kv"))
    assert df["fits"].dtype == bool and df["compute_bound"].dtype == bool
    # Rows run combination-major: model, then device, weights, kv; the grid inside each.
    assert df["model"].tolist() == ["llama-3.1-8b"] * 8 + ["qwen3-30b-a3b"] * 8
    assert df["weights"].tolist()[:8] == ["bf16"] * 4 + ["fp8"] * 4
    assert df["batch"].tolist()[:4] == [1, 1, 64, 64] and df["context"].tolist()[:4] == [0, 131072, 0, 131072]
    # The rates the core writes are the same divisions as the times' reciprocals.
    assert (df["tokens_per_s_per_user_estimate"] == 1 / df["tpot_s_estimate"]).all()
    assert (df["tokens_per_s_per_user_bound"] == 1 / df["tpot_s_bound"]).all()
    assert (df["tokens_per_s_total_estimate"] == df["batch"] / df["tpot_s_estimate"]).all()
    pre = llmroof.sweep_prefill(model="llama-3.1-8b", device="l4", prompt=[128, 2048])
    assert list(pre.columns) == ["model", "device", "weights", "kv", "prompt", "cached", "ttft_s_bound",
                                 "ttft_s_estimate", "flop", "bytes", "prefill_tokens_per_s_estimate", "power_w",
                                 "joules_per_token"]
    assert (pre["prefill_tokens_per_s_estimate"] == pre["prompt"] / pre["ttft_s_estimate"]).all()
    # Energy per token: all devices' power over the step (energy.hpp) times its time, per token:
    # between idle (13% of the L4's 72 W) and the TDP.
    assert (pre["joules_per_token"] == pre["power_w"] * pre["ttft_s_estimate"] / pre["prompt"]).all()
    assert ((0.13 * 72 <= pre["power_w"]) & (pre["power_w"] <= 72)).all()
    assert (df["joules_per_token"] == df["power_w"] * df["tpot_s_estimate"] / df["batch"]).all()
    # The same power as a plan's energy section for one user decoding (4 x ... only the device count differs).
    plan = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", context=131072)
    one = llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", batch=1, context=131072)
    assert one["power_w"].iloc[0] == pytest.approx(plan.energy["power_w"])
    apple = llmroof.sweep_decode(model="llama-3.1-8b", device="m3-max-40c", batch=1, context=0)
    assert apple["power_w"].isna().all()  # no TDP figure: missing, never a guess


def test_sweep_fits_flag_follows_memory() -> None:
    df = llmroof.sweep_decode(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8",
                              batch=[2, 3], context=131072)
    assert df.set_index("batch")["fits"].to_dict() == {2.0: True, 3.0: False}  # 57.35 GiB of KV, 20 GiB each


def test_prefill_sweep() -> None:
    df = llmroof.sweep_prefill(model="llama-3.1-8b", device=["h100-sxm", "l4"], prompt=[128, 2048], cached=[0, 1000])
    assert len(df) == 8
    one = llmroof.prefill(model="llama-3.1-8b", device="l4", prompt=2048, cached=1000)
    row = df[(df.device == "l4") & (df.prompt == 2048) & (df.cached == 1000)].iloc[0]
    assert row.ttft_s_estimate == pytest.approx(one.estimate_s, rel=1e-12)


def test_million_point_sweep_runs() -> None:
    # Timing is measured by benchmarks/sweep_benchmark.py, never asserted here.
    t0 = time.perf_counter()
    df = llmroof.sweep_decode(model="llama-3.1-70b", device="h100-sxm", batch=np.arange(1, 1001),
                              context=np.linspace(0, 131072, 1000))
    assert len(df) == 1_000_000
    assert np.isfinite(df["tpot_s_estimate"]).all()
    print(f"1,000,000-point sweep: {time.perf_counter() - t0:.3f} s")


def test_threads_split_points_without_changing_them() -> None:
    # 3 devices x 20,000 points: on 2 threads the blocks split at row 30,000,
    # inside the second combination, so a wrong row or combination offset
    # shows up as a mismatch against the one-thread run.
    kw: dict[str, object] = dict(model="llama-3.1-8b", device=["h100-sxm", "rtx-4090", "l4"], weights="fp8",
                                 batch=np.arange(1, 201), context=np.linspace(0, 131072, 100))
    one = llmroof.sweep_decode(threads=1, **kw)  # type: ignore[arg-type]
    assert len(one) == 60_000
    for threads in (2, 3):
        assert one.equals(llmroof.sweep_decode(threads=threads, **kw))  # type: ignore[arg-type]
    pre = dict(model=["llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-70b"], device="h100-sxm",
               prompt=np.arange(1, 201) * 64.0, cached=np.arange(0, 100) * 512.0, devices=2)
    assert llmroof.sweep_prefill(threads=1, **pre).equals(llmroof.sweep_prefill(threads=2, **pre))  # type: ignore[arg-type]


def test_sweep_errors() -> None:
    with pytest.raises(ValueError, match="threads must be >= 1"):
        llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", threads=0)
    with pytest.raises(ValueError, match="batch must be in"):
        llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", batch=[0, 1])
    with pytest.raises(ValueError, match="context must be finite"):
        llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", context=[np.nan])
    with pytest.raises(TypeError, match="model must be"):
        llmroof.sweep_decode(model=3, device="h100-sxm")  # type: ignore[arg-type]


def test_core_timer_reports_a_positive_time() -> None:
    model, device = llmroof.Model.get("llama-2-7b").fields, llmroof.Device.get("h100-sxm").fields
    ns = llmroof._core.sweeps.time_decode_ns(model, device, "bf16", 1.0, 100)
    assert ns > 0
    with pytest.raises(ValueError, match="n must be in"):
        llmroof._core.sweeps.time_decode_ns(model, device, "bf16", 1.0, 0)
