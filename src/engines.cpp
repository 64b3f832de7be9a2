// Serving-engine profiles: how each turns device memory into a KV budget, and
// the defaults that size activations and paging.
#include <string>
#include <vector>

#include "llmroof/memory_plan.hpp"

namespace llmroof {

namespace {

std::vector<engine_settings> build() {
  std::vector<engine_settings> all;
  engine_settings vllm;  // the struct's defaults
  all.push_back(vllm);

  engine_settings sglang;
  sglang.name = "sglang";
  sglang.model = memory_model::static_fraction;
  // mem_fraction_static is chosen by GPU size; 0.88 on 80-96 GB parts.
  // page_size 1; chunked_prefill_size 8192 on large GPUs; CUDA graphs outside.
  sglang.memory_utilization = 0.88;
  sglang.runtime_reserve = make_bytes(1.0 * gibi);
  sglang.block_tokens = 1;
  sglang.max_batched_tokens = 8192;
  sglang.max_sequences = 256;
  sglang.source = "SGLang server arguments (mem_fraction_static, page_size, chunked_prefill_size)";
  all.push_back(sglang);

  engine_settings trt;
  trt.name = "tensorrt-llm";
  trt.model = memory_model::fraction_of_free;
  // kv_cache_free_gpu_memory_fraction 0.9 of the memory free after weights
  // and activations; tokens_per_block 32; max_num_tokens 8192.
  trt.memory_utilization = 0.9;
  trt.runtime_reserve = make_bytes(1.0 * gibi);
  trt.block_tokens = 32;
  trt.max_batched_tokens = 8192;
  trt.max_sequences = 256;
  trt.source = "TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction, tokens_per_block, max_num_tokens";
  all.push_back(trt);

  engine_settings llama;
  llama.name = "llama.cpp";
  llama.model = memory_model::exact;
  // The whole device; the KV cache is allocated for n_ctx up front, the
  // compute buffer is sized by n_ubatch 512; CUDA context ~0.5 GiB.
  llama.memory_utilization = 1.0;
  llama.runtime_reserve = make_bytes(0.5 * gibi);
  llama.block_tokens = 256;  // n_ctx is padded to 256 cells
  llama.max_batched_tokens = 512;
  llama.max_sequences = 1;
  llama.source = "llama.cpp common arguments (n_ctx padding 256, n_ubatch 512, n_parallel 1)";
  all.push_back(llama);

  engine_settings ollama = llama;
  ollama.name = "ollama";
  ollama.source = "Ollama runs llama.cpp with its defaults (num_ctx 4096, OLLAMA_NUM_PARALLEL 1)";
  all.push_back(ollama);

  engine_settings mlx;
  mlx.name = "mlx";
  mlx.model = memory_model::exact;
  // Unified memory: the GPU share is set by gpu_visible_fraction (Metal's
  // working-set limit); mlx-lm prefills in steps of 2048 tokens.
  mlx.memory_utilization = 1.0;
  mlx.runtime_reserve = make_bytes(0.25 * gibi);
  mlx.block_tokens = 256;  // mlx-lm grows its KV cache in steps of 256
  mlx.max_batched_tokens = 2048;
  mlx.max_sequences = 1;
  mlx.source = "mlx-lm generate (prefill_step_size 2048, KVCache step 256)";
  all.push_back(mlx);
  return all;
}

}  // namespace

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& e : build()) out.push_back(e.name);
  return out;
}

engine_settings find_engine(std::string_view name) {
  const std::string key = detail::to_lower(name);
  for (auto& e : build()) {
    if (e.name == key) return e;
  }
  detail::fail_unknown("engine", name, engine_names());
}

}  // namespace llmroof
