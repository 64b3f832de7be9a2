"""Hypothesis property tests of the roofline's invariants."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import llmroof

MODELS = ["llama-3.1-8b", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v3", "qwen3-next-80b-a3b", "gemma-3-4b"]
DEVICES = ["h100-sxm", "rtx-3090", "m2-ultra-76c", "mi300x", "rtx-pro-6000-blackwell"]
FORMATS = ["bf16", "fp8", "awq-int4", "q4_k_m", "nvfp4"]

settings.register_profile("ci", max_examples=60, deadline=None)
settings.load_profile("ci")


@given(st.sampled_from(MODELS), st.sampled_from(DEVICES), st.sampled_from(FORMATS),
       st.integers(1, 512), st.integers(0, 200_000), st.integers(1, 100_000))
def test_decode_monotone_and_bounded(model: str, device: str, weights: str, batch: int, context: int, more: int) -> None:
    a = llmroof.decode(model=model, device=device, weights=weights, batch=batch, context=context)
    b = llmroof.decode(model=model, device=device, weights=weights, batch=batch, context=context + more)
    c = llmroof.decode(model=model, device=device, weights=weights, batch=batch + 1, context=context)
    assert a.bound_s <= a.estimate_s
    assert b.estimate_s >= a.estimate_s
    assert c.estimate_s >= a.estimate_s
    for op in a.ops:
        assert op["bound_s"] <= op["estimate_s"]


@given(st.sampled_from(MODELS), st.sampled_from(DEVICES), st.integers(1, 256))
def test_per_user_never_rises_total_never_falls(model: str, device: str, users: int) -> None:
    a = llmroof.decode(model=model, device=device, batch=users, context=1024)
    b = llmroof.decode(model=model, device=device, batch=users * 2, context=1024)
    assert 1 / b.estimate_s <= 1 / a.estimate_s
    assert 2 * users / b.estimate_s >= users / a.estimate_s


@given(st.sampled_from(["llama-3.1-8b", "deepseek-v3", "mixtral-8x7b"]), st.integers(0, 100_000), st.integers(0, 100_000))
def test_kv_is_linear_without_windows(model: str, x: int, y: int) -> None:
    kv = lambda c: llmroof.kv_cache(model=model, context=c, block_tokens=1).kv_bytes_per_sequence  # noqa: E731
    per_token = llmroof.kv_cache(model=model).kv_bytes_per_token
    assert kv(x + y) == kv(x) + per_token * y


@given(st.integers(1, 512), st.integers(1, 64), st.floats(0, 10_000))
def test_distinct_experts_bounded(experts: int, k: int, tokens: float) -> None:
    k = min(k, experts)
    d = llmroof.expected_distinct_experts(num_experts=experts, experts_per_token=k, tokens=tokens)
    assert 0 <= d <= experts
    if tokens >= 1:
        assert d >= k - 1e-9
