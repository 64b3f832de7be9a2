#!/usr/bin/env python3
"""Valid seed files for the fuzzers (a GGUF header and a safetensors file)."""
import json
import struct
import sys
from pathlib import Path


def s(x: bytes) -> bytes:
    return struct.pack("<Q", len(x)) + x


def main(out: Path) -> None:
    kvs = [
        s(b"general.architecture") + struct.pack("<I", 8) + s(b"llama"),
        s(b"llama.block_count") + struct.pack("<II", 4, 2),
        s(b"llama.embedding_length") + struct.pack("<II", 4, 64),
        s(b"llama.attention.head_count") + struct.pack("<II", 4, 4),
        s(b"llama.feed_forward_length") + struct.pack("<II", 4, 128),
        s(b"llama.vocab_size") + struct.pack("<II", 4, 100),
        s(b"tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 2) + s(b"a") + s(b"b"),
    ]
    tensors = [
        s(b"token_embd.weight") + struct.pack("<IQQ", 2, 64, 100) + struct.pack("<IQ", 8, 0),
        s(b"blk.0.attn_q.weight") + struct.pack("<IQQ", 2, 256, 64) + struct.pack("<IQ", 12, 0),
    ]
    gguf = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs) + b"".join(tensors)
    (out / "gguf" / "valid.gguf").write_bytes(gguf)
    header = json.dumps({
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [10, 4], "data_offsets": [0, 80]},
        "model.layers.0.mlp.experts.0.up_proj.weight": {"dtype": "F8_E4M3", "shape": [4, 4], "data_offsets": [80, 96]},
        "__metadata__": {"format": "pt"},
    }).encode()
    (out / "safetensors" / "valid.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(96))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
