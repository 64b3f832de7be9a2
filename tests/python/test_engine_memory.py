"""Engine memory accounting from Python: the same knobs and verdicts as the command."""

from __future__ import annotations

import json
import subprocess

import pytest

import llmroof


def test_explicit_memory_utilization_is_used_under_every_engine() -> None:
    # 0.9 used to mean "not given": llama.cpp then ran at 1.0 whatever the caller said.
    full = llmroof.plan(model="llama-3-8b", device="rtx-4090", engine="llama.cpp")
    set_ = llmroof.plan(model="llama-3-8b", device="rtx-4090", engine="llama.cpp", memory_utilization=0.9)
    assert full.memory.usable_bytes == pytest.approx(full.memory.capacity_bytes)
    assert set_.memory.usable_bytes == pytest.approx(0.9 * set_.memory.capacity_bytes)


def test_engine_knobs_reach_the_plan_and_match_the_command(cli: str) -> None:
    p = llmroof.plan(model="qwen3-32b", device="h100-sxm", context=16000, max_model_len=32000)
    assert p.memory.starts is False and p.memory.fits is False
    out = subprocess.run([cli, "plan", "--model", "qwen3-32b", "--device", "h100-sxm", "--context", "16000",
                          "--max-model-len", "32000", "--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["memory"] == p.to_dict()["memory"]
    few = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", max_num_seqs=128)
    many = llmroof.plan(model="llama-3.1-8b", device="h100-sxm")
    assert few.memory.activation_bytes < many.memory.activation_bytes
    assert few.memory.kv_budget_bytes > many.memory.kv_budget_bytes


def test_engine_knobs_are_checked() -> None:
    with pytest.raises(ValueError, match="max_num_seqs must be a whole number"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", max_num_seqs=1.5)
    with pytest.raises(ValueError, match=r"max_model_len must be >= 1 \(got 0\)"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", max_model_len=0)
    with pytest.raises(ValueError, match="engine version must be a release"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", engine="vllm@new")
