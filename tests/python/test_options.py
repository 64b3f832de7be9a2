"""The deployment keywords are decided once: every function that takes them
shows them in its signature with the same defaults and docs, refuses the ones
it does not take, and answers with the command's numbers for each."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing
from typing import Any, Callable

import pandas as pd
import pytest

import llmroof

DEPLOYMENT = list(llmroof.DeploymentOptions.__annotations__)
ENGINE = list(llmroof.EngineOptions.__annotations__)
LOAD = list(llmroof.PlanLoad.__annotations__)
TAKERS: list[tuple[Callable[..., Any], list[str]]] = [
    (llmroof.decode, DEPLOYMENT), (llmroof.prefill, DEPLOYMENT), (llmroof.moe, DEPLOYMENT),
    (llmroof.plan, LOAD + ENGINE), (llmroof.users, ENGINE), (llmroof.Estimator, ENGINE),
    (llmroof.Estimator.plan, LOAD),
    (llmroof.sweep_decode, list(llmroof.SweepDecodeOptions.__annotations__)),
    (llmroof.sweep_prefill, list(llmroof.SweepOptions.__annotations__)),
    (llmroof.compare, list(llmroof.CompareOptions.__annotations__)),
]
# The command's defaults (src/cli/options.cpp): no format named = the file's or
# bf16, TP over every device, the device's own engine (None: default_engine_for).
DEFAULTS = dict(weights=None, kv=None, lm_head=None, engine=None, devices=1, tp=None, pp=1, ep=1, dp_attention=False, nodes=1,
                link=None, inter_link=None,
                efficiency=None, memory_utilization=None, block_tokens=None, max_num_seqs=None,
                max_num_batched_tokens=None, max_model_len=None, prefix_caching=None,
                users=1, context=4096, prompt=None, prefix=0, prefix_hit=None, arrivals="mixed", rate=None, concurrency=None,
                output=512, ttft_target_s=1.0,
                offload=None, host="ryzen-9-7950x", threads=None, price_per_hour=None, purchase=None, years=None,
                electricity=None, pue=None, pd=None, min_tokens_per_s=None, kv_link=None, kv_link_efficiency=None,
                kv_overlap=False, burst=None, burst_lengths="fixed", speculative=None)
SWEEP_DEFAULTS = DEFAULTS  # a sweep's combination is the deployment decode() resolves (issue 29, V4)


def test_the_groups_are_the_commands() -> None:
    assert DEPLOYMENT == ["weights", "kv", "lm_head", "engine", "devices", "tp", "pp", "ep", "dp_attention", "nodes", "link", "inter_link",
                          "efficiency"]
    assert ENGINE == DEPLOYMENT + ["memory_utilization", "block_tokens", "max_num_seqs", "max_num_batched_tokens",
                                   "max_model_len", "prefix_caching"]
    assert list(llmroof.PlanOptions.__annotations__) == LOAD + ENGINE


@pytest.mark.parametrize("fn,names", TAKERS, ids=lambda x: getattr(x, "__name__", ""))
def test_signature_and_docs_show_every_keyword_with_its_default(fn: Callable[..., Any], names: list[str]) -> None:
    params = inspect.signature(fn).parameters
    assert list(params)[-len(names):] == names
    assert "options" not in params
    for name in names:
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
        defaults = SWEEP_DEFAULTS if fn.__name__.startswith("sweep") else DEFAULTS
        assert params[name].default == defaults[name], name
    doc = inspect.cleandoc(fn.__doc__ or "")
    assert "{options}" not in doc
    headings = {w.strip() for line in doc.splitlines() if not line.startswith(" ") for w in line.split(",")}
    assert set(names) <= headings, set(names) - headings


def test_each_keyword_has_one_type_in_its_typed_dict_and_where_its_default_is_decided() -> None:
    # The typed dicts (what mypy checks) and _compile / _plan_args / _sweep
    # (where defaults are decided) name each keyword's type alike.
    from llmroof import _resolve, _sweeps

    sources = {llmroof.EngineOptions: (_resolve._compile,), llmroof.PlanLoad: (_resolve._plan_args,),
               llmroof.SweepDecodeOptions: (_sweeps._sweep, _resolve._compile)}  # a sweep's deployment is _compile's
    for options, found_in in sources.items():
        declared = typing.get_type_hints(options)
        decided: dict[str, Any] = {}
        for source in reversed(found_in):  # the first source's own types win
            decided.update(typing.get_type_hints(source, localns={"pd": pd}))  # pandas is imported only for type checks
        for name, kind in declared.items():
            assert decided[name] == kind, (options.__name__, name, kind, decided[name])


def test_type_hints_are_the_shown_keywords() -> None:
    # typing.get_type_hints (pydantic's validate_call, typeguard, sphinx) sees
    # the keywords of the signature, not **options: Unpack[...].
    hints = typing.get_type_hints(llmroof.plan)
    assert "options" not in hints
    assert set(LOAD + ENGINE) <= set(hints)
    assert hints["engine"] == (str | None) and hints["return"] is llmroof.Plan
    assert set(DEPLOYMENT) <= set(typing.get_type_hints(llmroof.Estimator.__init__))
    # Functions that return frames resolve too (pandas is imported for the hint).
    for fn in (llmroof.sweep_decode, llmroof.sweep_prefill, llmroof.validate, llmroof.moe_table):
        assert typing.get_type_hints(fn)["return"] is pd.DataFrame, fn.__name__


def test_importing_llmroof_leaves_pandas_unimported() -> None:
    code = "import sys, typing, llmroof; assert 'pandas' not in sys.modules; print('ok')"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "ok\n"


def test_a_keyword_a_function_does_not_take_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match=r"^decode\(\) got an unexpected keyword argument 'memory_utilization'$"):
        llmroof.decode(model="llama-3-8b", device="rtx-4090", memory_utilization=0.9)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^plan\(\) got an unexpected keyword argument 'engin'$"):
        llmroof.plan(model="llama-3-8b", device="rtx-4090", engin="vllm", zzz=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Estimator.__init__\(\) got an unexpected keyword argument 'batch'$"):
        llmroof.Estimator(model="llama-3-8b", device="rtx-4090", batch=4)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^Estimator.plan\(\) got an unexpected keyword argument 'engine'$"):
        llmroof.Estimator(model="llama-3-8b", device="rtx-4090").plan(engine="vllm")  # type: ignore[call-arg]


def run(cli: str, *args: str) -> dict[str, Any]:
    out = subprocess.run([cli, *args, "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return dict(json.loads(out.stdout))


def test_layout_and_lm_head_reach_moe_and_users_as_in_the_command(cli: str) -> None:
    # moe took only devices before; users took no lm_head. The command's moe
    # and users take the model and layout options of every other question.
    assert run(cli, "moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:2", "--ep", "2", "--max-batch", "64") == \
        llmroof.moe(model="qwen3-30b-a3b", device="h100-sxm", devices=2, ep=2, max_batch=64).to_dict()
    six = run(cli, "moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:6", "--ep", "6", "--max-batch", "8")
    assert six == llmroof.moe(model="qwen3-30b-a3b", device="h100-sxm", devices=6, ep=6, max_batch=8).to_dict()
    # 32 query / 4 KV heads: the dense twin takes TP 2 x PP 3 on the 6 devices.
    assert (six["dense_equivalent"]["tp"], six["dense_equivalent"]["pp"]) == (2, 3)
    assert run(cli, "moe", "--model", "qwen3-30b-a3b", "--device", "h100-sxm:2", "--tp", "2", "--weights", "fp8",
               "--lm-head", "fp8", "--max-batch", "64") == \
        llmroof.moe(model="qwen3-30b-a3b", device="h100-sxm", devices=2, tp=2, weights="fp8", lm_head="fp8",
                    max_batch=64).to_dict()
    assert run(cli, "users", "--model", "llama-3.1-8b", "--device", "l40s", "--tps", "20", "--weights", "fp8",
               "--lm-head", "fp8") == \
        llmroof.users(model="llama-3.1-8b", device="l40s", min_tokens_per_s=20, weights="fp8", lm_head="fp8").to_dict()
    # compare takes the layout too (tp and lm_head, as `llmroof compare --tp 2 --lm-head fp8`).
    assert run(cli, "compare", "--model", "qwen3-30b-a3b", "--model", "qwen3-32b", "--device", "h100-sxm:2", "--tp", "2",
               "--weights", "fp8", "--lm-head", "fp8", "--max-batch", "16") == \
        llmroof.compare(models=["qwen3-30b-a3b", "qwen3-32b"], device="h100-sxm", devices=2, tp=2, weights="fp8",
                        lm_head="fp8", max_batch=16).to_dict()
    # The links of the layout (the command's --link and --inter-link).
    for flags, kw in ((["--device", "rtx-4090:2", "--link", "pcie3"], dict(devices=2, link="pcie3")),
                      # TP over both nodes (replicas, the default there, cross no link).
                      (["--device", "h100-sxm:8", "--nodes", "2", "--tp", "16", "--inter-link", "ib-hdr"],
                       dict(devices=8, nodes=2, tp=16, inter_link="ib-hdr"))):
        mine = llmroof.plan(model="llama-3.1-70b", device=flags[1].split(":")[0], weights="fp8", **kw)  # type: ignore[arg-type]
        assert run(cli, "plan", "--model", "llama-3.1-70b", "--weights", "fp8", *flags) == mine.to_dict()
        assert mine.to_dict() != llmroof.plan(model="llama-3.1-70b", device=flags[1].split(":")[0], weights="fp8",
                                              **{k: v for k, v in kw.items() if "link" not in k}).to_dict()  # type: ignore[arg-type]
    bf16_head = llmroof.users(model="llama-3.1-8b", device="l40s", min_tokens_per_s=20, weights="fp8")
    assert bf16_head.to_dict() != run(cli, "users", "--model", "llama-3.1-8b", "--device", "l40s", "--tps", "20",
                                      "--weights", "fp8", "--lm-head", "fp8")


def test_options_pass_through_as_a_dict() -> None:
    # One typed dict of options serves every question (mypy checks its keys).
    opts: llmroof.EngineOptions = {"weights": "fp8", "engine": "sglang", "devices": 2, "memory_utilization": 0.85}
    est = llmroof.Estimator(model="llama-3.1-70b", device="h100-sxm", **opts)
    assert est.plan(users=4).to_dict() == llmroof.plan(model="llama-3.1-70b", device="h100-sxm", users=4, **opts).to_dict()
    step = llmroof.decode(model="llama-3.1-70b", device="h100-sxm", weights="fp8", engine="sglang", devices=2)
    assert step.estimate_s == pytest.approx(est.decode(batch=1, context=4096).estimate_s, rel=1e-12)


def test_the_cached_deployment_answers_and_refuses_as_the_uncached_one() -> None:
    # decode() and prefill() by catalog ids reuse one resolved deployment;
    # efficiency={} takes the path that resolves each time.
    kw: dict[str, Any] = dict(model="llama-3.1-8b", device="h100-sxm")
    for fn in (llmroof.decode, llmroof.prefill):
        assert fn(**kw).to_dict() == fn(**kw, efficiency={}).to_dict()
    for extra in ({}, {"efficiency": {}}):
        with pytest.raises(ValueError, match=r"^cached must be >= 0 \(got -1\)$"):
            llmroof.prefill(**kw, **extra, prompt=10, cached=-1)
    # The cache key holds each value's type: True equals 1 but is no pipeline degree.
    llmroof.prefill(**kw, pp=1)
    for fn in (llmroof.decode, llmroof.prefill):
        with pytest.raises(TypeError, match="pp must be an int"):
            fn(**kw, pp=True)


def test_what_a_report_hands_out_is_a_copy() -> None:
    p = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", users=4)
    load = typing.cast(dict, p.load)
    before = load["saturation"]["users"]
    load["saturation"]["users"] = -1
    p.decode_curve[0]["context"] = -1
    p.to_dict()["memory"]["users"] = -1
    assert typing.cast(dict, p.load)["saturation"]["users"] == before
    assert p.decode_curve[0]["context"] == 0
    assert p.to_dict()["memory"]["users"] == 4
    p["load"]["saturation"]["users"] = -1  # the dict-style key is a copy too
    assert p["load"]["saturation"]["users"] == before
