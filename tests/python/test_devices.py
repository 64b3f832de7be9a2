"""Devices by vendor name, devices users bring (keywords, JSON files, the
inline form), and that they plan like the equivalent catalog device."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import llmroof


def test_vendor_names_resolve() -> None:
    assert llmroof.Device.get("GeForce RTX 4090 24GB").id == "rtx-4090"
    assert llmroof.Device.get("H100 80GB HBM3").id == "h100-sxm"
    assert llmroof.Device.get("M3 Max 40-core").id == "m3-max-40c"
    assert llmroof.Device.get("Radeon RX 7900 XTX").id == "rx-7900-xtx"
    assert llmroof.Device.match("M3 Max") == ["m3-max-30c", "m3-max-40c"]
    with pytest.raises(ValueError, match=r"device 'M3 Max' is ambiguous: it matches 2 devices: m3-max-30c"):
        llmroof.Device.get("M3 Max")
    assert len(llmroof.Device.ids()) == 194


def test_keyword_device_converts_units() -> None:
    d = llmroof.Device(memory="24GiB", bandwidth="936GB/s", bf16="71TF", int8="284TOPS")
    assert d.memory_bytes == 24 * 2**30
    assert d.bandwidth_bytes_per_s == pytest.approx(9.36e11)
    assert d.fields["bf16_flops_per_s"] == pytest.approx(7.1e13)
    assert "not given: fp32, fp8, fp4" in d.fields["source"]


def test_keyword_device_errors_name_the_field() -> None:
    with pytest.raises(ValueError, match=r"^custom device: bandwidth must have a unit like GB/s \(got '936'\)$"):
        llmroof.Device(memory="24GiB", bandwidth="936", bf16="71TF")
    with pytest.raises(ValueError, match=r"^custom device: memory must have a unit like GiB \(got '24'\)$"):
        llmroof.Device(memory=24, bandwidth="936GB/s", bf16="71TF")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^custom device: memory is required"):
        llmroof.Device(bandwidth="936GB/s", bf16="71TF")
    with pytest.raises(ValueError, match=r"^custom device: memory has unit 'GB/s'"):
        llmroof.Device(memory="24GB/s", bandwidth="936GB/s", bf16="71TF")
    with pytest.raises(TypeError, match="either a fields dict or keyword arguments"):
        llmroof.Device({"id": "x"}, memory="1GiB")


def _same_plan(a: llmroof.Device | str, b: llmroof.Device | str) -> None:
    pa = llmroof.plan(model="llama-3.1-8b", device=a, users=4, context=32768).to_dict()
    pb = llmroof.plan(model="llama-3.1-8b", device=b, users=4, context=32768).to_dict()
    pa.pop("device")
    pb.pop("device")
    assert pa == pb


def test_json_file_and_inline_form_plan_like_the_catalog_device(tmp_path: Path) -> None:
    catalog = llmroof.Device.get("rtx-3090")
    path = tmp_path / "my-gpu.json"
    fields = {k: v for k, v in catalog.fields.items() if k != "device_class"}
    fields["class"] = catalog.fields["device_class"]
    path.write_text(json.dumps(fields))
    from_file = llmroof.Device.from_json(path)
    assert from_file.fields["bandwidth_bytes_per_s"] == catalog.fields["bandwidth_bytes_per_s"]
    _same_plan(catalog, from_file)
    _same_plan("rtx-3090", str(path))
    # The TDP too: the plan's energy section reads it (350 W, the catalog's).
    inline = ("custom:memory=24GiB,bandwidth=936GB/s,fp32=35.6TF,bf16=71TF,int8=284TOPS,class=consumer,"
              "vendor=NVIDIA,memory_type=GDDR6X,tdp=350W")
    _same_plan("rtx-3090", inline)
    _same_plan(catalog, llmroof.Device(memory="24GiB", bandwidth="936GB/s", fp32="35.6TF", bf16="71TF",
                                       int8="284TOPS", device_class="consumer", vendor="NVIDIA",
                                       memory_type="GDDR6X", tdp="350W"))


def test_device_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"memory_bytes": 1e9, "bf16_flops_per_s": 1e12}))
    with pytest.raises(ValueError, match=r"bad.json: bandwidth_bytes_per_s is required$"):
        llmroof.Device.from_json(path)


def test_models_resolve_by_name() -> None:
    assert llmroof.Model.get("DeepSeek-R1-Distill-Qwen-14B").id == "qwen2.5-14b"
    assert llmroof.Model.get("teknium/OpenHermes-2.5-Mistral-7B").id == "mistral-7b-v0.1"
    assert len(llmroof.Model.ids()) >= 80
    assert "Qwen3-30B-A3B-Instruct-2507" in llmroof.Model.get("qwen3-30b-a3b").fields["aliases"]


def test_a_laptop_name_with_memory_is_that_configuration() -> None:
    # The computer's name says nothing of the chip; 48 GB is the machine asked
    # about (Apple's GB: 48 x 2^30 B), not the row's largest 128.
    d = llmroof.Device.get("MacBook Pro M4 Max 48GB")
    assert d.id == "m4-max-40c" and d.memory_bytes == 48 * 2**30
    assert llmroof.Device.get("MacBook Pro M4 Max 128GB").memory_bytes == 128 * 2**30
    p = llmroof.plan(model="qwen3-8b", device="MacBook Pro M4 Max 48GB")
    # The Metal working set: 3/4 of 48 GiB above 32 GiB.
    assert p.memory.capacity_bytes == pytest.approx(0.75 * 48 * 2**30)


def test_both_kv_rates_of_a_windowed_model() -> None:
    # gpt-oss-120b: 36 layers x 2 x 8 x 64 x 2 B = 73,728 B a token within the
    # 128-token windows, the 18 global layers' 36,864 B past them.
    m = llmroof.plan(model="gpt-oss-120b", device="h100-sxm").memory
    assert m.kv_bytes_per_token == 73728
    assert m.kv_bytes_per_token_past_window == 36864
    assert "36,864 B past the sliding windows" in str(llmroof.plan(model="gpt-oss-120b", device="h100-sxm"))
