"""The resolved-once Estimator gives the numbers of the one-shot functions."""

from __future__ import annotations

import pytest

import llmroof


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp"])
def test_estimator_matches_decode_and_prefill(engine: str) -> None:
    kw = dict(model="llama-3-8b", device="rtx-4090", weights="q4_k_m", engine=engine)
    est = llmroof.Estimator(**kw)  # type: ignore[arg-type]
    for batch, context in [(1, 0), (8, 4096), (32, 32768)]:
        fast = est.decode(batch=batch, context=context)
        slow = llmroof.decode(**kw, batch=batch, context=context)  # type: ignore[arg-type]
        assert fast.estimate_s == slow.estimate_s
        assert fast.bound_s == slow.bound_s
        assert fast.bottleneck == slow.bottleneck
        assert est.decode_phase(batch=batch, context=context) == slow
    p = est.prefill(prompt=1000)
    assert p.estimate_s == llmroof.prefill(**kw, prompt=1000).estimate_s  # type: ignore[arg-type]
    assert p.tokens_per_s_estimate == pytest.approx(1000 / p.estimate_s)


def test_estimator_checks_fields_and_takes_keywords_only() -> None:
    est = llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm")
    with pytest.raises(ValueError, match=r"batch must be in \[1, 1000000000\] \(got 0\)"):
        est.decode(batch=0)
    with pytest.raises(ValueError, match=r"context must be in \[0, 1000000000\] \(got -1\)"):
        est.decode(context=-1)
    with pytest.raises(TypeError):
        est.decode(1, 2)  # type: ignore[misc]
    with pytest.raises(ValueError, match="unknown engine"):
        llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm", engine="vlm")
    assert not hasattr(est, "__dict__")
