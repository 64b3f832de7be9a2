"""Hostile-input cases of issue 17, one per cause, for the command and the
Python package. Each must fail with status 2 (Python: ValueError/TypeError)
and one line that contains `expect`, print nothing on stdout (no plan), and
finish within the runner's time and memory limits.

`{D}` in an argument is the corpus folder written by make_hostile.py.
"""
from __future__ import annotations

M = ["--model", "llama-3.1-8b", "--device", "h100-sxm"]
P = ["plan", *M]


def plan_file(path: str) -> list[str]:
    """`plan` of the corpus file or folder `path` on one H100."""
    return ["plan", "--model", "{D}/" + path, "--device", "h100-sxm"]


# (name, argv, expected text in the one error line)
CLI: list[tuple[str, list[str], str]] = [
    # Crashes: stack overflow, recursion.
    ("deep json", plan_file("deep/config.json"), "JSON nested deeper than 64 levels"),
    ("self index", plan_file("self_index/model.safetensors.index.json"),
     "must name a .safetensors shard (got 'model.safetensors.index.json')"),
    ("mutual index", plan_file("mutual_index/model.safetensors.index.json"),
     "must name a .safetensors shard (got 'other.index.json')"),
    ("aliased shard", plan_file("alias_shard/model.safetensors.index.json"), "read twice"),
    # Memory and hangs: sizes against sense, non-regular files.
    ("9 GiB array", plan_file("huge_array.gguf"), "array of 9663676416 elements (limit 16777216)"),
    ("tensor count size/25", plan_file("many_tensors.gguf"), "tensor count 429496728 (limit 1048576)"),
    ("key count size/14", plan_file("many_keys.gguf"), "metadata count 766958444 (limit 1048576)"),
    ("validate /dev/zero", ["validate", "/dev/zero"], "/dev/zero: is a device, not a regular file"),
    ("calibrate /dev/urandom", ["calibrate", "/dev/urandom"], "/dev/urandom: is a device, not a regular file"),
    ("fifo json", plan_file("fifo.json"), "is a FIFO, not a regular file"),
    ("symlink loop", plan_file("loop.json"), "loop.json: symbolic link loop"),
    ("folder csv", ["validate", "{D}/folder.json"], "is a folder, not a file"),
    ("missing csv", ["validate", "{D}/nothing.csv"], "nothing.csv: no such file"),
    # Tensor sizes against the data.
    ("truncated gguf data", plan_file("truncated_data.gguf"),
     "tensor 'token_embd.weight': 65536 bytes at data offset 0 exceed the 1000 data bytes of the file"),
    ("tensor past file", plan_file("tensor_past_file.gguf"),
     "tensor 'token_embd.weight': 281474976710656 bytes at data offset 0 exceed"),
    ("aliased gguf tensors", plan_file("aliased_tensors.gguf"), "data at offset 0 overlaps tensor"),
    ("overlapping safetensors", plan_file("overlap"), "overlap tensor"),
    ("billion experts", plan_file("billion_experts.gguf"),
     "architecture.moe.num_experts must be <= 1000000 (got 1000000000)"),
    ("experts vs tensors", plan_file("experts_mismatch.gguf"),
     "metadata 'llama.expert_count' is 64 but tensor 'blk.0.ffn_gate_exps.weight' holds 8 experts"),
    # Overflow into plausible answers.
    ("context 1e300", [*P, "--context", "1e300"], "context must be <= 1e9 tokens (got 1e+300)"),
    ("context 9.2e18", [*P, "--context", "9.2e18"], "context must be <= 1e9 tokens (got 9.2e+18)"),
    ("nodes overflow", [*P[:3], "--device", "h100-sxm:8", "--nodes", "536870913"],
     "--nodes must be in [1, 65536] (got 536870913)"),
    ("device count 1e6", [*P[:3], "--device", "h100-sxm:1000000"],
     "--device ID:N needs a whole device count N in [1, 1024] per node (got '1000000')"),
    # Impossible layouts and formats.
    ("tp 3", [*P[:3], "--device", "h100-sxm:3", "--tp", "3"], "tp must be a divisor of the 32 attention heads"),
    ("tp 64", [*P[:3], "--device", "h100-sxm:8", "--nodes", "8", "--tp", "64"],
     "tp must be a divisor of the 32 attention heads"),
    ("default tp 6", [*P[:3], "--device", "h100-sxm:6"], "tp defaults to the 6 devices"),
    ("q4_0 kv vllm", [*P, "--kv", "q4_0"], "kv format 'q4_0' is not a KV cache type of engine 'vllm'"),
    ("q4_0 kv sglang", [*P, "--kv", "q4_0", "--engine", "sglang"],
     "kv format 'q4_0' is not a KV cache type of engine 'sglang'"),
    ("awq kv", [*P, "--kv", "awq-int4"], "kv format 'awq-int4' is a weight format, not a KV cache format"),
    ("zero-bit quantization", plan_file("zero_bits.json"), "quantization_config bits must be >= 1 (got 0)"),
    ("gpu as host", [*P, "--engine", "llama.cpp", "--kv", "q8_0", "--offload", "0.5", "--host", "h100-sxm"],
     "offload.host must be a CPU ('h100-sxm' is a datacenter device)"),
    ("context 0", [*P, "--context", "0"], "context must be >= 1 token (got 0)"),
    # Quadratic or unbounded work.
    ("100k ignore patterns", plan_file("many_ignores.json"),
     "quantization_config ignore list has 100000 patterns (limit 256"),
    # Silently ignored or coerced input.
    ("stray word", [*P, "extra"], "unexpected argument 'extra' for 'plan'"),
    ("option not used", ["kv", "--model", "llama-3.1-8b", "--tp", "2"], "--tp"),
    ("users 1.5", [*P, "--users", "1.5"], "--users must be a whole number (got '1.5')"),
    ("header-only csv", ["validate", "{D}/header_only.csv"], "no measurements: only the header line"),
    ("write-profiles full disk", ["calibrate", "{D}/points.csv", "--write-profiles", "/dev/full"],
     "--write-profiles: writing '/dev/full' failed (disk full?)"),
    # Vague messages.
    ("json=true", [*P, "--json=true"], "--json takes no value"),
    ("tps -1", ["users", *M, "--tps", "-1"], "--tps must be >= 0 and <= 1000000000 (got -1)"),
    ("bad report path", ["validate", "{D}/points.csv", "--report", "{D}/file/sub"],
     "--report: cannot create the folder '{D}/file/sub'"),
    # Second round (issue 34): device files guarded as model files are.
    ("device fifo", [*P[:3], "--device", "{D}/device_fifo.json"], "device_fifo.json: is a FIFO, not a regular file"),
    ("device /dev/zero", [*P[:3], "--device", "{D}/device_zero.json"], "device_zero.json: is a device, not a regular file"),
    ("device 2 MiB", [*P[:3], "--device", "{D}/device_big.json"], "larger than 1 MiB (limit for a device file)"),
    # Units: bits are not bytes; one rate named twice; physical ranges.
    ("memory in bits", [*P[:3], "--device", "custom:memory=24Gib,bandwidth=936GB/s,bf16=71TF"],
     "memory has unit 'Gib': B is bytes, b is bits (did you mean 'GiB'?)"),
    ("bf16 and fp16", [*P[:3], "--device", "custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF,fp16=80TF"],
     "bf16 and fp16 both set the 16-bit rate: give one"),
    ("memory 1e-9 GiB", [*P[:3], "--device", "custom:memory=1e-9GiB,bandwidth=936GB/s,bf16=71TF"],
     "memory must be in [64 MiB, 64 TiB] (got '1e-9GiB')"),
    ("bandwidth 1e30", [*P[:3], "--device", "custom:memory=24GiB,bandwidth=1e30B/s,bf16=71TF"],
     "bandwidth must be in [0.1 GB/s, 1 PB/s] (got '1e30B/s')"),
    # Near-miss names resolve to nothing, with the closest ids.
    ("device h100-sxmx", [*P[:3], "--device", "h100-sxmx"], "unknown device 'h100-sxmx'; closest: h100-sxm"),
    # Beyond the model's positions, as vLLM refuses it.
    ("max-model-len 10x", [*P, "--max-model-len", "1310720"],
     "max_model_len (1310720) is beyond the 131072 positions of 'llama-3.1-8b' (max_position_embeddings): "
     "vllm refuses to start"),
    # Calibration: a value that is not finite names its row.
    ("calibrate inf", ["calibrate", "{D}/inf_value.csv"], "inf_value.csv: line 2: value 'inf' is not a finite number"),
    ("validate inf", ["validate", "{D}/inf_value.csv"], "inf_value.csv: line 2: value 'inf' is not a finite number"),
    # Prefix caching (issue 30): a hit rate needs a prefix, a prefix fits its prompt.
    ("prefix-hit alone", [*P, "--prefix-hit", "0.5"], "prefix_hit needs a prefix (the prompt tokens every request shares)"),
    ("prefix > prompt", [*P, "--prompt", "4k", "--prefix", "1m"], "prefix must be <= the prompt (4096 tokens) (got 1048576)"),
    ("prefix-hit inf", [*P, "--prefix", "1k", "--prefix-hit", "inf"], "--prefix-hit must be a number (got 'inf')"),
    ("prefix-caching 1", [*P, "--prefix-caching", "1"], "--prefix-caching must be on or off (got '1')"),
    # Disaggregation: an instance that divides the fleet, an engine that splits, a link that exists.
    ("pd 3 of 8", ["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:8", "--pd", "3"],
     "instance devices must divide the fleet's 8 devices (got 3)"),
    ("pd one device", [*P, "--pd", "auto"], "disaggregation needs at least 2 devices (got 1)"),
    ("pd llama.cpp", ["plan", "--model", "llama-3.1-8b", "--device", "rtx-4090:2", "--engine", "llama.cpp", "--pd", "auto"],
     "llama.cpp does not serve prefill and decode apart"),
    ("kv-link warp", ["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:2", "--pd", "auto", "--kv-link", "warp"],
     "unknown link 'warp'"),
    ("kv-overlap=1", ["plan", "--model", "llama-3.1-8b", "--device", "h100-sxm:2", "--pd", "auto", "--kv-overlap=1"],
     "--kv-overlap takes no value"),
]

# (name, python source of one call on `llmroof` as `r` and the corpus as D,
#  exception type name, expected text)
PYTHON: list[tuple[str, str, str, str]] = [
    ("deep json", "r.Model.from_file(D + '/deep/config.json')", "ValueError", "JSON nested deeper than 64 levels"),
    ("self index", "r.Model.from_file(D + '/self_index/model.safetensors.index.json')", "ValueError",
     "must name a .safetensors shard"),
    ("9 GiB array", "r.Model.from_gguf(D + '/huge_array.gguf')", "ValueError", "(limit 16777216)"),
    ("tensor count", "r.Model.from_gguf(D + '/many_tensors.gguf')", "ValueError", "(limit 1048576)"),
    ("fifo", "r.Model.from_file(D + '/fifo.json')", "ValueError", "is a FIFO, not a regular file"),
    ("truncated data", "r.Model.from_gguf(D + '/truncated_data.gguf')", "ValueError", "exceed the 1000 data bytes"),
    ("overlap", "r.Model.from_file(D + '/overlap')", "ValueError", "overlap tensor"),
    ("context 1e300", "r.plan(model='llama-3.1-8b', device='h100-sxm', context=1e300)", "ValueError",
     "context must be <= 1e9 tokens (got 1e+300)"),
    ("users 1.5", "r.plan(model='llama-3.1-8b', device='h100-sxm', users=1.5)", "ValueError",
     "users must be a whole number (got 1.5)"),
    ("tp 1.5", "r.plan(model='llama-3.1-8b', device='h100-sxm', devices=2, tp=1.5)", "ValueError",
     "tp must be a whole number (got 1.5)"),
    ("tp 3", "r.plan(model='llama-3.1-8b', device='h100-sxm', devices=3, tp=3)", "ValueError",
     "tp must be a divisor of the 32 attention heads"),
    ("q4_0 kv vllm", "r.plan(model='llama-3.1-8b', device='h100-sxm', kv='q4_0')", "ValueError",
     "kv format 'q4_0' is not a KV cache type of engine 'vllm'"),
    ("efficiency bogus", "r.plan(model='llama-3.1-8b', device='h100-sxm', efficiency={'bogus': 1})", "ValueError",
     "efficiency: unknown field 'bogus'"),
    ("2^31 layers", "r.Model.custom(num_layers=2**31, hidden_size=64, num_heads=4, ffn_size=128, vocab_size=256)",
     "ValueError", "num_layers must be <= 2147483647"),
    ("2^31-1 layers", "r.Model.custom(num_layers=2**31-1, hidden_size=64, num_heads=4, ffn_size=128, vocab_size=256)",
     "ValueError", "architecture.num_layers must be <= 10000"),
    ("1.5 layers", "r.Model.custom(num_layers=1.5, hidden_size=64, num_heads=4, ffn_size=128, vocab_size=256)",
     "TypeError", "num_layers must be an int (got float)"),
    ("routing 1e7 x 1e7", "r.simulate_routing(popularity=[0.5, 0.5], experts_per_token=1, tokens=10**7, trials=10**7)",
     "ValueError", "<= 1e8"),
    ("zipf 2^31-1", "r.zipf_popularity(num_experts=2**31 - 1, alpha=1.0)", "ValueError",
     "num_experts must be <= 1000000"),
    ("sweep grid 1e10", "r.sweep_decode(model='llama-3.1-8b', device='h100-sxm', batch=list(range(1, 100001)), "
     "context=list(range(100000)))", "ValueError", "a sweep must have at most 1e7 grid points"),
    ("sweep batch str", "r.sweep_decode(model='llama-3.1-8b', device='h100-sxm', batch=['a'])", "TypeError",
     "batch must be a number or a sequence of numbers"),
    ("efficiency not a dict", "r.plan(model='llama-3.1-8b', device='h100-sxm', efficiency=5)", "TypeError",
     "efficiency must be a dict or None (got int)"),
    ("devices str", "r.plan(model='llama-3.1-8b', device='h100-sxm', devices='8')", "TypeError",
     "devices must be an int (got str)"),
    # Second round (issue 34).
    ("device fifo", "r.plan(model='llama-3.1-8b', device=D + '/device_fifo.json')", "ValueError",
     "device_fifo.json: is a FIFO, not a regular file"),
    ("device /dev/zero", "r.Device.from_json(D + '/device_zero.json')", "ValueError",
     "device_zero.json: is a device, not a regular file"),
    ("fp8 1e30 TF", "r.Device(memory='24GiB', bandwidth='936GB/s', bf16='71TF', fp8='1e30TF')", "ValueError",
     "fp8 must be in [0.1 GFLOP/s, 10 EFLOP/s] (got '1e30TF')"),
    ("device h100-sxmx", "r.plan(model='llama-3.1-8b', device='h100-sxmx')", "ValueError",
     "unknown device 'h100-sxmx'; closest: h100-sxm"),
    ("max_model_len 10x", "r.plan(model='llama-3.1-8b', device='h100-sxm', max_model_len=1310720)", "ValueError",
     "is beyond the 131072 positions of 'llama-3.1-8b'"),
    ("calibrate inf", "r.calibrate(D + '/inf_value.csv')", "ValueError", "line 2: value 'inf' is not a finite number"),
    ("prefix_hit alone", "r.plan(model='llama-3.1-8b', device='h100-sxm', prefix_hit=0.5)", "ValueError",
     "prefix_hit needs a prefix"),
    ("prefix nan", "r.users(model='llama-3.1-8b', device='h100-sxm', min_tokens_per_s=10, prefix=float('nan'))",
     "ValueError", "prefix"),
]
