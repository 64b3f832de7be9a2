#!/usr/bin/env python3
"""Hostile-input corpus of issue 17: writes the files the cases in cases.py
read into a folder (default: a fresh temporary one) and prints its path.

Everything is generated, nothing large is stored: the "huge" files are sparse
(a few KB on disk), the FIFO and the symbolic links are made here because git
cannot hold them.

    python3 tests/hostile/make_hostile.py OUT_DIR
"""
from __future__ import annotations

import csv
import json
import os
import struct
import sys
import tempfile
from pathlib import Path

GiB = 1 << 30


def s(x: bytes) -> bytes:
    return struct.pack("<Q", len(x)) + x


def kv_str(key: str, value: str) -> bytes:
    return s(key.encode()) + struct.pack("<I", 8) + s(value.encode())


def kv_u32(key: str, value: int) -> bytes:
    return s(key.encode()) + struct.pack("<II", 4, value)


def gguf_header(n_tensors: int, kvs: list[bytes], tensors: list[bytes] = ()) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(kvs)) + b"".join(kvs) + b"".join(tensors)


def tensor_info(name: str, shape: list[int], ggml_type: int, offset: int) -> bytes:
    return s(name.encode()) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", d) for d in shape) + \
        struct.pack("<IQ", ggml_type, offset)


LLAMA = [kv_str("general.architecture", "llama"), kv_u32("llama.block_count", 1),
         kv_u32("llama.embedding_length", 64), kv_u32("llama.attention.head_count", 4),
         kv_u32("llama.feed_forward_length", 128), kv_u32("llama.vocab_size", 256)]


def aligned(n: int) -> int:
    return (n + 31) // 32 * 32


def sparse(path: Path, head: bytes, size: int) -> None:
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)


def safetensors(header: dict, data_bytes: int) -> bytes:
    h = json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + bytes(data_bytes)


CONFIG = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256}


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)

    # Stack overflow quoting a deeply nested value under a known key.
    (out / "deep").mkdir(exist_ok=True)
    (out / "deep" / "config.json").write_text('{"num_hidden_layers": ' + "[" * 100000 + "]" * 100000 + "}")

    # Self-referencing and mutually referencing safetensors indexes, and one
    # shard under two names.
    for name, maps in {"self_index": {"w": "model.safetensors.index.json"},
                       "mutual_index": {"w": "other.index.json"}}.items():
        d = out / name
        d.mkdir(exist_ok=True)
        (d / "config.json").write_text(json.dumps(CONFIG))
        (d / "model.safetensors.index.json").write_text(json.dumps({"weight_map": maps}))
        (d / "other.index.json").write_text(json.dumps({"weight_map": {"w": "model.safetensors.index.json"}}))
    d = out / "alias_shard"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(CONFIG))
    (d / "a.safetensors").write_bytes(safetensors({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, 8))
    if not (d / "b.safetensors").exists():
        os.symlink("a.safetensors", d / "b.safetensors")
    (d / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": {"x": "a.safetensors", "y": "b.safetensors"}}))

    # Overlapping / aliased safetensors offsets: 8 MB of weights from 8 KB.
    d = out / "overlap"
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps(CONFIG))
    (d / "model.safetensors").write_bytes(safetensors(
        {f"model.layers.{i}.mlp.up_proj.weight": {"dtype": "F32", "shape": [2048], "data_offsets": [0, 8192]}
         for i in range(1024)}, 8192))

    # GGUF: a 9 GiB metadata array in a sparse file; a tensor count of size/25.
    sparse(out / "huge_array.gguf", gguf_header(0, [s(b"k") + struct.pack("<IIQ", 9, 0, 9 * GiB)]), 9 * GiB + 4096)
    size = 10 * GiB
    sparse(out / "many_tensors.gguf", gguf_header((size - 24) // 25, []), size)
    sparse(out / "many_keys.gguf", gguf_header(0, [])[:16] + struct.pack("<Q", (size - 24) // 14), size)

    # GGUF tensor data against the file.
    info = [tensor_info("token_embd.weight", [64, 256], 0, 0)]
    head = gguf_header(1, LLAMA, info)
    (out / "truncated_data.gguf").write_bytes(head + bytes(aligned(len(head)) - len(head)) + bytes(1000))
    info = [tensor_info("token_embd.weight", [1 << 20, 1 << 20, 64], 0, 0)]
    head = gguf_header(1, LLAMA, info)
    sparse(out / "tensor_past_file.gguf", head, 215 * 1024)
    info = [tensor_info("token_embd.weight", [64, 256], 0, 0), tensor_info("output.weight", [64, 256], 0, 0)]
    head = gguf_header(2, LLAMA, info)
    (out / "aliased_tensors.gguf").write_bytes(head + bytes(aligned(len(head)) - len(head)) + bytes(65536))
    # Metadata against tensors: 10^9 experts; 64 experts over tensors of 8.
    moe = [kv for kv in LLAMA] + [kv_u32("llama.expert_used_count", 2)]
    head = gguf_header(0, moe + [kv_u32("llama.expert_count", 10**9)])
    (out / "billion_experts.gguf").write_bytes(head)
    info = [tensor_info("blk.0.ffn_gate_exps.weight", [64, 128, 8], 0, 0)]
    head = gguf_header(1, moe + [kv_u32("llama.expert_count", 64)], info)
    (out / "experts_mismatch.gguf").write_bytes(head + bytes(aligned(len(head)) - len(head)) + bytes(64 * 128 * 8 * 4))

    # config.json: zero-bit quantization; 100k ignore patterns over 10k layers.
    zero = dict(CONFIG, quantization_config={"quant_method": "awq", "bits": 0, "group_size": 128})
    (out / "zero_bits.json").write_text(json.dumps(zero))
    many = dict(CONFIG, num_hidden_layers=10000,
                quantization_config={"quant_method": "fp8", "ignore": [f"re:.*layers\\.{i}\\.mlp.*" for i in range(100000)]})
    (out / "many_ignores.json").write_text(json.dumps(many))

    # Measurements: header only; a FIFO named .json; a symlink loop; a folder.
    cols = "id,source,device,n_devices,backend,model,weight_format,kv_format,batch,prompt_tokens,context_depth," \
           "gen_tokens,metric,value,unit,notes"
    (out / "header_only.csv").write_text(cols + "\n")
    points = Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv"
    (out / "points.csv").write_text("".join(points.read_text().splitlines(keepends=True)[:60]))
    _fifo(out / "fifo.json")
    _link(out / "loop.json", "loop.json")
    (out / "folder.json").mkdir(exist_ok=True)
    (out / "file").write_text("x")

    # Devices a user brings (second round): a FIFO and /dev/zero named .json;
    # a file past the size limit; rows whose numbers are not finite.
    _fifo(out / "device_fifo.json")
    _link(out / "device_zero.json", "/dev/zero")
    (out / "device_big.json").write_text("{" + " " * (2 << 20) + "}")
    with points.open(newline="") as f:
        header, first = list(csv.reader(f))[:2]
    first[header.index("value")] = "inf"
    with (out / "inf_value.csv").open("w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([header, first])


def _fifo(path: Path) -> None:
    if not path.exists():
        os.mkfifo(path)


def _link(path: Path, target: str) -> None:
    """A symbolic link (kept when a reused corpus has it)."""
    if not path.is_symlink():
        os.symlink(target, path)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="llmroof-hostile-"))
    make(out)
    print(out)


if __name__ == "__main__":
    main()
