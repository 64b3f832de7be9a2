from __future__ import annotations

import json
import math
import pickle
from pathlib import Path
import subprocess
import types
import typing
from typing import Any
from concurrent.futures import ProcessPoolExecutor

import pytest

import llmroof
from conftest import SEED


def test_seed_plan_numbers() -> None:
    p = llmroof.plan(**SEED)  # type: ignore[arg-type]
    m = p.memory
    assert m.kv_bytes_per_token == 163840  # 2 x 8 x 128 x 2 B x 40 layers
    assert m.kv_bytes_per_sequence == 20 * 2**30  # 163,840 x 131,072
    assert m.fits is False and m.shortfall_bytes > 0
    assert m.max_users_at_context == 2  # 57.35 GiB of KV budget under current vLLM (test_memory_plan.cpp)
    assert 90_000 < m.max_context_for_users < 110_000
    curve = p.decode_curve
    assert curve[0]["context"] == 0 and curve[-1]["context"] == 131072
    assert 45 < curve[0]["single_user_tokens_per_s_estimate"] < 55
    assert 20 < curve[-1]["single_user_tokens_per_s_estimate"] < 30
    text = repr(p)
    assert "163,840 B" in text and "do NOT fit" in text and "GiB" in text


def test_cli_json_and_python_agree_on_the_seed(cli: str) -> None:
    out = subprocess.run(
        [cli, "plan", "--model", "devstral-small-2-24b", "--device", "rtx-pro-6000-blackwell",
         "--weights", "fp8", "--kv", "bf16", "--users", "4", "--context", "128k", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    from_cli = json.loads(out)
    from_py = llmroof.plan(**SEED).to_dict()  # type: ignore[arg-type]
    assert from_cli == from_py


def test_decode_prefill_kv() -> None:
    d = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", batch=1, context=0)
    # 15,009,857,536 B of weights (tests/cpp/test_ops.cpp) over 3.35 TB/s.
    assert d.bytes >= 15_009_857_536
    assert d.bound_s == pytest.approx(d.bytes / 3.35e12, rel=1e-9)
    assert d.estimate_s >= d.bound_s
    assert d.bottleneck == "memory"
    ragged = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", context=[100, 900])
    assert ragged.to_dict()["sequences"] == 2
    p = llmroof.prefill(model="llama-3.1-8b", device="h100-sxm", prompt=4096)
    assert p.bottleneck == "compute"
    assert len(p.ops_frame()) == len(p.ops)
    kv = llmroof.kv_cache(model="deepseek-v3", kv="bf16", context=1000, users=2, block_tokens=1)
    assert kv.kv_bytes_per_token == 70272  # (512 + 64) x 2 B x 61
    assert kv.kv_bytes_total == 2 * 1000 * 70272


def test_catalog_objects() -> None:
    m = llmroof.Model.get("llama-3.1-8b")
    assert m.parameters().total == 8_030_261_248
    assert "8.03B" in repr(m)
    assert llmroof.Format.get("Q4_0").bits == 4.5
    d = llmroof.Device.get("rtx-3090")
    assert d.bandwidth_bytes_per_s == 936e9
    assert "936 GB/s" in repr(d)
    assert len(llmroof.Device.ids()) >= 40
    assert "devstral-small-2-24b" in llmroof.Model.ids()
    custom = llmroof.Model.custom(num_layers=2, hidden_size=64, num_heads=4, num_kv_heads=2,
                                  head_dim=16, ffn_size=128, vocab_size=100)
    # 2 x (64x64 + 2x64x32 + 64x64 + 3x64x128 + 128 norms) + 64 + 2 x 100 x 64 = 57,920
    assert custom.parameters().total == 2 * (64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 128) + 64 + 2 * 6400
    assert llmroof.expected_distinct_experts(num_experts=128, experts_per_token=8, tokens=1) == 8


@pytest.mark.parametrize(
    ("kwargs", "exc", "message"),
    [
        (dict(model="llama-3.1-7b"), ValueError, "unknown model 'llama-3.1-7b'; closest: llama-3.1-70b"),
        (dict(device="h100"), ValueError, "device 'h100' is ambiguous: it matches 3 devices: h100-pcie"),
        (dict(device="h900"), ValueError, "unknown device 'h900'; closest"),
        (dict(weights="fp7"), ValueError, "unknown format 'fp7'"),
        (dict(users=0), ValueError, "users must be in [1, 1000000000] (got 0)"),
        (dict(users="4"), TypeError, "users must be a number (got str)"),
        (dict(context=math.nan), ValueError, "context must be finite (got nan)"),
        (dict(context=-1), ValueError, "context must be >= 0 (got -1)"),
        (dict(devices=0), ValueError, "devices must be >= 1 (got 0)"),
        (dict(model=3), TypeError, "model must be a catalog id, a path or a Model (got int)"),
        (dict(memory_utilization=1.5), ValueError, "engine.memory_utilization must be in (0, 1] (got 1.5)"),
        (dict(efficiency={"memory": 0}), ValueError, "efficiency.memory must be in (0, 1] (got 0)"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, object], exc: type[Exception], message: str) -> None:
    args: dict[str, object] = dict(model="llama-3.1-8b", device="h100-sxm")
    args.update(kwargs)
    with pytest.raises(exc) as info:
        llmroof.plan(**args)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_custom_model_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"architecture.num_kv_heads must be > 0 \(got 0\)"):
        llmroof.Model.custom(num_layers=2, hidden_size=64, num_heads=4, num_kv_heads=0, head_dim=16,
                             ffn_size=128, vocab_size=100)
    with pytest.raises(TypeError, match=r"num_layers must be an int \(got str\)"):
        llmroof.Model.custom(num_layers="two", hidden_size=64)
    with pytest.raises(ValueError, match=r"device.bandwidth must be > 0"):
        llmroof.Device.custom(memory_bytes=1e9, bf16_flops_per_s=1e12)


def test_objects_pickle() -> None:
    for obj in (
        llmroof.Model.get("deepseek-v3"),
        llmroof.Device.get("h200"),
        llmroof.Format.get("nvfp4"),
        llmroof.plan(model="llama-3.1-8b", device="l4"),
        llmroof.decode(model="llama-3.1-8b", device="l4"),
    ):
        again = pickle.loads(pickle.dumps(obj))
        assert again == obj
        assert repr(again) == repr(obj)


def test_a_deployment_without_a_device_answers_only_device_free_questions() -> None:
    m = llmroof.Model.get("llama-3.1-8b").fields
    bare = llmroof._core.deployment.Deployment(m, None, "bf16", "bf16", None, 1, None, None, None, "vllm", None, None, "")
    placed = llmroof._core.deployment.Deployment(m, llmroof.Device.get("h100-sxm").fields, "bf16", "bf16", None, 1,
                                                 None, None, None, "vllm", None, None, "")
    assert bare.kv_report(4096, 1)["kv_bytes_per_token"] == 131072  # 32 layers x 2 x 8 x 128 x 2 B
    for ask in (lambda: bare.decode(1, 0), lambda: bare.moe_report(0, 8), lambda: placed.compare_report(bare, 0, 8),
                lambda: bare.compare_report(placed, 0, 8)):
        with pytest.raises(ValueError, match="device is required for this question"):
            ask()


def test_models_and_devices_are_frozen_and_hashable_by_value() -> None:
    m, d = llmroof.Model.get("llama-3.1-8b"), llmroof.Device.get("h100-sxm")
    # Equal values hash alike, so they key dicts and caches.
    assert {m: 1, d: 2}[llmroof.Model.get("llama-3.1-8b")] == 1
    assert hash(d) == hash(llmroof.Device.get("h100-sxm")) and d != llmroof.Device.get("h200")
    for edit in (lambda: m.fields.__setitem__("num_layers", 1), lambda: m.fields.update(num_layers=1),
                 lambda: d.fields.pop("memory_bytes"), lambda: m.fields.clear()):
        with pytest.raises(TypeError, match="fields are read-only"):
            edit()
    assert m.fields["num_layers"] == 32 and llmroof.Model.get("llama-3.1-8b").fields["num_layers"] == 32
    # A changed copy is a new model.
    two = llmroof.Model.custom(**{**m.fields, "num_layers": 2})
    assert two.fields["num_layers"] == 2 and two != m
    again = pickle.loads(pickle.dumps(m))
    assert again == m and hash(again) == hash(m)
    with pytest.raises(TypeError):
        again.fields["num_layers"] = 1


def test_estimators_pickle_for_worker_processes() -> None:
    # multiprocessing and joblib send the estimator to workers by pickle; it
    # is resolved again there from what it was made of, and answers alike.
    qwen = llmroof.Model.from_hf_config(str(Path(__file__).resolve().parents[1] / "data" / "hf-configs" /
                                            "Qwen__Qwen3-8B.json"))
    for est in (llmroof.Estimator(model="llama-3.1-70b", device="h100-sxm", devices=2, weights="fp8",
                                  engine="sglang"),
                llmroof.Estimator(model=qwen, device="rtx-4090", engine="llama.cpp")):
        again = pickle.loads(pickle.dumps(est))
        for batch, context in ((1, 0), (8, 4096), (64, 131072)):
            assert again.decode(batch=batch, context=context).estimate_s == \
                est.decode(batch=batch, context=context).estimate_s
        assert again.prefill(prompt=1000).estimate_s == est.prefill(prompt=1000).estimate_s


def _tps(model: llmroof.Model) -> float:
    return llmroof.decode(model=model, device="h100-sxm").tokens_per_s_estimate


def test_objects_cross_process_boundaries() -> None:
    models = [llmroof.Model.get(i) for i in ("llama-3.1-8b", "qwen3-8b")]
    with ProcessPoolExecutor(max_workers=2) as pool:
        remote = list(pool.map(_tps, models))
    assert remote == [_tps(m) for m in models]


def test_matplotlib_is_not_imported_by_the_package() -> None:
    code = "import sys, llmroof; llmroof.plan(model='llama-3.1-8b', device='l4'); print('matplotlib' in sys.modules)"
    out = subprocess.run([__import__("sys").executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_efficiency_overrides_reach_the_new_profile_fields() -> None:
    # A 1 TB/s streaming cap on an H100 SXM (0.66 x 3,350 GB/s = 2,211 GB/s
    # without it) slows batch-1 decode of an 8B bf16 model; the engine traits
    # come back in the profile dict.
    free = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", weights="bf16", context=0)
    capped = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", weights="bf16", context=0,
                            efficiency={"stream_cap_bytes_per_s": 1e12})
    assert capped.estimate_s > 1.8 * free.estimate_s
    assert capped.bound_s == pytest.approx(free.bound_s)
    with pytest.raises(ValueError, match=r"efficiency.kv_memory must be in \(0, 1\] \(got 2\)"):
        llmroof.decode(model="llama-3.1-8b", device="h100-sxm", efficiency={"kv_memory": 2})
    # FP8 prefill on an H100: the GEMMs' share of eta_c on the FP8 roof moves TTFT.
    fp8 = dict(model="llama-3.1-8b", device="h100-sxm", weights="fp8", prompt=4096)
    slow = llmroof.prefill(**fp8, efficiency={"low_precision": 0.5})
    full = llmroof.prefill(**fp8, efficiency={"low_precision": 1.0})
    assert slow.estimate_s > 1.3 * full.estimate_s
    with pytest.raises(ValueError, match=r"efficiency.low_precision must be in \(0, 1\] \(got 0\)"):
        llmroof.prefill(**fp8, efficiency={"low_precision": 0})
    p = llmroof.plan(model="llama-3-8b", device="rtx-4090", weights="q4_k_m", engine="llama.cpp").to_dict()
    assert p["efficiency"]["stream_cap_bytes_per_s"] > 1e12
    assert p["efficiency"]["fused_attention"] is True


def test_memory_plan_fields_are_typed_and_match_the_schema() -> None:
    p = llmroof.plan(model="llama-3.1-8b", device="h100-sxm")
    fields = {k for k, v in vars(llmroof.MemoryPlan).items() if not k.startswith("_") and hasattr(v, "__get__")
              and not callable(getattr(p.memory, k))}
    assert fields == set(p.to_dict()["memory"])
    assert isinstance(p.memory.fits, bool) and isinstance(p.memory.kv_tokens, float)
    with pytest.raises(AttributeError):
        p.memory.kv_per_token  # noqa: B018 (not a field: no attribute lookup by dict key)


def test_decode_by_catalog_names_is_one_compiled_call_with_the_same_answer() -> None:
    # Catalog names and built objects resolve once (cached); the Phase reads the
    # compiled timing and serializes its per-op report on demand: the same
    # numbers as the uncached path (an efficiency dict always resolves anew).
    fast = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", batch=8, context=2048)
    slow = llmroof.decode(model="llama-3.1-8b", device="h100-sxm", batch=8, context=2048, efficiency={})
    objects = llmroof.decode(model=llmroof.Model.get("llama-3.1-8b"), device=llmroof.Device.get("h100-sxm"),
                             batch=8, context=2048)
    assert objects.to_dict() == slow.to_dict()
    for name in ("bound_s", "estimate_s", "tokens_per_s_bound", "tokens_per_s_estimate", "bytes", "flop", "bottleneck"):
        assert getattr(fast, name) == getattr(slow, name) == fast.to_dict()[name]
    assert fast.to_dict() == slow.to_dict() and fast == slow
    assert pickle.loads(pickle.dumps(fast)) == slow
    for bad, message in ((dict(batch=0), "batch"), (dict(weights="nope"), "unknown format 'nope'"), (dict(tp=3), "tp x pp")):
        with pytest.raises(ValueError, match=message) as by_name:
            llmroof.decode(model="llama-3.1-8b", device="h100-sxm", **bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError) as by_model:
            llmroof.decode(model=llmroof.Model.get("llama-3.1-8b"), device="h100-sxm", **bad)  # type: ignore[arg-type]
        assert str(by_name.value) == str(by_model.value)


def _reports() -> list[Any]:
    return [
        llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20),
        llmroof.moe(model="qwen3-30b-a3b", device="h100-sxm", max_batch=16),
        llmroof.compare(models=["qwen3-30b-a3b", "qwen3-32b"], device="h100-sxm", max_batch=16),
        llmroof.kv_cache(model="gemma-3-27b", context=8192),
        llmroof.plan(model="llama-3.1-8b", device="h100-sxm", users=4),
        llmroof.decode(model="llama-3.1-8b", device="h100-sxm"),
        llmroof.calibrate(Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv"),
    ]


def test_a_reports_properties_are_the_keys_of_its_json() -> None:
    # The compiled classes' properties come from the report tables the
    # command's JSON is written from: the same keys, in order, the same values
    # (MemoryPlan and Phase for the nested memory and phases), a frame per list of rows.
    for r in _reports():
        d = r.to_dict()
        keys = [k for k, _, _ in type(r)._keys]
        assert [k for k in keys if k in d] == list(d), type(r).__name__
        for key, kind, doc in type(r)._keys:
            assert doc, (type(r).__name__, key)
            value = getattr(r, key)
            if kind in ("MemoryPlan", "Phase"):
                assert type(value).__name__ == kind and value.to_dict() == d[key]
            else:
                assert value == d.get(key), (type(r).__name__, key)
            assert r[key] == d[key] if key in d else True
        for frame in type(r)._frames:
            rows = getattr(r, next(k for k, kind, _ in type(r)._keys if kind.startswith("list[") and
                                   frame in (f"{k}_frame", "curve_frame")))
            assert len(getattr(r, frame)()) == len(rows)
        again = pickle.loads(pickle.dumps(r))
        assert type(again) is type(r) and again == r and again.to_dict() == d and repr(again) == repr(r)
        assert r != d and hash(type(r)) and type(r).__hash__ is None
        with pytest.raises(KeyError):
            r["no such key"]


def test_model_and_device_fields_are_their_typed_dicts() -> None:
    # ModelFields / DeviceFields (Model.custom's and Device.custom's keywords)
    # name every field the core hands out, with its type.
    def check(kind: Any, fields: Any) -> None:
        hints = typing.get_type_hints(kind)
        assert set(fields) == set(hints), (kind.__name__, set(fields) ^ set(hints))
        for key, value in fields.items():
            hint = hints[key]
            if typing.get_origin(hint) is typing.Literal:
                assert value in typing.get_args(hint), (key, value)
            else:
                expected = (float, int) if hint is float else (typing.get_origin(hint) or hint,)
                assert isinstance(value, expected), (kind.__name__, key, value)

    for model in ("llama-3.1-8b", "deepseek-v3", "gemma-3-4b", "qwen3-next-80b-a3b"):
        check(llmroof.ModelFields, llmroof.Model.get(model).fields)
    for device in ("h100-sxm", "rtx-4090", "m3-max-40c"):
        check(llmroof.DeviceFields, llmroof.Device.get(device).fields)
    custom = llmroof.Model.custom(num_layers=2, hidden_size=64, num_heads=4, ffn_size=128, vocab_size=256)
    check(llmroof.ModelFields, custom.fields)
    assert llmroof.ModelFields.__required_keys__ == frozenset()  # custom() takes any subset
    # The core takes any mapping, as its stub says.
    proxy = types.MappingProxyType(dict(custom.fields))
    assert llmroof._core.catalog.validate_model(proxy)["num_layers"] == 2
    # **fields: Unpack[ModelFields] resolves for typing.get_type_hints (pydantic, sphinx).
    assert typing.get_args(typing.get_type_hints(llmroof.Model.custom)["fields"]) == (llmroof.ModelFields,)
    assert typing.get_args(typing.get_type_hints(llmroof.Device.custom)["fields"]) == (llmroof.DeviceFields,)


def test_rows_loads_and_alternatives_of_the_reports() -> None:
    def check(kind: Any, rows: list[Any]) -> None:
        hints = typing.get_type_hints(kind)
        for row in rows:
            assert set(kind.__required_keys__) <= set(row) <= set(hints), (kind.__name__, set(row) ^ set(hints))

    p = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", users=4)
    assert p.load is not None and "saturation" in p.load and p.load["concurrency"] == 4
    rate = llmroof.plan(model="llama-3.1-8b", device="h100-sxm", rate=2).load
    assert rate is not None and rate["rate_requests_per_s"] == 2
    assert llmroof.plan(model="llama-3.1-8b", device="h100-sxm").load is None
    # Rows are copies: editing one leaves the report alone.
    p.decode_curve[0]["context"] = -1
    assert p.decode_curve[0]["context"] == 0
    seed = llmroof.plan(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8", users=4,
                        context=131072)
    # The seed does not fit; fp8 KV would (DESIGN: 4 x 10 GiB at 131,072 tokens).
    assert seed.alternatives[0]["change"] == "KV cache in fp8-e4m3" and seed.alternatives[0]["fits"]
    assert (seed.model, seed.device, seed.devices, seed.weights, seed.prompt_tokens) == \
        ("devstral-small-2-24b", "rtx-pro-6000-blackwell", 1, "fp8", 2048)
    assert list(seed.alternatives_frame()["change"]) == [a["change"] for a in seed.alternatives]
    u = llmroof.users(model="llama-3.1-8b", device="h100-sxm", min_tokens_per_s=20)
    assert u.closed_loop is not None and u.closed_loop["concurrency"] == u.max_users
    # 1, 2, 4, ... below twice the answer, and the answer: the last point holds it, one more users' step is slower.
    assert [p["users"] for p in u.curve][:3] == [1, 2, 4] and u.curve[-1]["users"] >= u.max_users
    assert any(p["users"] == u.max_users and p["fits"] for p in u.curve)
    assert list(u.curve_frame()["users"]) == [p["users"] for p in u.curve]
    cal = llmroof.calibrate(Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv")
    assert "residuals" in cal.fits[0] and "residuals" not in cal.fits_frame().columns
    check(llmroof.RoutingSample, [llmroof.simulate_routing(popularity=[0.5, 0.5], experts_per_token=1, tokens=4)])
    configs = Path(__file__).parents[1] / "data" / "hf-configs"
    awq = llmroof.Model.from_file(configs / "mistralai__Devstral-Small-2-24B-Instruct-2512.AWQ-4bit.patched.json")
    assert awq.source is not None and awq.source["tensors"] is None
    check(llmroof.ModelSource, [awq.source])
    formats = awq.formats
    assert formats is not None and formats["ffn"]["name"] == "int4-g32" and formats["lm_head"]["bits"] == 16
    formats["ffn"]["name"] = "edited"  # a copy: the model keeps its own
    assert awq.formats is not None and awq.formats["ffn"]["name"] == "int4-g32"
    profile = llmroof._core.catalog.default_profile(llmroof.Device.get("h100-sxm").fields)
    assert set(profile) == set(llmroof.Efficiency.__annotations__)
    llmroof.decode(model="llama-3.1-8b", device="h100-sxm", efficiency=profile)  # the full profile is accepted back


def test_efficiency_enums_and_scheduler_steps_are_checked_by_name() -> None:
    kw: dict[str, Any] = dict(model="llama-3.1-8b", device="h100-sxm")
    with pytest.raises(ValueError, match=r"^host_overlap must be serial or overlapped \(got 'async'\)$"):
        llmroof.decode(**kw, efficiency={"host_overlap": "async"})
    with pytest.raises(ValueError, match=r"^quantized_path must be native, dequantize or int8_dot \(got 'mmq'\)$"):
        llmroof.decode(**kw, efficiency={"quantized_path": "mmq"})
    with pytest.raises(ValueError, match=r"^efficiency.scheduler_steps must be in \[1, 1024\] \(got 0\)$"):
        llmroof.decode(**kw, efficiency={"scheduler_steps": 0})
    # Overlapped host work hides the class default's 0.3 ms per step under the
    # ~16 ms of kernels of an 8B BF16 decode step: 0.3 ms less.
    serial = llmroof.decode(**kw, efficiency={"host_overlap": "serial"})
    overlapped = llmroof.decode(**kw, efficiency={"host_overlap": "overlapped"})
    assert overlapped.estimate_s == pytest.approx(serial.estimate_s - 0.3e-3, rel=1e-9)


def test_a_shorthand_for_several_formats_warns_which_it_reads_as() -> None:
    # The command's stderr note, as a warning; the plan is q4_0's.
    with pytest.warns(UserWarning, match=r"weights: q4 reads as q4_0 \(also: q4_1"):
        p = llmroof.plan(model="llama-3.1-8b", device="rtx-4090", weights="q4")
    assert p.weights == "q4_0"
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        llmroof.plan(model="llama-3.1-8b", device="rtx-4090", weights="q4_k_m")
