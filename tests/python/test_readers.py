"""Model files: config.json, GGUF headers (written by the independent `gguf`
package) and safetensors headers (written by `safetensors`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

import llmroof

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "hf-configs"
CONFIG = {
    "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256, "tie_word_embeddings": False,
}


# Layouts the reader does not take yet; each must be refused with a ValueError, never crash.
UNSUPPORTED = {
    "nvidia__Llama-3_3-Nemotron-Super-49B-v1.json",
    "nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4.json", "nvidia__Nemotron-H-56B-Base-8K.json",
    "tencent__Hunyuan-A13B-Instruct.json",
}


def test_shipped_configs_match_published_sizes() -> None:
    rows = []
    for path in sorted(CONFIGS.glob("*.json")):
        if path.name in UNSUPPORTED:
            with pytest.raises(ValueError):
                llmroof.Model.from_hf_config(path)
            continue
        m = llmroof.Model.from_hf_config(path)
        p = m.parameters()
        rows.append((path.name, p.total / 1e9, p.active / 1e9))
    assert len(rows) == 64
    totals = {name: total for name, total, _ in rows}
    assert totals["deepseek-ai__DeepSeek-V3.json"] == pytest.approx(671, rel=0.01)
    assert totals["openai__gpt-oss-120b.json"] == pytest.approx(116.8, rel=0.01)
    assert totals["zai-org__GLM-4.5-Air.json"] == pytest.approx(106, rel=0.01)


def test_devstral_awq_config() -> None:
    m = llmroof.Model.from_hf_config(CONFIGS / "mistralai__Devstral-Small-2-24B-Instruct-2512.AWQ-4bit.patched.json")
    assert m.fields["num_layers"] == 40 and m.fields["num_kv_heads"] == 8 and m.fields["head_dim"] == 128
    assert m.formats is not None
    assert m.formats["weights"]["name"] == "int4-g32" and m.formats["weights"]["bits"] == 4.5
    assert m.formats["lm_head"]["name"] == "bf16"
    assert m.source is not None and m.source["vision_params"] == pytest.approx(434_761_728)
    # Loaded: counted weights + the vision tower in bf16.
    plan = llmroof.plan(model=m, device="rtx-pro-6000-blackwell", users=1, context=4096)
    assert plan.memory.weight_bytes == pytest.approx(m.loaded_weight_bytes)


def test_cli_reads_a_config_path(cli: str) -> None:
    out = subprocess.run([cli, "kv", "--model", str(CONFIGS / "deepseek-ai__DeepSeek-V3.json"), "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert json.loads(out)["kv_bytes_per_token"] == 70272


def _write_gguf(path: Path) -> int:
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(2)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_context_length(4096)
    w.add_vocab_size(256)
    rng = np.random.default_rng(0)

    def raw(name: str, shape: tuple[int, int], qtype: gguf.GGMLQuantizationType) -> None:
        block, size = gguf.GGML_QUANT_SIZES[qtype]
        rows, cols = shape
        data = rng.integers(0, 255, size=(rows, cols // block * size), dtype=np.uint8)
        w.add_tensor(name, data, raw_dtype=qtype)  # byte shape; gguf derives the element shape

    Q = gguf.GGMLQuantizationType
    w.add_tensor("token_embd.weight", rng.standard_normal((256, 64)).astype(np.float16))
    raw("output.weight", (256, 256), Q.Q6_K)
    for i in range(2):
        raw(f"blk.{i}.attn_q.weight", (64, 64), Q.Q8_0)
        raw(f"blk.{i}.attn_k.weight", (32, 64), Q.Q8_0)
        raw(f"blk.{i}.attn_v.weight", (32, 64), Q.Q8_0)
        raw(f"blk.{i}.attn_output.weight", (64, 64), Q.Q4_0)
        raw(f"blk.{i}.ffn_gate.weight", (128, 256), Q.Q4_K)
        raw(f"blk.{i}.ffn_up.weight", (128, 256), Q.Q4_K)
        raw(f"blk.{i}.ffn_down.weight", (64, 128), Q.Q8_0)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(64, dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(64, dtype=np.float32))
    w.add_tensor("output_norm.weight", np.ones(64, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    reader = gguf.GGUFReader(str(path))
    return int(sum(int(t.n_bytes) for t in reader.tensors))


def test_gguf_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    written = _write_gguf(path)
    m = llmroof.Model.from_gguf(path)
    assert m.source is not None and m.source["tensors"] is not None
    assert m.source["tensors"]["bytes"] == written
    assert m.loaded_weight_bytes == written
    assert m.fields["num_layers"] == 2 and m.fields["num_kv_heads"] == 2
    by_type = m.source["tensors"]["by_type"]
    assert set(by_type) == {"F16", "F32", "Q4_0", "Q4_K", "Q6_K", "Q8_0"}
    # The typed keys (llmroof.Tensors, TensorTotal) are the reader's.
    assert set(m.source["tensors"]) == set(llmroof.Tensors.__annotations__)
    for group in (*by_type.values(), *m.source["tensors"]["by_component"].values()):
        assert set(group) == set(llmroof.TensorTotal.__annotations__)
    assert set(m.source) == set(llmroof.ModelSource.__annotations__)
    plan = llmroof.plan(model=m, device="rtx-3090", context=1024)
    assert plan.memory.weight_bytes == written


def test_safetensors_round_trip_single_and_sharded(tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    rng = np.random.default_rng(1)
    tensors = {
        "model.embed_tokens.weight": rng.standard_normal((256, 64)).astype(np.float16),
        "lm_head.weight": rng.standard_normal((256, 64)).astype(np.float32),
        "model.layers.0.self_attn.q_proj.weight": rng.integers(-8, 8, (64, 32), dtype=np.int8),
        "model.norm.weight": np.ones(64, dtype=np.float32),
    }
    save_file(tensors, str(tmp_path / "model.safetensors"))
    expected = sum(a.nbytes for a in tensors.values())
    m = llmroof.Model.from_safetensors(tmp_path / "model.safetensors")
    assert m.source is not None and m.source["tensors"]["bytes"] == expected
    comps = m.source["tensors"]["by_component"]
    assert comps["embedding"]["bytes"] == 256 * 64 * 2 and comps["lm_head"]["bytes"] == 256 * 64 * 4

    shard_dir = tmp_path / "sharded"
    shard_dir.mkdir()
    (shard_dir / "config.json").write_text(json.dumps(CONFIG))
    names = sorted(tensors)
    weight_map = {}
    for k, part in enumerate((names[:2], names[2:])):
        fname = f"model-{k + 1:05d}-of-00002.safetensors"
        save_file({n: tensors[n] for n in part}, str(shard_dir / fname))
        weight_map.update({n: fname for n in part})
    (shard_dir / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    sharded = llmroof.Model.from_safetensors(shard_dir)
    assert sharded.source is not None and sharded.source["tensors"]["bytes"] == expected


def test_reader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(20))
    with pytest.raises(ValueError, match="bad.gguf: offset 0: wrong magic: not a GGUF file"):
        llmroof.Model.from_gguf(bad)
    with pytest.raises(ValueError, match="a GGUF file name ends in .gguf"):
        llmroof.Model.from_gguf(tmp_path / "x.bin")
    from safetensors.numpy import save_file

    save_file({"w": np.zeros(4, dtype=np.float32)}, str(tmp_path / "model.safetensors"))
    with pytest.raises(ValueError, match="no config.json beside the safetensors"):
        llmroof.Model.from_safetensors(tmp_path / "model.safetensors")
    (tmp_path / "broken.safetensors").write_bytes(b"\x00" * 16)
    with pytest.raises(ValueError, match="broken.safetensors: offset 8: invalid JSON header"):
        llmroof.Model.from_safetensors(tmp_path / "broken.safetensors")
    with pytest.raises(ValueError, match="no such file"):
        llmroof.Model.from_file(tmp_path / "missing.json")
    with pytest.raises(TypeError, match="path must be a str or path"):
        llmroof.Model.from_file(3)  # type: ignore[arg-type]


def test_gemma4_global_layers_round_trip() -> None:
    # Gemma 4's full-attention layers: 4 KV heads of 512 whose keys serve as values
    # (the C++ hand test: test_kv_cache.cpp); a custom model keeps them.
    m = llmroof.Model.get("gemma-4-31b")
    f = m.fields
    assert (f["global_kv_heads"], f["global_head_dim"], f["global_k_is_v"]) == (4, 512, True)
    assert llmroof.Model.custom(**f).parameters().total == m.parameters().total
    same = dict(f, global_kv_heads=0, global_head_dim=0, global_k_is_v=False)
    assert llmroof.Model.custom(**same).parameters().total != m.parameters().total
