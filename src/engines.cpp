// Serving-engine profiles: how each turns device memory into a KV budget, and
// the defaults that size activations and paging.
#include <string>
#include <vector>

#include "llmroof/memory_plan.hpp"

namespace llmroof {

namespace {

// Designated initializers name only what differs from vLLM's defaults (the
// struct's), in the struct's member order.
std::vector<engine_settings> build() {
  const bytes gib = make_bytes(gibi);
  // SGLang: mem_fraction_static is chosen by GPU size, 0.88 on 80-96 GB parts;
  // page_size 1; chunked_prefill_size 8192 on large GPUs; CUDA graphs outside.
  // The 1 GiB reserve is the CUDA context and workspaces held when it measures.
  const engine_settings sglang{.name = "sglang", .model = memory_model::static_fraction, .memory_utilization = 0.88,
                               .runtime_reserve = gib, .mxfp4_expert_pad = 1, .block_tokens = 1,
                               .max_batched_tokens = 8192, .max_sequences = 256, .sampler_copies = 1,
                               .device_sized_batches = false,
                               .source = "SGLang server arguments (mem_fraction_static, page_size, chunked_prefill_size)"};
  // TensorRT-LLM: kv_cache_free_gpu_memory_fraction 0.9 of the memory free
  // after weights and activations; tokens_per_block 32; max_num_tokens 8192.
  const engine_settings trt{
      .name = "tensorrt-llm", .model = memory_model::fraction_of_free, .memory_utilization = 0.9,
      .runtime_reserve = gib, .mxfp4_expert_pad = 1, .block_tokens = 32, .max_batched_tokens = 8192,
      .max_sequences = 256, .sampler_copies = 1, .device_sized_batches = false,
      .source = "TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction, tokens_per_block, max_num_tokens"};
  // llama.cpp: the whole device; the KV cache is allocated for n_ctx up front
  // (padded to 256 cells), the compute buffer is sized by n_ubatch 512; CUDA
  // context ~0.5 GiB; one fp32 logits row per output; GGUF tensors load as
  // stored (no MXFP4 padding).
  const engine_settings llama{
      .name = "llama.cpp", .model = memory_model::exact, .memory_utilization = 1.0,
      .runtime_reserve = make_bytes(0.5 * gibi), .mxfp4_expert_pad = 1, .block_tokens = 256,
      .max_batched_tokens = 512, .max_sequences = 1, .sampler_copies = 1, .device_sized_batches = false,
      .source = "llama.cpp common arguments (n_ctx padding 256, n_ubatch 512, n_parallel 1)"};
  engine_settings ollama = llama;
  ollama.name = "ollama";
  ollama.source = "Ollama runs llama.cpp with its defaults (num_ctx 4096, OLLAMA_NUM_PARALLEL 1)";
  // mlx-lm: unified memory, the GPU share set by gpu_visible_fraction (Metal's
  // working-set limit); prefills in steps of 2048 tokens; grows its KV cache in
  // steps of 256.
  const engine_settings mlx{
      .name = "mlx", .model = memory_model::exact, .memory_utilization = 1.0,
      .runtime_reserve = make_bytes(0.25 * gibi), .mxfp4_expert_pad = 1, .block_tokens = 256,
      .max_batched_tokens = 2048, .max_sequences = 1, .sampler_copies = 1, .device_sized_batches = false,
      .source = "mlx-lm generate (prefill_step_size 2048, KVCache step 256)"};
  return {engine_settings{}, sglang, trt, llama, ollama, mlx};
}

}  // namespace

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& e : build()) out.push_back(e.name);
  return out;
}

/// vLLM's sampler at start-up: fp32 vocabulary-wide tensors alive at its
/// profiled peak, per sequence of max_num_seqs. Fitted on engine_memory.csv as
/// (activation peak) / (max_num_seqs x vocab x 4 B), where the sampler is the
/// larger part of the profile:
///  - 0.10: ML-001/002 (v0.10.1.1, A100 80 GB, Qwen2-7B, 256 sequences): budget
///    left after weights and KV 0.52-0.54 GiB, less 0.13 GiB non-torch -> 2.8;
///  - 0.11: ML-022 (v0.11.0, H100, Mistral-Small-3.2-24B, 1024 sequences):
///    peak 2.12 GiB printed -> 4.3 (one row);
///  - current (the llm-d rows of 2026, H100, 1024 sequences, five models with
///    vocabularies of 128k-201k): peaks 4.76-7.38 GiB printed -> 9.6-9.9, 9.7.
double vllm_sampler_copies(const std::string& version) {
  if (version.rfind("0.10", 0) == 0 || version.rfind("0.9", 0) == 0 || version.rfind("0.8", 0) == 0) return 2.8;
  if (version.rfind("0.11", 0) == 0) return 4.3;
  return 9.7;
}

engine_settings find_engine(std::string_view name) {
  std::string key = detail::to_lower(name);
  std::string version = "current";
  if (const auto at = key.find('@'); at != std::string::npos) {
    version = key.substr(at + 1);
    key = key.substr(0, at);
    if (version.empty()) throw std::invalid_argument("engine version after '@' is empty (got '" + std::string(name) + "')");
  }
  for (auto& e : build()) {
    if (e.name != key) continue;
    e.version = version;
    if (e.name == "vllm") {
      if (version != "current" && !(version[0] >= '0' && version[0] <= '9')) {
        throw std::invalid_argument("engine version must be a release like 0.10 or 'current' (got '" + version + "')");
      }
      e.sampler_copies = vllm_sampler_copies(version);
    }
    if (e.name == "tensorrt-llm" && version != "current" && version != "2023") {
      // Kernels and scheduling changed (engines launched kernel by kernel in
      // 2023, CUDA graphs and the PyTorch backend now), not the memory plan.
      throw std::invalid_argument("engine version of tensorrt-llm must be 2023 or 'current' (got '" + version + "')");
    }
    if ((e.name == "llama.cpp" || e.name == "ollama") && version != "current" && version != "2024") {
      // The kernels changed, not the memory plan: 2024 builds dequantized to
      // FP16 for cuBLAS, current ones multiply quantized weights in int8.
      throw std::invalid_argument("engine version of " + e.name + " must be 2024 or 'current' (got '" + version + "')");
    }
    return e;
  }
  detail::fail_unknown("engine", key, engine_names());
}

namespace {

engine_settings with_overrides(engine_settings e, const engine_overrides& o) {
  if (o.memory_utilization) e.memory_utilization = *o.memory_utilization;
  if (o.block_tokens) e.block_tokens = *o.block_tokens;
  if (o.max_batched_tokens) e.max_batched_tokens = *o.max_batched_tokens;
  if (o.max_sequences) e.max_sequences = *o.max_sequences;
  if (o.max_model_len) e.max_model_len = *o.max_model_len;
  validate(e);
  return e;
}

}  // namespace

engine_settings configure_engine(std::string_view name, const engine_overrides& o) {
  return with_overrides(find_engine(name), o);
}

engine_settings configure_engine(std::string_view name, const device& d, const engine_overrides& o) {
  engine_settings e = find_engine(name);
  if (e.device_sized_batches) {
    // vLLM V1 (EngineArgs._set_default_args, OpenAI server): GPUs of >= 70 GiB
    // other than the A100 get max_num_batched_tokens 8192 and max_num_seqs
    // 1024; the rest 2048 and 256.
    const bool large = in_GiB(d.memory) >= 70 && d.name.find("A100") == std::string::npos;
    e.max_batched_tokens = large ? 8192 : 2048;
    e.max_sequences = large ? 1024 : 256;
  }
  return with_overrides(std::move(e), o);
}

}  // namespace llmroof
