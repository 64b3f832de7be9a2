"""One question, one answer: every command's --json equals the matching Python call,
over a grid of models (dense, MoE, a file), devices, engines, offload and layouts.
The four divergences of issue 13 are regression cases here."""

from __future__ import annotations

import json
import pickle
import subprocess
from pathlib import Path
from typing import Any

import pytest

import llmroof

FILE_MODEL = str(Path(__file__).resolve().parents[1] / "data" / "hf-configs" / "Qwen__Qwen3-8B.json")
MODELS = [("llama-3-8b", "q4_k_m"), ("qwen3-30b-a3b", "fp8"), (FILE_MODEL, None)]
DEVICES = ["rtx-4090", "h100-sxm"]
ENGINES = ["vllm", "llama.cpp"]


def run(cli: str, *args: str) -> dict[str, Any]:
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def flags(model: str, weights: str | None, device: str, engine: str) -> list[str]:
    f = ["--model", model, "--device", device, "--engine", engine]
    return f + (["--weights", weights] if weights else [])


def kwargs(model: str, weights: str | None, device: str, engine: str) -> dict[str, Any]:
    model_arg: Any = llmroof.Model.from_hf_config(model) if model.endswith(".json") else model
    return dict(model=model_arg, device=device, engine=engine, weights=weights)


@pytest.mark.parametrize("model,weights", MODELS)
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("engine", ENGINES)
def test_decode_and_prefill_parity(cli: str, model: str, weights: str | None, device: str, engine: str) -> None:
    f, k = flags(model, weights, device, engine), kwargs(model, weights, device, engine)
    # Defaults agree too: decode at 4096 cached tokens, prefill of 2048 tokens.
    assert run(cli, "decode", *f)["step"] == llmroof.decode(**k).to_dict()
    assert run(cli, "decode", *f, "--batch", "8", "--context", "0")["step"] == \
        llmroof.decode(**k, batch=8, context=0).to_dict()
    assert run(cli, "prefill", *f, "--prompt", "1000")["prefill"] == llmroof.prefill(**k, prompt=1000).to_dict()


@pytest.mark.parametrize("model,weights", MODELS)
@pytest.mark.parametrize("engine", ENGINES)
def test_plan_parity(cli: str, model: str, weights: str | None, engine: str) -> None:
    f, k = flags(model, weights, "rtx-4090", engine), kwargs(model, weights, "rtx-4090", engine)
    assert run(cli, "plan", *f, "--users", "2", "--context", "8k") == \
        llmroof.plan(**k, users=2, context=8192).to_dict()
    # An explicit 0.9 is 0.9 under every engine (0.9 used to mean "not given").
    assert run(cli, "plan", *f, "--memory-utilization", "0.9") == \
        llmroof.plan(**k, memory_utilization=0.9).to_dict()


@pytest.mark.parametrize("offload", ["0", "0.5"])
def test_offload_parity_and_zero_offload_is_no_offload(cli: str, offload: str) -> None:
    f = flags("llama-3-8b", "q4_k_m", "rtx-4090", "llama.cpp")
    k = kwargs("llama-3-8b", "q4_k_m", "rtx-4090", "llama.cpp")
    with_offload = run(cli, "plan", *f, "--offload", offload)
    assert with_offload == llmroof.plan(**k, offload=float(offload)).to_dict()
    if offload == "0":
        # Nothing offloaded: the engine's profile still applies, the band stays a band.
        plain = run(cli, "plan", *f)
        assert with_offload["decode_curve"] == plain["decode_curve"]
        assert with_offload["ttft"] == plain["ttft"]


def test_tp2_and_moe_compare_users_parity(cli: str) -> None:
    assert run(cli, "plan", "--model", "llama-3.1-70b", "--device", "h100-sxm:2", "--weights", "fp8") == \
        llmroof.plan(model="llama-3.1-70b", device="h100-sxm", devices=2, weights="fp8").to_dict()
    for engine in ENGINES:
        assert run(cli, "moe", "--model", "qwen3-30b-a3b", "--device", "rtx-4090", "--weights", "q4_k_m",
                   "--engine", engine, "--max-batch", "64") == \
            llmroof.moe(model="qwen3-30b-a3b", device="rtx-4090", weights="q4_k_m", engine=engine, max_batch=64).to_dict()
        assert run(cli, "compare", "--model", "qwen3-30b-a3b", "--model", "qwen3-32b", "--device", "h100-sxm",
                   "--engine", engine, "--max-batch", "64") == \
            llmroof.compare(models=["qwen3-30b-a3b", "qwen3-32b"], device="h100-sxm", engine=engine,
                            max_batch=64).to_dict()
        assert run(cli, "users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20",
                   "--engine", engine) == \
            llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20, engine=engine).to_dict()


def test_rate_uses_the_offload_and_the_documented_prompt(cli: str) -> None:
    f = flags("qwen3-30b-a3b", "q4_k_m", "rtx-4090", "llama.cpp")
    k = kwargs("qwen3-30b-a3b", "q4_k_m", "rtx-4090", "llama.cpp")
    off = run(cli, "plan", *f, "--offload", "experts", "--rate", "0.05", "--context", "1000")
    assert off == llmroof.plan(**k, offload="experts", rate=0.05, context=1000).to_dict()
    on = run(cli, "plan", *f, "--rate", "0.05", "--context", "1000")
    # Experts in host RAM slow every step; the prompt is min(context, 2048) = 1000 tokens.
    assert off["load"]["tpot_s"] > on["load"]["tpot_s"]
    assert off["prompt_tokens"] == 1000


def test_closed_loop_parity(cli: str) -> None:
    f = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "1000", "--output", "200", "--context", "1200"]
    for n in ("1", "64"):
        assert run(cli, "plan", *f, "--concurrency", n) == llmroof.plan(
            model="llama-3.1-8b", device="h100-sxm", prompt=1000, output=200, context=1200,
            concurrency=float(n)).to_dict()


def test_burst_parity(cli: str) -> None:
    # Every request sent at once: the command's --burst and --burst-lengths, Python's burst and burst_lengths.
    f = ["--model", "qwen3-32b", "--device", "a100-sxm-80gb", "--prompt", "200", "--output", "200", "--context", "2048"]
    kw = dict(model="qwen3-32b", device="a100-sxm-80gb", prompt=200, output=200, context=2048)
    for n, lengths in (("1", "fixed"), ("300", "exponential")):
        p = llmroof.plan(**kw, burst=int(n), burst_lengths=lengths).to_dict()  # type: ignore[arg-type]
        assert run(cli, "plan", *f, "--burst", n, "--burst-lengths", lengths) == p
        assert p["load"]["model"] == "burst" and p["load"]["requests"] == int(n) and p["load"]["lengths"] == lengths
    with pytest.raises(ValueError, match=r"^burst must be <= 100000 \(got 200000\)$"):
        llmroof.plan(**kw, burst=200000)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^burst_lengths needs burst$"):
        llmroof.plan(**kw, burst_lengths="exponential")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^a burst is a load model of its own; give it alone$"):
        llmroof.plan(**kw, burst=4, concurrency=4)  # type: ignore[arg-type]


def test_users_in_a_loop_parity(cli: str) -> None:
    # More than one user and no load model: the plan's users are a closed loop.
    f = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--users", "4", "--output", "300"]
    p = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", users=4, output=300).to_dict()
    assert run(cli, "plan", *f) == p
    assert p["load"]["concurrency"] == 4
    u = llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20, output=300)
    assert run(cli, "users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20", "--output", "300") == \
        u.to_dict()
    assert u.closed_loop is not None and u.closed_loop["concurrency"] == u.max_users


@pytest.mark.parametrize("engine", ["vllm", "llama.cpp", "sglang"])
def test_sweeps_take_the_engine_as_the_command_does(cli: str, engine: str) -> None:
    f = flags("llama-3-8b", "q4_k_m", "rtx-4090", engine)
    df = llmroof.sweep_decode(model="llama-3-8b", device="rtx-4090", weights="q4_k_m", batch=[1, 8],
                              context=[0, 4096], engine=engine)
    for b, c in ((1, 0), (8, 4096)):
        step = run(cli, "decode", *f, "--batch", str(b), "--context", str(c))["step"]
        row = df[(df["batch"] == b) & (df["context"] == c)].iloc[0]
        assert row["tpot_s_estimate"] == step["estimate_s"]
    pre = llmroof.sweep_prefill(model="llama-3-8b", device="rtx-4090", weights="q4_k_m", prompt=[1000], engine=engine)
    assert pre["ttft_s_estimate"].iloc[0] == run(cli, "prefill", *f, "--prompt", "1000")["prefill"]["estimate_s"]


def test_one_layout_rule_for_both_doors(cli: str) -> None:
    # tp with ep is refused by both (it used to be dropped silently in Python);
    # pp alone takes tp = devices / pp in both.
    bad = subprocess.run([cli, "plan", "--model", "deepseek-v3", "--device", "h200:8", "--ep", "8", "--tp", "2"],
                         capture_output=True, text=True)
    with pytest.raises(ValueError) as e:
        llmroof.plan(model="deepseek-v3", device="h200", devices=8, ep=8, tp=2)
    assert bad.returncode == 2 and str(e.value) in bad.stderr
    assert run(cli, "plan", "--model", "llama-3.1-70b", "--device", "h100-sxm:8", "--pp", "2") == \
        llmroof.plan(model="llama-3.1-70b", device="h100-sxm", devices=8, pp=2).to_dict()


def test_nodes_default_to_replicas_in_both_doors(cli: str) -> None:
    # Two nodes of 8 H100s and a model one node holds: a replica per node,
    # its users split, in the command and in Python alike; a row split of
    # llama.cpp likewise.
    f = ["--model", "llama-3.3-70b", "--device", "h100-sxm:8", "--nodes", "2", "--users", "64"]
    j = run(cli, "plan", *f)
    p = llmroof.plan(model="llama-3.3-70b", device="h100-sxm", devices=8, nodes=2, users=64)
    assert j == p.to_dict()
    assert j["parallel"]["replicas"] == 2 and "2 replicas" in str(p)
    assert run(cli, "plan", "--model", "llama-3.1-8b", "--device", "rtx-4090:2", "--engine", "llama.cpp", "--tp", "2") == \
        llmroof.plan(model="llama-3.1-8b", device="rtx-4090", devices=2, engine="llama.cpp", tp=2).to_dict()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("model", ["gemma-3-27b", FILE_MODEL])
def test_kv_parity(cli: str, engine: str, model: str) -> None:
    # Python's kv_cache used to ignore the engine (block size, formats it holds)
    # and a file's own KV format.
    m: Any = llmroof.Model.from_hf_config(model) if model.endswith(".json") else model
    assert run(cli, "kv", "--model", model, "--engine", engine, "--context", "100000", "--users", "3") == \
        llmroof.kv_cache(model=m, engine=engine, context=100000, users=3).to_dict()
    assert run(cli, "kv", "--model", model, "--engine", engine, "--block-tokens", "1") == \
        llmroof.kv_cache(model=m, engine=engine, block_tokens=1).to_dict()


def test_kv_format_the_engine_cannot_hold_is_refused_alike(cli: str) -> None:
    out = subprocess.run([cli, "kv", "--model", "llama-3-8b", "--kv", "q4_0"], capture_output=True, text=True)
    assert out.returncode == 2
    message = out.stderr.strip().removeprefix("llmroof: error: ")
    with pytest.raises(ValueError) as e:
        llmroof.kv_cache(model="llama-3-8b", kv="q4_0")
    assert str(e.value) == message
    assert llmroof.kv_cache(model="llama-3-8b", kv="q4_0", engine="llama.cpp").kv_bytes_per_token > 0


def test_file_model_with_other_weights_counts_them_as_the_command_does(cli: str) -> None:
    # A config-only FP8 file re-quantized by name: the weights that must fit are
    # the named format's, not the file's (moe and compare used the file's bytes).
    fp8 = str(Path(__file__).resolve().parents[1] / "data" / "hf-configs" / "Qwen__Qwen3-30B-A3B-FP8.json")
    m = llmroof.Model.from_hf_config(fp8)
    for weights in ("bf16", "q4_k_m"):
        f = ["--model", fp8, "--device", "h100-sxm", "--weights", weights]
        assert run(cli, "moe", *f, "--max-batch", "16") == \
            llmroof.moe(model=m, device="h100-sxm", weights=weights, max_batch=16).to_dict()
        assert run(cli, "plan", *f, "--users", "4") == \
            llmroof.plan(model=m, device="h100-sxm", weights=weights, users=4).to_dict()
    compared = run(cli, "compare", "--model", fp8, "--model", "qwen3-32b", "--device", "h100-sxm", "--max-batch", "16")
    mine = llmroof.compare(models=[m, "qwen3-32b"], device="h100-sxm", max_batch=16).to_dict()
    assert compared == mine  # each side names its file as the command's does
    # One model on two machines under two engines, and two engines on one
    # machine: what is given twice is per side, the rest shared.
    for args, kw in (
            (["--model", "qwen3-30b-a3b", "--device", "h100-sxm", "--device", "m3-ultra-80c", "--engine", "vllm",
              "--engine", "llama.cpp", "--kv", "fp8", "--kv", "q8_0"],
             dict(models="qwen3-30b-a3b", device=["h100-sxm", "m3-ultra-80c"], engine=["vllm", "llama.cpp"], kv=["fp8", "q8_0"])),
            (["--model", "llama-3.1-8b", "--device", "rtx-4090:2", "--engine", "vllm", "--engine", "llama.cpp",
              "--weights", "bf16", "--weights", "q8_0"],
             dict(models=["llama-3.1-8b"], device="rtx-4090:2", engine=["vllm", "llama.cpp"], weights=["bf16", "q8_0"]))):
        assert run(cli, "compare", *args, "--max-batch", "8") == llmroof.compare(max_batch=8, **kw).to_dict()
    with pytest.raises(ValueError, match="device must be one value or two"):
        llmroof.compare(models="llama-3.1-8b", device=["h100-sxm", "h200", "b200"])


def test_estimator_plans_and_counts_users_as_the_functions_do(cli: str) -> None:
    # One resolved deployment answers plan and users repeatedly with the
    # numbers of llmroof.plan / llmroof.users (and so of the command).
    qwen = llmroof.Model.from_hf_config(FILE_MODEL)
    for model, kw in (("llama-3.1-8b", dict(device="h100-sxm", engine="vllm", memory_utilization=0.8,
                                            max_num_seqs=64)),
                      (qwen, dict(device="rtx-4090", engine="llama.cpp", weights="q4_k_m")),
                      ("llama-3.1-70b", dict(device="h100-sxm", devices=2, weights="fp8", engine="sglang"))):
        est = llmroof.Estimator(model=model, **kw)  # type: ignore[arg-type]
        for load in (dict(users=4, context=8192), dict(rate=0.5, context=2048, output=256),
                     dict(concurrency=16, prompt=1000, output=200, context=1200)):
            assert est.plan(**load).to_dict() == llmroof.plan(model=model, **kw, **load).to_dict()  # type: ignore[arg-type]
        assert est.users(min_tokens_per_s=20, ttft_target_s=2).to_dict() == \
            llmroof.users(model=model, min_tokens_per_s=20, ttft_target_s=2, **kw).to_dict()  # type: ignore[arg-type]
    f = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20", "--block-tokens", "32"]
    assert run(cli, "users", *f) == llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20,
                                                  block_tokens=32).to_dict()


def test_estimator_memory_is_the_plans_memory_as_a_compiled_value(cli: str) -> None:
    # Estimator.memory answers the plan's memory question alone, as a compiled
    # MemoryPlan: its JSON is the command's `memory` object, its fields typed,
    # and it pickles through the C++ fields.
    qwen = llmroof.Model.from_hf_config(FILE_MODEL)
    for model, kw, flags in (
        ("llama-3.1-8b", dict(device="h100-sxm", engine="vllm", memory_utilization=0.9),
         ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--memory-utilization", "0.9"]),
        (qwen, dict(device="rtx-4090", engine="llama.cpp", weights="q4_k_m"),
         ["--model", FILE_MODEL, "--device", "rtx-4090", "--engine", "llama.cpp", "--weights", "q4_k_m"]),
        ("llama-3.1-70b", dict(device="h100-sxm", devices=2, weights="fp8", engine="sglang"),
         ["--model", "llama-3.1-70b", "--device", "h100-sxm:2", "--weights", "fp8", "--engine", "sglang"]),
    ):
        est = llmroof.Estimator(model=model, **kw)  # type: ignore[arg-type]
        for users, context in ((1, 4096), (8, 32768), (64, 131072)):
            memory = est.memory(users=users, context=context)
            command = run(cli, "plan", *flags, "--users", str(users), "--context", str(context))["memory"]
            assert memory.to_dict() == command
            assert est.plan(users=users, context=context).memory.to_dict() == command
            assert isinstance(memory.fits, bool) and isinstance(memory.kv_tokens, float)
            assert memory.fits == command["fits"] and memory.kv_budget_bytes == command["kv_budget_bytes"]
            again = pickle.loads(pickle.dumps(memory))
            assert again == memory and again.max_context_for_users == memory.max_context_for_users
    with pytest.raises(ValueError, match="users"):
        llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm").memory(users=0)


def test_issue33_llama_cpp_and_launches_parity(cli: str) -> None:
    # --offload auto, a layer split over two GPUs and the 2024 SGLang class:
    # the command and Python give one answer.
    f = flags("qwen3-32b", "q4_k_m", "rtx-4090", "llama.cpp")
    k = kwargs("qwen3-32b", "q4_k_m", "rtx-4090", "llama.cpp")
    auto = run(cli, "plan", *f, "--context", "32k", "--offload", "auto")
    assert auto == llmroof.plan(**k, context="32k", offload="auto").to_dict()
    assert auto["decode_curve"] == llmroof.plan(**k, context=32768, offload="auto").to_dict()["decode_curve"]
    split = run(cli, "plan", *flags("qwen3-32b", "q4_k_m", "rtx-4090:2", "llama.cpp"))
    assert split == llmroof.plan(**k, devices=2).to_dict()
    assert split["parallel"]["pp"] == 2 and split["parallel"]["tp"] == 1
    dsv3 = run(cli, "decode", "--model", "deepseek-v3", "--device", "h200:8", "--engine", "sglang@2024")
    py = llmroof.decode(model="deepseek-v3", device="h200", devices=8, engine="sglang@2024")
    assert dsv3["step"]["estimate_s"] == pytest.approx(py.estimate_s, rel=1e-12)


def test_tokens_as_text_and_profile_points() -> None:
    # "32k" is 32,768 tokens wherever a context or prompt is taken; bad text names the field.
    assert llmroof.plan(model="qwen3-8b", device="h100-sxm", context="32k").to_dict() == \
        llmroof.plan(model="qwen3-8b", device="h100-sxm", context=32768).to_dict()
    with pytest.raises(ValueError, match=r"^context must be a token count like 4096 or 128k \(got '32q'\)$"):
        llmroof.plan(model="qwen3-8b", device="h100-sxm", context="32q")
    # The launch term is a profile field: removing it speeds a step up.
    p = llmroof.plan(model="qwen3-8b", device="h100-sxm").to_dict()["efficiency"]
    # H100 SXM under vLLM prices launches at its own GEMM fixed time from the kernel
    # database (src/engine/kernel_fits.inc row "h100-sxm", "vllm": 3.08064e-06 s over 35,742 shapes).
    assert p["name"] == "kernel-fitted vllm" and p["points"] == 35742
    assert p["per_launch_s"] == pytest.approx(3.08064e-6)
    # The kernel families' fields read back and are taken in: a faster KV
    # stream speeds a long-context step; a bad one names the field.
    assert p["kv_stream"] == pytest.approx(0.55811) and p["collective_latency_s"] == pytest.approx(4.75286e-6)
    own = {k: v for k, v in p.items() if k != "at_limit"}
    assert llmroof.decode(model="qwen3-8b", device="h100-sxm", context=32000, efficiency={**own, "kv_stream": 0.9}).estimate_s \
        < llmroof.decode(model="qwen3-8b", device="h100-sxm", context=32000, efficiency=own).estimate_s
    assert llmroof.decode(model="qwen3-8b", device="h100-sxm", context=32000, efficiency=own).estimate_s == \
        pytest.approx(llmroof.decode(model="qwen3-8b", device="h100-sxm", context=32000).estimate_s, rel=1e-9)
    with pytest.raises(ValueError, match=r"efficiency\.attention_floor must be in \[0, 1\]"):
        llmroof.decode(model="qwen3-8b", device="h100-sxm", efficiency={"attention_floor_s": -1.0})
    fast = llmroof.decode(model="qwen3-8b", device="h100-sxm", efficiency={"per_launch_s": 0.0})
    assert fast.estimate_s < llmroof.decode(model="qwen3-8b", device="h100-sxm").estimate_s
    assert llmroof.plan(model="qwen3-8b", device="arc-b580", engine="llama.cpp").to_dict()["efficiency"]["points"] == 0


def test_device_spec_positional_and_reprs() -> None:
    # Device("custom:...") positional, as the command's --device takes it.
    d = llmroof.Device("custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF")
    assert d == llmroof.Device(memory="24GiB", bandwidth="936GB/s", bf16="71TF")
    assert llmroof.Device("h100-sxm") == llmroof.Device.get("h100-sxm")
    with pytest.raises(TypeError, match="either a device spec string or keyword arguments"):
        llmroof.Device("h100-sxm", memory="80GiB")
    # Results print what they hold, not <object at 0x...>.
    e = llmroof.Estimator(model="qwen3-8b", device="h100-sxm")
    assert repr(e.decode(batch=1, context=100)).startswith("Phase(decode, 1 tokens: estimate ")
    u = llmroof.users(model="qwen3-8b", device="h100-sxm", min_tokens_per_s=20)
    assert repr(u).startswith("Users(") and "t/s each" in repr(u)
    m = llmroof.moe(model="qwen3-30b-a3b", device="h100-sxm", max_batch=8)
    assert repr(m) == "MoeReport(llmroof.moe/1, batch 1-8 at 4,096 tokens)"
    c = llmroof.compare(models=["qwen3-30b-a3b", "qwen3-32b"], device="h100-sxm", max_batch=8)
    assert repr(c) == "Comparison(llmroof.compare/1, batch 1-8 at 4,096 tokens)"


def test_device_counts_as_the_command_writes_them(cli: str) -> None:
    # "h100-sxm:2" in Python is the command's --device h100-sxm:2, in every call and in sweeps.
    assert run(cli, "plan", "--model", "qwen3-32b", "--device", "h100-sxm:2") == \
        llmroof.plan(model="qwen3-32b", device="h100-sxm:2").to_dict()
    f = llmroof.sweep_decode(model="llama-3.1-70b", device=["h100-sxm:4", "h100-sxm:2"], weights="fp8",
                             batch=[1], context=4096)
    assert list(f["device"]) == ["h100-sxm:4", "h100-sxm:2"]
    four = llmroof.decode(model="llama-3.1-70b", device="h100-sxm", devices=4, weights="fp8")
    assert f["tpot_s_estimate"][0] == pytest.approx(four.estimate_s, rel=1e-12)
    with pytest.raises(ValueError, match=r"^device 'h100-sxm:4' names 4 devices; devices=2 contradicts it$"):
        llmroof.decode(model="qwen3-8b", device="h100-sxm:4", devices=2)
    with pytest.raises(ValueError, match=r"whole device count N in \[1, 1024\] per node \(got '0'\)"):
        llmroof.decode(model="qwen3-8b", device="h100-sxm:0")


def test_energy_and_cost_parity_and_refusals(cli: str) -> None:
    # The plan's energy section: the same numbers from the command and Python
    # (energy.hpp has the hand-computed cases); a price is never assumed.
    args = ["--model", "llama-3.1-70b", "--device", "h100-sxm:4", "--weights", "fp8", "--users", "32"]
    priced = ["--price-per-hour", "2", "--electricity", "0.15", "--pue", "1.3"]
    kw: dict[str, Any] = dict(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8", users=32)
    p = llmroof.plan(**kw, price_per_hour=2, electricity=0.15, pue=1.3)
    assert run(cli, "plan", *args, *priced) == p.to_dict()
    e = p.energy
    assert e["devices"] == 4 and 4 * 91 < e["power_w"] < 4 * 700
    assert e["joules_per_output_token"] == pytest.approx(e["power_w"] / e["output_tokens_per_s"])
    # $8 of GPUs + the power x PUE x $0.15 per hour, over the output tokens of that hour.
    assert e["cost_per_hour"] == pytest.approx(8 + e["power_w"] / 1e3 * 1.3 * 0.15)
    assert e["cost_per_million_output_tokens"] == pytest.approx(e["cost_per_hour"] / (3.6e-3 * e["output_tokens_per_s"]))
    unpriced = llmroof.plan(**kw).energy
    assert unpriced["cost_per_hour"] is None and unpriced["power_w"] == e["power_w"]
    assert llmroof.plan(model="llama-3.1-8b", device="m3-max-40c", engine="llama.cpp").energy["power_w"] is None
    for bad, message in ((dict(price_per_hour=2, purchase=30000), "price_per_hour and purchase"),
                         (dict(pue=0.5), "pue"), (dict(price_per_hour=-1), "price_per_hour")):
        with pytest.raises(ValueError, match=message):
            llmroof.plan(**kw, **bad)
    with pytest.raises(ValueError, match="has no power figure"):
        llmroof.plan(model="llama-3.1-8b", device="m3-max-40c", engine="llama.cpp", electricity=0.3)
    out = subprocess.run([cli, "plan", *args, "--price-per-hour", "2", "--purchase", "3"], capture_output=True, text=True)
    assert out.returncode == 2 and "price_per_hour and purchase" in out.stderr and out.stderr.count("\n") == 1
    # decode's energy: the step's power is the sweep's (one power model), its
    # joules per token the power over batch / estimate tokens/s, priced as a plan.
    d = run(cli, "decode", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--batch", "8", "--price-per-hour", "2",
            "--electricity", "0.15")
    sweep = llmroof.sweep_decode(model="llama-3.1-8b", device="h100-sxm", batch=8, context=4096)
    assert d["energy"]["power_w"] == pytest.approx(float(sweep["power_w"].iloc[0]), rel=1e-12)
    assert d["energy"]["joules_per_output_token"] == pytest.approx(d["energy"]["power_w"] * d["step"]["estimate_s"] / 8)
    assert d["energy"]["cost_per_hour"] == pytest.approx(2 + d["energy"]["power_w"] / 1e3 * 0.15)


def test_speculate_parity_and_refusals(cli: str) -> None:
    # One report from the command and Python (speculative_step.hpp has the hand-computed cases).
    mtp = ["--model", "deepseek-v3", "--device", "h200:8", "--engine", "sglang", "--draft-tokens", "3",
           "--context", "65536", "--max-batch", "16"]
    s = llmroof.speculate(model="deepseek-v3", device="h200:8", engine="sglang", draft_tokens=3, context=65536,
                          max_batch=16)
    assert run(cli, "speculate", *mtp) == s.to_dict()
    assert s.acceptance == [0.6, 0.6, 0.6] and s.tokens_per_step == pytest.approx(2.176)
    assert s.speedup == pytest.approx(s.tokens_per_s_per_user / s.plain_tokens_per_s_per_user)
    assert [r["batch"] for r in s.batches] == [1, 2, 4, 8, 16] and len(s.batches_frame()) == 5
    draft = ["--model", "llama-3.1-70b", "--device", "h100-sxm:4", "--spec", "draft", "--draft-model", "llama-3.2-1b",
             "--draft-tokens", "4", "--accept", "0.8,0.7,0.6,0.5", "--max-batch", "8"]
    d = llmroof.speculate(model="llama-3.1-70b", device="h100-sxm:4", method="draft", draft_model="llama-3.2-1b",
                          draft_tokens=4, acceptance=[0.8, 0.7, 0.6, 0.5], max_batch=8)
    assert run(cli, "speculate", *draft) == d.to_dict()
    assert d.draft_model == "llama-3.2-1b" and d.tokens_per_step == pytest.approx(1 + 0.8 + 0.56 + 0.336 + 0.168)
    e = llmroof.speculate(model="llama-3.1-8b", device="h100-sxm", method="eagle", draft_tokens=3)
    assert run(cli, "speculate", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--spec", "eagle",
               "--draft-tokens", "3") == e.to_dict()
    assert e.tokens_per_step == pytest.approx(2.75) and e.memory["weight_bytes"] == pytest.approx(2 * 424673280)
    for bad, message in ((dict(method="ngram"), "acceptance must be given for ngram"),
                         (dict(method="eagel", acceptance=0.5), "method must be mtp, draft, eagle or ngram"),
                         (dict(method="eagle", engine="ollama"), "ollama does not run eagle speculation"),
                         (dict(method="ngram", acceptance=1.5), "acceptance"),
                         (dict(method="ngram", acceptance=0.5, draft_tokens=0), "draft_tokens"),
                         (dict(method="draft", acceptance=0.5, draft_model="qwen3-0.6b"), "another vocabulary")):
        with pytest.raises(ValueError, match=message):
            llmroof.speculate(model="llama-3.1-8b", device="h100-sxm", **bad)
    with pytest.raises(ValueError, match="no multi-token-prediction layers"):
        llmroof.speculate(model="llama-3.1-8b", device="h100-sxm")
    out = subprocess.run([cli, "speculate", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--spec", "ngram"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "acceptance must be given" in out.stderr and out.stderr.count("\n") == 1


def test_users_energy_parity(cli: str) -> None:
    # The most users' energy: their decode step at the context, at the loop's output tokens/s.
    kw: dict[str, Any] = dict(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8", min_tokens_per_s=20)
    u = llmroof.users(**kw, price_per_hour=2, electricity=0.15, pue=1.2)
    e = u.energy
    assert e["output_tokens_per_s"] == pytest.approx(u.total_tokens_per_s_estimate)
    # $2/h x 4 devices + their power at $0.15/kWh x PUE 1.2.
    assert e["cost_per_hour"] == pytest.approx(8.0 + e["power_w"] / 1e3 * 0.15 * 1.2) and 4 * 91 < e["power_w"] < 4 * 700
    # The loop's prompts too: a prefill's energy and device time per input token.
    assert e["joules_per_input_token"] > 0 and e["cost_per_million_input_tokens"] > 0
    assert e["cost_per_million_output_tokens"] == pytest.approx(e["cost_per_hour"] / (3.6e-3 * e["output_tokens_per_s"]))
    est = llmroof.Estimator(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8")
    assert est.users(min_tokens_per_s=20, price_per_hour=2, electricity=0.15, pue=1.2).to_dict() == u.to_dict()
    with pytest.raises(ValueError, match="price_per_hour and purchase"):
        llmroof.users(**kw, price_per_hour=2, purchase=1)
    assert run(cli, "users", "--model", "llama-3.1-70b", "--device", "h100-sxm:4", "--weights", "fp8", "--tps", "20",
               "--price-per-hour", "2", "--electricity", "0.15", "--pue", "1.2") == u.to_dict()


def test_prefix_caching_parity_and_refusals(cli: str) -> None:
    # A shared prefix: the plan's and users' reports from the command and
    # Python (prefix_cache.hpp has the hand-computed cases).
    args = ["--model", "llama-3.1-70b", "--device", "h100-sxm:4", "--weights", "fp8", "--users", "32", "--context",
            "32k", "--prompt", "24k", "--prefix", "20k", "--prefix-hit", "0.9", "--output", "500"]
    kw: dict[str, Any] = dict(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8", users=32, context="32k",
                              prompt="24k", prefix="20k", prefix_hit=0.9, output=500)
    p = llmroof.plan(**kw)
    assert run(cli, "plan", *args) == p.to_dict()
    # 90% of the requests find the prefix and share it: 0.9 x 20,480 = 18,432 tokens apiece.
    assert p.prefix["cached_tokens"] == 20480 and p.prefix["shared_tokens"] == pytest.approx(18432)
    assert p.prefix["computed_tokens"] == pytest.approx(24576 - 0.9 * 20480)
    assert p.prefix["ttft_cached"]["estimate_s"] < p.ttft.estimate_s
    assert p.memory.shared_prefix_tokens == pytest.approx(18432) and p.memory.kv_shared_bytes > 0
    # Without it: more KV per user, a slower closed loop.
    plain = llmroof.plan(**{k: v for k, v in kw.items() if k not in ("prefix", "prefix_hit")})
    assert "prefix" not in plain.to_dict()
    assert p.memory.kv_bytes_needed < plain.memory.kv_bytes_needed
    assert p.load["ttft_s"] < plain.load["ttft_s"]
    off = llmroof.plan(**kw, prefix_caching=False)
    assert run(cli, "plan", *args, "--prefix-caching", "off") == off.to_dict()
    assert off.prefix["cached_tokens"] == 0 and off["engine_settings"]["prefix_caching"] is False
    ukw: dict[str, Any] = dict(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20, context="8k", prompt=4096,
                               prefix=3000)
    u = llmroof.users(**ukw)
    assert run(cli, "users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20", "--context", "8k",
               "--prompt", "4096", "--prefix", "3000") == u.to_dict()
    assert u.prefix["cached_tokens"] == 2992  # 187 whole blocks of 16
    est = llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm")
    assert est.users(min_tokens_per_s=20, context="8k", prompt=4096, prefix=3000).to_dict() == u.to_dict()
    for bad, message in ((dict(prefix_hit=0.5), "prefix_hit needs a prefix"),
                         (dict(prefix=5000, prompt=4096), "prefix must be <= the prompt"),
                         (dict(prefix=1000, prefix_hit=1.5), "prefix_hit"),
                         (dict(prefix=-1), "prefix"),
                         (dict(prefix_caching="yes"), "prefix_caching")):
        with pytest.raises(ValueError, match=message):
            llmroof.plan(model="llama-3.1-8b", device="h100-sxm", **bad)
    out = subprocess.run([cli, "plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--prefix-hit", "0.5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "prefix_hit needs a prefix" in out.stderr and out.stderr.count("\n") == 1


def test_disaggregation_parity_and_refusals(cli: str) -> None:
    # --pd on a plan: the same rows from the command and Python (disaggregation.hpp
    # has the hand-computed cases).
    args = ["--model", "llama-3.1-70b", "--device", "h100-sxm:8", "--weights", "fp8", "--context", "4608", "--prompt",
            "4k", "--output", "500"]
    kw: dict[str, Any] = dict(model="llama-3.1-70b", device="h100-sxm:8", weights="fp8", context=4608, prompt="4k",
                              output=500)
    p = llmroof.plan(**kw, pd="auto", min_tokens_per_s=60)
    assert run(cli, "plan", *args, "--pd", "auto", "--tps", "60") == p.to_dict()
    pd = p.disaggregation
    assert [r["layout"] for r in pd["rows"]] == ["aggregated 2 x TP 4", "aggregated 1 x TP 8", "1P1D"]
    # The one-shot NVLink all-reduce (a few microseconds within a node) lets one TP 8
    # instance at 60 t/s each out-serve a 1P1D split of two TP 4 pools.
    assert pd["best"] == "aggregated 1 x TP 8" and pd["link"] == "nvlink4" and pd["tpot_target_s"] == pytest.approx(1 / 60)
    q = llmroof.plan(**kw, pd=2, min_tokens_per_s=25, kv_link="ib-ndr", kv_link_efficiency=0.5, kv_overlap=True)
    assert run(cli, "plan", *args, "--pd", "2", "--tps", "25", "--kv-link", "ib-ndr", "--kv-link-efficiency", "0.5",
               "--kv-overlap") == q.to_dict()
    assert [r["layout"] for r in q.disaggregation["rows"]][2:] == ["1P3D", "2P2D", "3P1D"]
    assert q.disaggregation["layerwise"] is True and q.disaggregation["link_efficiency"] == 0.5
    assert "disaggregation" not in llmroof.plan(**kw).to_dict()
    assert all(r["loop"] is None for r in pd["rows"])
    # With a concurrency: each layout's closed loop of those users, the same from both doors.
    u = llmroof.plan(**kw, pd=2, concurrency=64)
    assert run(cli, "plan", *args, "--pd", "2", "--concurrency", "64") == u.to_dict()
    loops = [r["loop"] for r in u.disaggregation["rows"]]
    assert all(x["users"] == 64 for x in loops)
    assert loops[1]["ttft_s"] == u.load["ttft_s"]  # the fleet as one instance is the plan's own loop
    # Without a concurrency, the plan's users are its loop, on every layout too.
    v = llmroof.plan(**kw, pd=2, users=16)
    assert run(cli, "plan", *args, "--pd", "2", "--users", "16") == v.to_dict()
    assert all(r["loop"]["users"] == 16 for r in v.disaggregation["rows"])
    assert all(r["loop"] is None for r in llmroof.plan(**kw, pd=2, users=16, rate=1).disaggregation["rows"])
    for bad, message in ((dict(pd=3), "must divide the fleet's 8 devices"),
                         (dict(pd="two"), "pd must be 'auto' or a device count"),
                         (dict(min_tokens_per_s=60), "need pd"),
                         (dict(pd="auto", kv_link="warp"), "unknown link 'warp'"),
                         (dict(pd="auto", kv_link_efficiency=1.5), "kv_link.efficiency")):
        with pytest.raises(ValueError, match=message):
            llmroof.plan(**kw, **bad)
    with pytest.raises(ValueError, match="llama.cpp does not serve prefill and decode apart"):
        llmroof.plan(model="llama-3.1-8b", device="rtx-4090:2", engine="llama.cpp", pd="auto")
    out = subprocess.run([cli, "plan", *args, "--tps", "60"], capture_output=True, text=True)
    assert out.returncode == 2 and "--tps needs --pd" in out.stderr and out.stderr.count("\n") == 1


def test_plan_speculation_parity_and_refusals(cli: str) -> None:
    # plan --spec: the speculate report at the plan's users and context, from both doors.
    args = ["--model", "llama-3.1-70b", "--device", "h100-sxm:4", "--weights", "fp8", "--users", "8", "--spec", "draft",
            "--draft-model", "llama-3.2-1b", "--draft-tokens", "4", "--accept", "0.7"]
    spec = llmroof.Speculative(method="draft", draft_tokens=4, acceptance=0.7, draft_model="llama-3.2-1b")
    p = llmroof.plan(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8", users=8, speculative=spec)
    assert run(cli, "plan", *args) == p.to_dict()
    s = p.speculation
    assert s["batch"] == 8 and s["context"] == 4096 and s["draft_model"] == "llama-3.2-1b"
    assert [r["batch"] for r in s["batches"]] == [1, 2, 4, 8, 16]
    est = llmroof.Estimator(model="llama-3.1-70b", device="h100-sxm:4", weights="fp8")
    assert est.plan(users=8, speculative=spec).to_dict() == p.to_dict()
    eagle = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", users=32,
                         speculative=llmroof.Speculative(method="eagle", draft_tokens=3))
    assert run(cli, "plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--users", "32", "--spec", "eagle",
               "--draft-tokens", "3") == eagle.to_dict()
    assert "speculation" not in llmroof.plan(model="llama-3.1-8b", device="h100-sxm").to_dict()
    with pytest.raises(TypeError, match="speculative must be a Speculative"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", speculative="mtp")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no multi-token-prediction layers"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", speculative=llmroof.Speculative())
    out = subprocess.run([cli, "plan", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--accept", "0.5"],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "--accept needs --spec" in out.stderr and out.stderr.count("\n") == 1


def test_speculative_closed_loop_parity(cli: str) -> None:
    # The deployment decodes speculatively: the plan's closed loop and users'
    # search run draft + verify steps (speculative_step.hpp: step_of), from both doors.
    base = ["--model", "deepseek-v3", "--device", "h200:8", "--engine", "sglang", "--context", "8k", "--prompt", "4k",
            "--output", "1000"]
    spec = llmroof.Speculative(method="mtp", draft_tokens=3)
    kw: dict[str, Any] = dict(model="deepseek-v3", device="h200:8", engine="sglang", context="8k", prompt="4k",
                              output=1000)
    u = llmroof.users(min_tokens_per_s=30, speculative=spec, **kw)
    assert run(cli, "users", *base, "--tps", "30", "--spec", "mtp", "--draft-tokens", "3") == u.to_dict()
    plain = llmroof.users(min_tokens_per_s=30, **kw)
    assert "speculative" not in plain.to_dict() and plain.closed_loop["tokens_per_step"] == 1
    assert u.speculative["tokens_per_step"] == pytest.approx(2.176)
    assert u.speculative["acceptance"] == [0.6, 0.6, 0.6]
    assert u.closed_loop["tokens_per_step"] == pytest.approx(2.176)
    # More users meet 30 t/s each with the MTP drafts than without.
    assert u.max_users > plain.max_users
    est = llmroof.Estimator(model="deepseek-v3", device="h200:8", engine="sglang")
    assert est.users(min_tokens_per_s=30, context="8k", prompt="4k", output=1000, speculative=spec).to_dict() == u.to_dict()
    p = llmroof.plan(users=32, speculative=spec, **kw)
    assert p.load["tokens_per_step"] == pytest.approx(2.176)
    assert p.load["tpot_s"] < llmroof.plan(users=32, **kw).load["tpot_s"]
    with pytest.raises(ValueError, match="no multi-token-prediction layers"):
        llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=10, speculative=spec)


def run_status(cli: str, *args: str) -> tuple[int, dict[str, Any]]:
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return out.returncode, dict(json.loads(out.stdout))


def test_recommend_parity_and_refusals(cli: str) -> None:
    # Two models (one from a file), two device kinds with prices (hourly and a purchase), a shared prefix.
    status, want = run_status(
        cli, "recommend", "--model", "devstral-small-2-24b", "--model", FILE_MODEL, "--pool",
        "rtx-pro-6000-blackwell:2,rtx-4090:2", "--users", "4", "--context", "32k", "--prompt", "8k", "--output", "1k",
        "--prefix", "4k", "--prefix-hit", "0.5", "--tps", "20", "--ttft", "5",
        "--price", "rtx-pro-6000-blackwell=8500,rtx-4090=0.4/h", "--electricity", "0.2")
    got = llmroof.recommend(
        models=["devstral-small-2-24b", llmroof.Model.from_hf_config(FILE_MODEL)],
        pool={"rtx-pro-6000-blackwell": 2, "rtx-4090": 2}, users=4, context="32k", prompt="8k", output=1024,
        prefix="4k", prefix_hit=0.5, min_tokens_per_s=20, ttft_target_s=5,
        price={"rtx-pro-6000-blackwell": "8500", "rtx-4090": 0.4}, electricity=0.2)
    assert status == 0 and want["models"][1] == "Qwen__Qwen3-8B"  # a file's model by the id read from it
    assert got.to_dict() == want
    assert pickle.loads(pickle.dumps(got)) == got
    frame = got.frame()
    assert len(frame) == got.searched and set(frame["status"]) <= {"meets", "at_risk", "misses", "no_fit"}
    # An open loop, fixed formats and parts of the search left out: same answer both ways.
    status, want = run_status(cli, "recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:4", "--rate", "8",
                              "--kv", "fp8-e4m3", "--engines", "vllm", "--skip", "replicas,pd", "--tps", "20",
                              "--ttft", "1")
    got = llmroof.recommend(models="llama-3.1-8b", pool=[("h100-sxm", 4)], rate=8, kv="fp8-e4m3", engines=["vllm"],
                            skip=["replicas", "pd"], min_tokens_per_s=20, ttft_target_s=1)
    assert got.to_dict() == want and all(c["kv"] == "fp8-e4m3" and c["replicas"] == 1 for c in want["candidates"])
    # A capital budget (issue 55 item 4): the same misses both ways.
    status, want = run_status(cli, "recommend", "--model", "llama-3.1-8b", "--pool", "h100-sxm:4", "--users", "4",
                              "--price", "h100-sxm=30000", "--budget", "50000", "--skip", "pd,offload")
    got = llmroof.recommend(models="llama-3.1-8b", pool=[("h100-sxm", 4)], users=4, price="h100-sxm=30000",
                            budget=50000, skip=["pd", "offload"])
    assert got.to_dict() == want and want["targets"]["budget"] == 50000
    assert any(c["reason"] == "USD 60,000 to buy > budget 50,000" for c in want["candidates"])
    with pytest.raises(ValueError, match="budget needs a purchase price for every device kind"):
        llmroof.recommend(models="llama-3.1-8b", pool=[("h100-sxm", 4)], users=4, price="h100-sxm=2/h", budget=1)
    # Nothing meets: the command exits 1, Python returns the same report.
    status, want = run_status(cli, "recommend", "--model", "llama-3.1-8b", "--pool", "rtx-4090", "--users", "64",
                              "--tps", "500")
    got = llmroof.recommend(models="llama-3.1-8b", pool="rtx-4090", users=64, min_tokens_per_s=500)
    assert status == 1 and not got.met and got.best is None and got.closest and got.to_dict() == want
    with pytest.raises(ValueError, match="users and rate are two loads; give one"):
        llmroof.recommend(models="llama-3.1-8b", pool="rtx-4090", users=2, rate=1)
    with pytest.raises(ValueError, match="price: give every device kind of the pool a price, or none"):
        llmroof.recommend(models="llama-3.1-8b", pool="rtx-4090,h100-sxm", price="h100-sxm=2/h")
    with pytest.raises(ValueError, match="price names 'a100-sxm-80gb', which is not in pool"):
        llmroof.recommend(models="llama-3.1-8b", pool="h100-sxm", price={"a100-sxm-80gb": 2})
    with pytest.raises(ValueError, match=r"pool needs a whole count in \[1, 65536\] after ':'"):
        llmroof.recommend(models="llama-3.1-8b", pool="h100-sxm:0")
    with pytest.raises(ValueError, match="skip takes formats, replicas, offload, pd, mtp"):
        llmroof.recommend(models="llama-3.1-8b", pool="h100-sxm", skip=["speed"])
    with pytest.raises(TypeError):
        llmroof.recommend(models="llama-3.1-8b", pool=8)  # type: ignore[arg-type]


@pytest.mark.parametrize("device,engine", [("rx-7900-xtx", "llama.cpp"), ("rx-7900-xtx", "llama.cpp-vulkan"),
                                           ("arc-b580", "llama.cpp-sycl"), ("ryzen-ai-max-395", "llama.cpp-rocm")])
def test_llama_cpp_backends_parity(cli: str, device: str, engine: str) -> None:
    # A backend by name (or the device's own) picks the same kernel class and
    # profile in the command and in Python.
    f, k = flags("qwen3-30b-a3b", "q4_k_m", device, engine), kwargs("qwen3-30b-a3b", "q4_k_m", device, engine)
    assert run(cli, "decode", *f)["step"] == llmroof.decode(**k).to_dict()
    assert run(cli, "prefill", *f, "--prompt", "4096")["prefill"] == llmroof.prefill(**k, prompt=4096).to_dict()
    assert run(cli, "plan", *f, "--users", "2", "--context", "8k") == \
        llmroof.plan(**k, users=2, context=8192).to_dict()


def test_llama_cpp_backend_on_the_wrong_vendor_is_refused_alike(cli: str) -> None:
    out = subprocess.run([cli, "decode", "--model", "qwen3-8b", "--device", "h100-sxm", "--engine", "llama.cpp-hip"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    with pytest.raises(ValueError, match=r"engine backend 'hip' does not run on NVIDIA GPUs \(device 'h100-sxm'\)"):
        llmroof.decode(model="qwen3-8b", device="h100-sxm", engine="llama.cpp-hip")


def test_lockstep_parity_and_refusals(cli: str) -> None:
    # A fixed-length benchmark's closed loop (arrival_pattern::lockstep; the
    # hand-computed cases are in tests/cpp/test_serving.cpp).
    args = ["--model", "llama-3.1-8b", "--device", "h100-sxm", "--prompt", "1000", "--output", "300", "--context", "1300",
            "--concurrency", "16", "--arrivals", "lockstep"]
    kw: dict[str, Any] = dict(model="llama-3.1-8b", device="h100-sxm", prompt=1000, output=300, context=1300,
                              concurrency=16, arrivals="lockstep")
    p = llmroof.plan(**kw)
    assert run(cli, "plan", *args) == p.to_dict()
    assert p.load["arrivals"] == "lockstep" and p.load["first_wave_ttft_s"] >= p.load["ttft_s"] * (1 - 1e-9)
    mixed = llmroof.plan(**{**kw, "arrivals": "mixed"})
    assert mixed.load["arrivals"] == "mixed" and mixed.load["first_wave_ttft_s"] is None
    assert p.load["ttft_s"] > mixed.load["ttft_s"]
    u = llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20, prompt=1000, output=300,
                      context=1300, arrivals="lockstep")
    assert run(cli, "users", "--model", "llama-3.1-8b", "--device", "h100-sxm", "--tps", "20", "--prompt", "1000",
               "--output", "300", "--context", "1300", "--arrivals", "lockstep") == u.to_dict()
    est = llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm")
    assert est.users(min_tokens_per_s=20, prompt=1000, output=300, context=1300,
                     arrivals="lockstep").to_dict() == u.to_dict()
    with pytest.raises(ValueError, match="arrivals must be mixed or lockstep"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", concurrency=4, arrivals="sync")
    with pytest.raises(ValueError, match="prefix_hit must be 0 or 1 in lockstep"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", concurrency=4, arrivals="lockstep", prefix=64,
                     prefix_hit=0.5)
    with pytest.raises(TypeError, match="arrivals must be a str"):
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", arrivals=1)  # type: ignore[arg-type]


def test_tp_attention_with_ep_experts(cli: str) -> None:
    # --tp 4 --ep 4: TP attention, experts in 4 groups (parallel.hpp has the hand-computed bytes).
    p = llmroof.plan(model="qwen3-30b-a3b", device="h100-sxm:4", tp=4, ep=4, users=16, context="8k")
    assert run(cli, "plan", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:4", "--tp", "4", "--ep", "4", "--users",
               "16", "--context", "8k") == p.to_dict()
    assert p["parallel"]["tp"] == 4 and p["parallel"]["ep"] == 4
    with pytest.raises(ValueError, match=r"ep \(3\) must divide tp \(4\)"):
        llmroof.plan(model="qwen3-30b-a3b", device="h100-sxm:4", tp=4, ep=3)


def test_dp_attention_beside_tp(cli: str) -> None:
    # dp_attention=True as --dp-attention (parallel.hpp has the hand-computed bytes).
    p = llmroof.plan(model="deepseek-v3", device="h200:8", weights="fp8", dp_attention=True, users=64, context="8k",
                     engine="sglang")
    assert run(cli, "plan", "--model", "deepseek-v3", "--device", "h200:8", "--weights", "fp8", "--dp-attention",
               "--users", "64", "--context", "8k", "--engine", "sglang") == p.to_dict()
    assert p["parallel"]["dp_attention"] is True
    with pytest.raises(ValueError, match="dp_attention beside tp needs ep = 1"):
        llmroof.plan(model="deepseek-v3", device="h200:8", tp=8, ep=4, dp_attention=True, engine="sglang")
    with pytest.raises(ValueError, match="dp_attention beside tp: vllm does not run it"):
        llmroof.plan(model="deepseek-v3", device="h200:8", dp_attention=True)
    with pytest.raises(TypeError, match="dp_attention must be True or False"):
        llmroof.plan(model="deepseek-v3", device="h200:8", dp_attention="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("device,engine", [("m4-max-40c", "llama.cpp"), ("ryzen-9-7950x", "llama.cpp"),
                                           ("h100-sxm", "vllm")])
def test_no_engine_named_is_the_devices_own_alike(cli: str, device: str, engine: str) -> None:
    # Issue 55 item 2: vLLM is never planned where it does not run (a Mac, a
    # CPU); the command, the C++ default (default_engine_for) and Python agree.
    f = ["--model", "qwen3-30b-a3b", "--device", device, "--weights", "q4_k_m"]
    k = dict(model="qwen3-30b-a3b", device=device, weights="q4_k_m")
    p = run(cli, "plan", *f, "--users", "2")
    assert p["engine"] == engine
    assert p == llmroof.plan(**k, users=2).to_dict()
    assert p == run(cli, "plan", *f, "--users", "2", "--engine", engine)
    u = run(cli, "users", *f, "--tps", "10")
    assert u["engine"] == engine and u == llmroof.users(**k, min_tokens_per_s=10).to_dict()
    c = run(cli, "compare", *f, "--weights", "q8_0", "--max-batch", "8")
    assert c == llmroof.compare(models="qwen3-30b-a3b", device=device, weights=["q4_k_m", "q8_0"], max_batch=8).to_dict()
    assert run(cli, "decode", *f)["step"] == llmroof.decode(**k).to_dict()


def test_model_paths_as_the_command_takes_them(cli: str, tmp_path: Path) -> None:
    # Issue 55 item 6: model= takes what --model takes: a config.json path as
    # str or pathlib.Path, or the folder holding it; the same plan both ways.
    want = run(cli, "plan", "--model", FILE_MODEL, "--device", "h100-sxm", "--users", "2")
    assert llmroof.plan(model=FILE_MODEL, device="h100-sxm", users=2).to_dict() == want
    assert llmroof.plan(model=Path(FILE_MODEL), device="h100-sxm", users=2).to_dict() == want
    folder = tmp_path / "Qwen3-8B"
    folder.mkdir()
    (folder / "config.json").write_text(Path(FILE_MODEL).read_text())
    assert run(cli, "plan", "--model", str(folder), "--device", "h100-sxm")["memory"] == \
        llmroof.plan(model=folder, device="h100-sxm").to_dict()["memory"]
    assert llmroof.decode(model=str(folder), device="h100-sxm").to_dict() == \
        run(cli, "decode", "--model", str(folder), "--device", "h100-sxm")["step"]
    # A catalog name with a '/' is the catalog's; a missing file names itself.
    assert llmroof.plan(model="Qwen/Qwen3-8B", device="h100-sxm").to_dict()["model"] == "qwen3-8b"
    with pytest.raises(ValueError, match="nowhere.gguf"):
        llmroof.plan(model="nowhere.gguf", device="h100-sxm")


def test_print_compare_prints_its_table() -> None:
    # print(compare(...)) is a table with its conclusion, as print(plan(...)) is.
    c = llmroof.compare(models=["qwen3-30b-a3b", "qwen3-32b"], device="rtx-pro-6000-blackwell", context=32768)
    text = str(c)
    lines = text.splitlines()
    assert lines[0] == "llmroof compare: qwen3-30b-a3b vs qwen3-32b, every sequence at 32,768 tokens"
    assert "qwen3-32b on 1 x rtx-pro-6000-blackwell, weights bf16, KV bf16: fits, KV room for 2 sequences" in text
    assert lines[-1] == "  qwen3-30b-a3b stays faster per user up to batch 2, the most both hold"
    assert sum(1 for line in lines if line.rstrip().endswith("-")) == 9  # batches 4-1,024: one side cannot hold them
    assert repr(c).startswith("Comparison(llmroof.compare/1")
    glm = str(llmroof.compare(models=["glm-4.5-air", "qwen3-32b"], device="rtx-pro-6000-blackwell", max_batch=8))
    assert glm.splitlines()[-1] == "  no conclusion: a side does not fit" and "does NOT fit, short by 119.23 GiB" in glm
