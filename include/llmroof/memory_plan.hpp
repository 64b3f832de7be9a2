// Memory plan: weights, KV cache, activations and runtime reserve against
// capacity x utilisation. "Does not fit" is an answer with the shortfall in
// bytes, never an exception.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <optional>
#include <string>

#include "llmroof/architecture.hpp"
#include "llmroof/device.hpp"
#include "llmroof/kv_cache.hpp"
#include "llmroof/ops.hpp"
#include "llmroof/units.hpp"

namespace llmroof {

/// How an engine turns device memory into a KV-cache budget.
enum class memory_model : std::uint8_t {
  /// vLLM: utilisation x capacity holds weights, profiled activations and KV.
  fraction_of_total,
  /// SGLang: mem_fraction_static x capacity holds weights and KV; activations
  /// and CUDA graphs live in the rest.
  static_fraction,
  /// TensorRT-LLM: the KV cache takes a fraction of the memory left free
  /// after weights and activations (kv_cache_free_gpu_memory_fraction).
  fraction_of_free,
  /// llama.cpp, Ollama, MLX: no fraction; everything allocated exactly.
  exact,
};

/// Serving-engine settings that decide memory. Defaults are vLLM's; see
/// find_engine for the others.
struct engine_settings {
  std::string name = "vllm";
  memory_model model = memory_model::fraction_of_total;
  /// Share of device memory the engine may use (vLLM gpu_memory_utilization, default 0.9).
  double memory_utilization = 0.9;
  /// CUDA context, cuBLAS/attention workspaces and CUDA graphs, outside the
  /// utilisation budget's KV pool. Estimate: vLLM start-up logs show 0.5-1.5 GiB.
  bytes runtime_reserve = make_bytes(1.0 * gibi);
  /// Tokens per KV block (vLLM block_size default 16); sequences round up.
  int block_tokens = 16;
  /// Tokens of the largest forward pass (vLLM max_num_batched_tokens, V1 default 8192);
  /// sets the activation peak the engine profiles at start-up.
  double max_batched_tokens = 8192;
  /// Sequences the sampler is profiled with (vLLM max_num_seqs default 256).
  double max_sequences = 256;
  std::string source = "vLLM EngineArgs defaults (docs.vllm.ai, engine arguments)";
};

/// Built-in engine profiles: vllm, sglang, tensorrt-llm, llama.cpp, ollama,
/// mlx, with their memory models and defaults (each with its source).
/// Throws std::invalid_argument listing the closest names when unknown.
engine_settings find_engine(std::string_view name);

/// Names of the built-in engine profiles.
std::vector<std::string> engine_names();

/// Share of a device's memory its GPU may address: macOS lets Metal wire
/// about 75% of unified memory (recommendedMaxWorkingSetSize; llama.cpp and
/// MLX report it); discrete GPUs and other unified parts all of it.
inline double gpu_visible_fraction(const device& d) {
  return d.vendor == "Apple" ? 0.75 : 1.0;
}

/// Throws std::invalid_argument naming the first field out of range.
inline void validate(const engine_settings& e) {
  detail::require_in_open_closed("engine.memory_utilization", e.memory_utilization, 0, 1);
  detail::require_non_negative("engine.runtime_reserve", e.runtime_reserve.value());
  detail::require_in("engine.block_tokens", e.block_tokens, 1, 1 << 20);
  detail::require_in("engine.max_batched_tokens", e.max_batched_tokens, 1, 1e9);
  detail::require_in("engine.max_sequences", e.max_sequences, 1, 1e9);
}

/// Can `engine` store its KV cache in `kv`? Each engine offers a fixed set
/// of cache dtypes (vLLM/SGLang kv_cache_dtype: auto, fp8*; TensorRT-LLM
/// adds int8 and nvfp4; llama.cpp/Ollama --cache-type-k: f32, f16, bf16,
/// q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl; MLX: 16 bit or its quantized cache,
/// close to q8_0/q4_0). Weight-only formats (awq, gptq, int8-wo, GGUF mixes)
/// are never a KV format. An empty engine name means "any engine".
inline bool kv_format_supported(std::string_view engine, const numeric_format& kv) {
  const std::string_view n = kv.name;
  const auto in = [&](std::initializer_list<std::string_view> names) {
    for (auto x : names) {
      if (x == n) return true;
    }
    return false;
  };
  const bool any = in({"fp32", "bf16", "fp16", "fp8", "fp8-e4m3", "fp8-e5m2", "int8", "nvfp4", "q8_0", "q4_0", "q4_1",
                       "q5_0", "q5_1", "iq4_nl"});
  if (!any) return false;
  if (engine.empty()) return true;
  if (engine == "vllm" || engine == "sglang") return in({"fp32", "bf16", "fp16", "fp8", "fp8-e4m3", "fp8-e5m2"});
  if (engine == "tensorrt-llm") return in({"fp32", "bf16", "fp16", "fp8", "fp8-e4m3", "fp8-e5m2", "int8", "nvfp4"});
  if (engine == "llama.cpp" || engine == "ollama") {
    return in({"fp32", "bf16", "fp16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"});
  }
  if (engine == "mlx") return in({"fp32", "bf16", "fp16", "q8_0", "q4_0"});
  return true;
}

/// Throws std::invalid_argument unless `engine` can hold a KV cache in `kv`.
inline void validate_kv_format(const engine_settings& e, const numeric_format& kv) {
  if (kv.bits <= 0 || !std::isfinite(kv.bits)) detail::fail("kv format bits", "> 0", kv.bits);
  if (!kv_format_supported("", kv)) {
    throw std::invalid_argument("kv format '" + std::string(kv.name) +
                                "' is a weight format, not a KV cache format (bf16, fp16, fp8, int8, nvfp4, q8_0, q4_0 ...)");
  }
  if (!kv_format_supported(e.name, kv)) {
    throw std::invalid_argument("kv format '" + std::string(kv.name) + "' is not a KV cache type of engine '" + e.name +
                                "'" + (e.name == "vllm" || e.name == "sglang" ? " (it offers bf16, fp16 and fp8)" : ""));
  }
}

/// Stored weight bytes: linear layers in the weight format, embedding and
/// lm_head in theirs, norms and routers in 16 bit. MTP layers are not loaded.
inline bytes weight_bytes(const architecture& a, const precision& pr) {
  const param_counts p = count_parameters(a);
  return pr.attention_format().bytes_of(p.attention) + pr.ffn_format().bytes_of(p.dense_ffn) +
         pr.experts_format().bytes_of(p.routed_experts + p.shared_experts) +
         pr.embedding.bytes_of(p.embedding) + pr.lm_head.bytes_of(p.lm_head) +
         pr.activations.bytes_of(p.norms + p.router);
}

/// Activation peak of the largest forward pass: hidden states and FFN
/// intermediates of max_batched_tokens tokens, (3d + 2 f_max) elements per
/// token in 16 bit, plus fp32 logits of max_sequences sequences.
inline bytes activation_peak(const architecture& a, const engine_settings& e) {
  const double f = a.is_moe() ? std::max<double>(a.ffn_size * (a.moe.first_dense_layers > 0),
                                                 double(a.moe.experts_per_token) * a.moe.expert_ffn)
                              : a.ffn_size;
  return make_bytes(e.max_batched_tokens * (3.0 * a.hidden_size + 2.0 * f) * 2.0 +
                    e.max_sequences * a.vocab_size * 4.0);
}

/// The plan for `users` sequences of `context` tokens each on `devices` devices.
struct memory_plan {
  int devices = 1;
  bytes capacity = make_bytes(0);     ///< all devices
  bytes usable = make_bytes(0);       ///< capacity x memory_utilization
  bytes weights = make_bytes(0);
  bytes reserve = make_bytes(0);      ///< runtime reserve, all devices
  bytes activations = make_bytes(0);
  bytes kv_budget = make_bytes(0);    ///< usable - weights - reserve - activations (may be < 0)
  bytes kv_per_token = make_bytes(0); ///< per token below every window
  bytes kv_per_sequence = make_bytes(0);  ///< one sequence at `context`, block-rounded
  bytes kv_needed = make_bytes(0);    ///< users x kv_per_sequence
  double users = 0;
  double context = 0;
  bool weights_fit = false;           ///< weights + reserve + activations <= usable
  bool fits = false;                  ///< and the KV of all users too
  double max_sequences = 0;           ///< most sequences of `context` tokens that fit
  double max_context = 0;             ///< longest context each of `users` can hold

  /// Bytes missing for the scenario (0 when it fits).
  [[nodiscard]] bytes shortfall() const {
    const bytes need = kv_needed - kv_budget;
    return need.value() > 0 ? need : make_bytes(0);
  }
  /// Bytes left after the scenario (0 when it does not fit).
  [[nodiscard]] bytes headroom() const {
    const bytes left = kv_budget - kv_needed;
    return left.value() > 0 ? left : make_bytes(0);
  }
};

/// `stored_weights` replaces the counted weight bytes when a file says
/// exactly what is loaded (a GGUF or safetensors inventory).
/// Throws std::invalid_argument unless users >= 1, context >= 0, devices >= 1
/// and the engine settings are valid.
inline memory_plan plan_memory(const architecture& a, const precision& pr, const device& d,
                               double users, double context, const engine_settings& e = {},
                               int devices = 1, std::optional<bytes> stored_weights = std::nullopt) {
  detail::require_in("users", users, 1, 1e9);
  detail::require_tokens("context", context);
  detail::require_in("devices", devices, 1, 65536);
  validate(e);
  validate_kv_format(e, pr.kv);
  memory_plan m;
  m.devices = devices;
  m.users = users;
  m.context = context;
  m.capacity = double(devices) * gpu_visible_fraction(d) * d.memory;
  m.usable = e.memory_utilization * m.capacity;
  m.weights = stored_weights ? *stored_weights : weight_bytes(a, pr);
  detail::require_non_negative("stored_weights", m.weights.value());
  m.reserve = double(devices) * e.runtime_reserve;
  m.activations = activation_peak(a, e);
  switch (e.model) {
    case memory_model::fraction_of_total:
    case memory_model::exact:
      m.kv_budget = m.usable - m.weights - m.reserve - m.activations;
      break;
    case memory_model::static_fraction: {
      // Activations and reserve live outside the static fraction; any excess
      // over the rest of memory comes out of the KV pool.
      const bytes outside = m.capacity - m.usable;
      const bytes excess = m.reserve + m.activations - outside;
      m.kv_budget = m.usable - m.weights - (excess.value() > 0 ? excess : make_bytes(0));
      break;
    }
    case memory_model::fraction_of_free: {
      const bytes free = m.capacity - m.weights - m.reserve - m.activations;
      m.kv_budget = free.value() > 0 ? e.memory_utilization * free : free;
      m.usable = m.capacity;
      break;
    }
  }
  m.weights_fit = m.kv_budget.value() >= 0;
  m.kv_per_token = kv_bytes_per_token(a, pr.kv);
  m.kv_per_sequence = kv_bytes_per_sequence(a, pr.kv, context, e.block_tokens);
  m.kv_needed = users * m.kv_per_sequence;
  m.fits = m.weights_fit && m.kv_needed <= m.kv_budget;
  if (m.weights_fit) {
    const double per_seq = m.kv_per_sequence.value();
    m.max_sequences = per_seq > 0 ? std::floor(m.kv_budget.value() / per_seq) : 1e9;
    // Longest context for `users`: KV grows monotonically with context, so
    // bisect on whole tokens (sliding windows and linear state make it
    // piecewise linear).
    const auto fits_at = [&](double c) {
      return users * kv_bytes_per_sequence(a, pr.kv, c, e.block_tokens).value() <=
             m.kv_budget.value();
    };
    double lo = 0;
    double hi = 1e9;
    if (!fits_at(0)) {
      m.max_context = 0;
    } else if (fits_at(hi)) {
      m.max_context = hi;
    } else {
      while (hi - lo > 1) {
        const double mid = std::floor((lo + hi) / 2);
        (fits_at(mid) ? lo : hi) = mid;
      }
      m.max_context = lo;
    }
  }
  return m;
}

}  // namespace llmroof
