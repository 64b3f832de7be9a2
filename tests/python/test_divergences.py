"""The divergences between the command and Python found when the deployment
became the library's input (issue 29, V1-V6): each is one question asked of
both, with the same answer, and the rule behind it checked by hand."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import llmroof

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf-configs"


def run(cli: str, *args: str) -> dict[str, Any]:
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def _gguf(path: Path) -> int:
    from test_readers import _write_gguf

    return _write_gguf(path)


def test_v1_a_requantized_file_counts_its_weights_one_way_everywhere(cli: str, tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    written = _gguf(path)
    m = llmroof.Model.from_gguf(path)
    own = run(cli, "plan", "--model", str(path), "--device", "rtx-3090", "--context", "1024")
    # In its own formats the device holds the file's tensor bytes.
    assert own["memory"]["weight_bytes"] == written
    assert own == llmroof.plan(model=m, device="rtx-3090", context=1024).to_dict()
    # Re-quantized by name: the architecture counted in bf16 (plus a vision
    # tower in 16 bits: none here), in plan, users and compare alike.
    # The same architecture without a file: its weights counted in bf16.
    counted = llmroof.plan(model=llmroof.Model.custom(**m.fields), device="rtx-3090", weights="bf16",
                           context=1024).memory.weight_bytes
    assert counted != written
    for question in (["plan", "--context", "1024"], ["users", "--tps", "5"]):
        f = ["--model", str(path), "--device", "rtx-3090", "--weights", "bf16", *question[1:]]
        out = run(cli, question[0], *f)
        if question[0] == "plan":
            assert out["memory"]["weight_bytes"] == pytest.approx(counted, rel=1e-9)
            assert out == llmroof.plan(model=m, device="rtx-3090", weights="bf16", context=1024).to_dict()
        else:
            assert out == llmroof.users(model=m, device="rtx-3090", weights="bf16", min_tokens_per_s=5).to_dict()
    cmp = run(cli, "compare", "--model", str(path), "--model", "llama-3.2-1b", "--device", "rtx-3090",
              "--weights", "bf16", "--max-batch", "8")
    assert cmp == llmroof.compare(models=[m, "llama-3.2-1b"], device="rtx-3090", weights="bf16", max_batch=8).to_dict()
    assert cmp["first"]["fit"]["weight_bytes"] == pytest.approx(counted, rel=1e-9)


def test_v2_ep_1_on_several_devices_is_tensor_parallel_in_both(cli: str) -> None:
    f = ["--model", "qwen3-30b-a3b", "--device", "h100-sxm:2", "--ep", "1", "--weights", "fp8"]
    out = run(cli, "plan", *f)
    assert (out["parallel"]["tp"], out["parallel"]["ep"]) == (2, 1)
    assert out == llmroof.plan(model="qwen3-30b-a3b", device="h100-sxm", devices=2, ep=1, weights="fp8").to_dict()


def test_v3_the_offload_host_is_read_as_the_command_reads_it(cli: str) -> None:
    host = "custom:memory=128GiB,bandwidth=80GB/s,fp32=2TF,class=cpu"
    f = ["--model", "llama-3.1-8b", "--device", "rtx-4090", "--engine", "llama.cpp", "--weights", "q4_k_m",
         "--offload", "0.5"]
    out = run(cli, "plan", *f, "--host", host)
    kw: dict[str, Any] = dict(model="llama-3.1-8b", device="rtx-4090", engine="llama.cpp", weights="q4_k_m",
                              offload=0.5)
    assert out == llmroof.plan(**kw, host=host).to_dict()
    as_device = llmroof.Device(memory="128GiB", bandwidth="80GB/s", fp32="2TF", device_class="cpu")
    assert llmroof.plan(**kw, host=as_device).to_dict()["decode_curve"] == out["decode_curve"]
    # A catalog host by its vendor name, as --host takes it.
    assert run(cli, "plan", *f, "--host", "ryzen-9-7950x") == llmroof.plan(**kw, host="ryzen-9-7950x").to_dict()
    # The host's bandwidth is what the offloaded half streams at: a slower host, a slower step.
    slow = llmroof.plan(**kw, host=host).decode_curve[0]["single_user_tokens_per_s_estimate"]
    fast = llmroof.plan(**kw).decode_curve[0]["single_user_tokens_per_s_estimate"]
    assert slow < fast


@pytest.mark.parametrize("model", [str(CONFIGS / "Qwen__Qwen3-30B-A3B-FP8.json"), "llama-3.1-70b"])
def test_v4_a_sweep_point_is_the_deployment_decode_and_prefill_resolve(model: str) -> None:
    m = llmroof.Model.from_hf_config(model) if model.endswith(".json") else llmroof.Model.get(model)
    for kw in (dict(), dict(devices=2, tp=2, lm_head="fp8"), dict(devices=4, pp=2, link="pcie4")):
        frame = llmroof.sweep_decode(model=m, device="h100-sxm", batch=[1, 8], context=[0, 4096], **kw)  # type: ignore[arg-type]
        for _, row in frame.iterrows():
            step = llmroof.decode(model=m, device="h100-sxm", batch=row["batch"], context=row["context"],
                                  **kw)  # type: ignore[arg-type]
            assert row["tpot_s_estimate"] == pytest.approx(step.estimate_s, rel=1e-12)
            assert row["weight_bytes_per_step"] == pytest.approx(step.to_dict()["weight_bytes"], rel=1e-12)
        pre = llmroof.sweep_prefill(model=m, device="h100-sxm", prompt=[512, 4096], cached=0, **kw)  # type: ignore[arg-type]
        for _, row in pre.iterrows():
            ttft = llmroof.prefill(model=m, device="h100-sxm", prompt=row["prompt"], **kw)  # type: ignore[arg-type]
            assert row["ttft_s_estimate"] == pytest.approx(ttft.estimate_s, rel=1e-12)
    # A file's own formats label its rows (FP8 checkpoint), as decode() runs it.
    if model.endswith(".json"):
        frame = llmroof.sweep_decode(model=m, device="h100-sxm", batch=1, context=0)
        assert list(frame["weights"]) == ["fp8"]


def test_v5_the_users_curve_is_in_the_report(cli: str) -> None:
    f = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20"]
    out = run(cli, "users", *f)
    u = llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20)
    assert out == u.to_dict()
    # Each point is that many users in a closed loop (2,048-token prompts,
    # 512-token answers): the plan's load at that concurrency, and the
    # headline is the point at the answer.
    for p in u.curve:
        loop = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", concurrency=p["users"]).to_dict()["load"]
        assert p["per_user_tokens_per_s_estimate"] == pytest.approx(loop["output_tokens_per_s_per_user"], rel=1e-12)
        assert p["total_tokens_per_s_estimate"] == pytest.approx(loop["output_tokens_per_s"], rel=1e-12)
        assert p["ttft_s"] == pytest.approx(loop["ttft_s"], rel=1e-12)
    at = next(p for p in u.curve if p["users"] == u.max_users)
    assert at["per_user_tokens_per_s_estimate"] == u.per_user_tokens_per_s_estimate >= 20
    text = subprocess.run([cli, "users", *f], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in text.splitlines() if line.strip()[:1].isdigit() and len(line.split()) >= 4]
    assert [float(r[0].replace(",", "")) for r in rows] == [p["users"] for p in u.curve]
    assert np.allclose([float(r[1]) for r in rows], [p["per_user_tokens_per_s_estimate"] for p in u.curve], atol=0.05)


def test_v6_validate_gives_each_row_its_likely_reason_and_writes_the_report(cli: str, tmp_path: Path) -> None:
    points = str(Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv")
    out = run(cli, "validate", points, "--no-refit", "--report", str(tmp_path / "cli"))
    frame = llmroof.validate(points, report=tmp_path / "py")
    assert list(frame["likely_reason"]) == [r["likely_reason"] for r in out["rows"]]
    assert all(isinstance(r, str) and r for r in frame["likely_reason"])
    for name in ("report.md", "predictions.csv"):
        assert (tmp_path / "cli" / name).read_text() == (tmp_path / "py" / name).read_text()
    csv = (tmp_path / "py" / "predictions.csv").read_text().splitlines()
    assert csv[0].endswith(",ape,likely_reason") and len(csv) == len(frame) + 1
    with pytest.raises(ValueError, match="report: cannot create the folder"):
        llmroof.validate(points, report=tmp_path / "py" / "report.md" / "x")


def test_published_formats_and_quantized_names_are_planned_alike(cli: str) -> None:
    # gpt-oss-120b without --weights: its checkpoint's MXFP4 experts, attention in bf16.
    own = run(cli, "plan", "--model", "gpt-oss-120b", "--device", "h100-sxm")
    assert (own["formats_from"], own["checkpoint"]) == ("checkpoint", "openai/gpt-oss-120b")
    assert (own["weights"], own["formats"]["attention"]) == ("mxfp4", "bf16")
    assert own == llmroof.plan(model="gpt-oss-120b", device="h100-sxm").to_dict()
    # 65.19 GB counted + MXFP4 rows padded 2880 -> 3072 (vLLM): 64.5 GiB (vLLM loaded 64.38, ML-013).
    assert own["memory"]["weight_bytes"] / 2**30 == pytest.approx(64.5, abs=0.05)
    # A quantized checkpoint's name selects its format, in both, and refuses another.
    awq = run(cli, "plan", "--model", "Qwen/Qwen3-32B-AWQ", "--device", "rtx-4090")
    assert (awq["weights"], awq["formats_from"]) == ("awq-int4", "name")
    assert awq == llmroof.plan(model="Qwen/Qwen3-32B-AWQ", device="rtx-4090").to_dict()
    with pytest.raises(ValueError, match=r"weights 'bf16' contradict the model name 'Qwen/Qwen3-32B-AWQ' \(awq-int4\)"):
        llmroof.plan(model="Qwen/Qwen3-32B-AWQ", device="rtx-4090", weights="bf16")
    # A model published in 16 bits stays bf16.
    assert llmroof.plan(model="llama-3.1-8b", device="h100-sxm").to_dict()["formats_from"] == "default"


def test_a_prompt_beyond_the_context_is_refused_alike(cli: str) -> None:
    out = subprocess.run([cli, "plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "8192",
                          "--context", "4096"], capture_output=True, text=True)
    assert out.returncode == 2
    msg = r"prompt must be <= the context \(4096 tokens\) \(got 8192\)"
    with pytest.raises(ValueError, match=msg):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", prompt=8192, context=4096)
