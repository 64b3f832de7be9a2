#!/usr/bin/env python3
"""Writes the corpus of broken model files (committed; also fuzzing seeds).

Every file here must be rejected with a clear error, never a crash:
tests/cpp/test_readers.cpp reads each one.
"""
import json
import struct
from pathlib import Path

HERE = Path(__file__).parent


def s(x: bytes) -> bytes:
    return struct.pack("<Q", len(x)) + x


def gguf(tensors: int, kvs: int, body: bytes, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, kvs) + body


def write(name: str, data: bytes) -> None:
    p = HERE / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


def main() -> None:
    kv_arch = s(b"general.architecture") + struct.pack("<I", 8) + s(b"llama")
    write("gguf/empty.gguf", b"")
    write("gguf/wrong_magic.gguf", b"GGML" + bytes(20))
    write("gguf/version_1.gguf", gguf(0, 0, b"", version=1))
    write("gguf/truncated_counts.gguf", b"GGUF" + struct.pack("<I", 3) + b"\x01\x00")
    write("gguf/absurd_tensor_count.gguf", gguf(2**60, 0, b""))
    write("gguf/absurd_kv_count.gguf", gguf(0, 2**60, b""))
    write("gguf/absurd_string.gguf", gguf(0, 1, struct.pack("<Q", 2**50) + b"key" + bytes(32)))
    write("gguf/bad_utf8_key.gguf", gguf(0, 1, s(b"\xff\xfe") + struct.pack("<I", 4) + struct.pack("<I", 1)))
    write("gguf/unknown_value_type.gguf", gguf(0, 1, s(b"k") + struct.pack("<I", 99) + bytes(32)))
    write("gguf/absurd_array.gguf", gguf(0, 1, s(b"k") + struct.pack("<IIQ", 9, 4, 2**55)))
    write("gguf/nested_array.gguf", gguf(0, 1, s(b"k") + struct.pack("<IIQ", 9, 9, 1)))
    write("gguf/no_architecture.gguf", gguf(0, 0, b""))
    write("gguf/zero_dims.gguf", gguf(1, 1, kv_arch + s(b"w") + struct.pack("<I", 0) + struct.pack("<IQ", 0, 0)))
    write("gguf/huge_dim.gguf", gguf(1, 1, kv_arch + s(b"w") + struct.pack("<IQ", 1, 2**62) + struct.pack("<IQ", 0, 0)))
    write("gguf/unknown_tensor_type.gguf", gguf(1, 1, kv_arch + s(b"w") + struct.pack("<IQ", 1, 32) + struct.pack("<IQ", 77, 0)))
    write("gguf/arch_without_sizes.gguf", gguf(0, 1, kv_arch))
    sizes = b"".join(s(k) + struct.pack("<II", 4, v) for k, v in [
        (b"llama.block_count", 1), (b"llama.embedding_length", 64), (b"llama.attention.head_count", 4)])
    # Found by fuzzing: a vocabulary taken from a tensor shape overflowed an int.
    write("gguf/absurd_vocab.gguf", gguf(1, 4, kv_arch + sizes + s(b"token_embd.weight") +
                                         struct.pack("<IQQ", 2, 64, 2**39) + struct.pack("<IQ", 0, 0)))

    def st(header: bytes, data: int = 0, length: int | None = None) -> bytes:
        n = len(header) if length is None else length
        return struct.pack("<Q", n) + header + bytes(data)

    write("safetensors/empty.safetensors", b"")
    write("safetensors/short.safetensors", b"\x01\x02")
    write("safetensors/absurd_length.safetensors", st(b"{}", length=2**62))
    write("safetensors/length_beyond_file.safetensors", st(b"{}", length=1000))
    write("safetensors/not_json.safetensors", st(b"{not json"))
    write("safetensors/not_object.safetensors", st(b"[1,2]"))
    write("safetensors/bad_dtype.safetensors", st(json.dumps({"w": {"dtype": "Q9", "shape": [1], "data_offsets": [0, 1]}}).encode(), 1))
    write("safetensors/offsets_outside.safetensors", st(json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode(), 8))
    write("safetensors/size_mismatch.safetensors", st(json.dumps({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}).encode(), 16))
    write("safetensors/negative_shape.safetensors", st(json.dumps({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}).encode(), 4))
    # Found by fuzzing: nlohmann-json reports number overflow as out_of_range.
    write("safetensors/number_overflow.safetensors", st(b'{"w": 1e999999}'))
    write("safetensors/bad_utf8.safetensors", st(b'{"\xff": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}', 4))

    write("hf_config/empty.json", b"")
    write("hf_config/not_object.json", b"[]")
    write("hf_config/truncated.json", b'{"num_hidden_layers": 3')
    write("hf_config/wrong_type.json", json.dumps({"num_hidden_layers": "many"}).encode())
    write("hf_config/absurd_layers.json", json.dumps({"num_hidden_layers": 10**12, "hidden_size": 8}).encode())
    write("hf_config/zero_heads.json", json.dumps({"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 0,
                                                   "vocab_size": 4, "intermediate_size": 4}).encode())
    write("hf_config/number_overflow.json", b'{"num_hidden_layers": 1e999999}')
    write("hf_config/fractional.json", b'{"num_hidden_layers": 2.5}')
    write("hf_config/bad_utf8.json", b'{"model_type": "\xc3\x28"}')
    write("hf_config/layer_types_mismatch.json", json.dumps({
        "num_hidden_layers": 3, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 4, "intermediate_size": 4,
        "layer_types": ["full_attention"]}).encode())
    write("hf_config/bad_quantization.json", json.dumps({
        "num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 4, "intermediate_size": 4,
        "quantization_config": {"quant_method": "awq", "bits": "four"}}).encode())
    write("hf_config/bad_regex.json", json.dumps({
        "num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 4, "intermediate_size": 4,
        "quantization_config": {"quant_method": "fp8", "ignore": ["re:(unclosed"]}}).encode())
    # Found by fuzzing: a nested quantifier made std::regex backtrack for minutes.
    write("hf_config/catastrophic_regex.json", json.dumps({
        "num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 4, "intermediate_size": 4,
        "quantization_config": {"quant_method": "fp8", "ignore": ["re:(a*)*b"]}}).encode())
    write("hf_config/experts_over_count.json", json.dumps({
        "num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "vocab_size": 4, "intermediate_size": 4,
        "num_local_experts": 2, "num_experts_per_tok": 3}).encode())


if __name__ == "__main__":
    main()
