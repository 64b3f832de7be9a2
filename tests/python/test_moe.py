from __future__ import annotations

import json
import subprocess

import pytest

import llmroof


def test_expected_distinct_experts_hand_values() -> None:
    assert llmroof.expected_distinct_experts(num_experts=128, experts_per_token=8, tokens=1) == 8
    # 128 x (1 - (15/16)^16) = 82.42
    assert llmroof.expected_distinct_experts(num_experts=128, experts_per_token=8, tokens=16) == pytest.approx(82.4226, rel=1e-5)
    assert llmroof.expected_distinct_experts(num_experts=128, experts_per_token=8, tokens=256) == pytest.approx(128, rel=1e-6)


def test_simulator_agrees_with_closed_forms() -> None:
    zipf = llmroof.zipf_popularity(num_experts=128, alpha=1.0)
    for tokens in (4, 32):
        sim = llmroof.simulate_routing(popularity=zipf, experts_per_token=8, tokens=tokens, trials=1500, seed=3)
        closed = llmroof.expected_distinct_experts(popularity=zipf, experts_per_token=8, tokens=tokens)
        assert sim["mean_distinct"] == pytest.approx(closed, rel=0.01)
        assert closed < llmroof.expected_distinct_experts(num_experts=128, experts_per_token=8, tokens=tokens)


def test_moe_report_and_dense_comparison() -> None:
    r = llmroof.moe(model="glm-4.5-air", device="rtx-pro-6000-blackwell", weights="fp8", max_batch=256)
    assert r["schema"] == "llmroof.moe/1"
    assert r["fit"]["weights_fit"] is False and r["fit"]["short_bytes"] > 15 * 2**30
    rows = r["batches"]
    assert rows[0]["experts_per_layer"] == pytest.approx(8)
    # 12B of 106B read per token (8.8x fewer bytes); the MoE layer's extra
    # kernels (router, top-k, dispatch, combine) keep the speed-up nearer 4.7x.
    assert rows[0]["per_user_tokens_per_s_estimate"] > 4 * rows[0]["dense_per_user_tokens_per_s_estimate"]
    assert all(a["experts_per_layer"] <= b["experts_per_layer"] for a, b in zip(rows, rows[1:]))
    assert 16 < r["weights_crossover_batch"] < 256
    assert isinstance(r, llmroof.MoeReport) and r.weights_crossover_batch == r["weights_crossover_batch"]
    assert not r.fit["weights_fit"] and r.batches[0]["batch"] == 1
    with pytest.raises(ValueError, match="is dense"):
        llmroof.moe(model="llama-3.1-8b", device="h100-sxm")


def test_compare_glm_air_and_devstral(cli: str) -> None:
    r = llmroof.compare(models=["glm-4.5-air", "devstral-small-2-24b"], device="rtx-pro-6000-blackwell",
                        weights="awq-int4")
    first = r["batches"][0]
    assert first["first_per_user_tokens_per_s_estimate"] > first["second_per_user_tokens_per_s_estimate"]
    assert 1 < r["speed_crossover_batch"] < 64
    out = subprocess.run([cli, "compare", "--model", "glm-4.5-air", "--model", "devstral-small-2-24b", "--device",
                          "rtx-pro-6000-blackwell", "--weights", "awq-int4", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == r.to_dict()
    assert r.speed_crossover_batch == r["speed_crossover_batch"] and len(r.batches_frame()) == len(r.batches)
    with pytest.raises(ValueError, match="needs two sides"):
        llmroof.compare(models=["glm-4.5-air"], device="h100-sxm")


def test_moe_table() -> None:
    t = llmroof.moe_table().set_index("model")
    for m in ("glm-4.5-air", "qwen3-30b-a3b", "deepseek-v3", "minimax-m2", "qwen3-coder-480b-a35b", "kimi-k2"):
        assert 0 < t.loc[m, "active_share"] < 0.2
    assert t.loc["deepseek-v3", "total"] == pytest.approx(671e9, rel=0.001)
