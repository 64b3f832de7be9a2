"""Property test (issue 17): every number a plan reports is finite, and
non-negative where it is a size, a count or a time, over random valid and
near-limit inputs; impossible inputs raise ValueError instead of planning."""
from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import llmroof

MODELS = ["llama-3.1-8b", "devstral-small-2-24b", "deepseek-v3", "qwen3-30b-a3b", "gpt-oss-120b"]
DEVICES = ["h100-sxm", "rtx-4090", "rtx-pro-6000-blackwell", "m4-max-40c"]
SIGNED = {"kv_budget_bytes", "headroom_bytes", "shortfall_bytes"}  # a budget may be negative: it says by how much


def numbers(x: Any, path: str = "") -> list[tuple[str, float]]:
    if isinstance(x, bool):
        return []
    if isinstance(x, (int, float)):
        return [(path, float(x))]
    if isinstance(x, dict):
        return [n for k, v in x.items() for n in numbers(v, f"{path}.{k}")]
    if isinstance(x, list):
        return [n for i, v in enumerate(x) for n in numbers(v, f"{path}[{i}]")]
    return []


@settings(max_examples=60, deadline=None)
@given(model=st.sampled_from(MODELS), device=st.sampled_from(DEVICES),
       users=st.one_of(st.integers(1, 4096), st.just(10**9)),
       context=st.one_of(st.integers(1, 10**7), st.just(10**9)),
       kv=st.sampled_from(["bf16", "fp8", "fp8-e4m3"]), devices=st.sampled_from([1, 2, 4, 8]))
def test_plans_hold_finite_non_negative_numbers(model: str, device: str, users: int, context: int, kv: str,
                                                devices: int) -> None:
    try:
        p = llmroof.plan(model=model, device=device, users=users, context=context, kv=kv, devices=devices)
    except ValueError:
        return  # refused (an impossible layout or format), never planned
    for path, v in numbers(p.to_dict()):
        assert math.isfinite(v), path
        if path.rsplit(".", 1)[-1] not in SIGNED:
            assert v >= 0 or "delta" in path or "change" in path, (path, v)
