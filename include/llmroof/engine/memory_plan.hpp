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

#include "llmroof/detail/search.hpp"
#include "llmroof/model/architecture.hpp"
#include "llmroof/hardware/device.hpp"
#include "llmroof/engine/engine.hpp"
#include "llmroof/model/kv_cache.hpp"
#include "llmroof/step/ops.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// Share of a device's memory its runtime can allocate. macOS lets Metal wire
/// its recommendedMaxWorkingSetSize, which llama.cpp and MLX take as the GPU's
/// memory: 2/3 of RAM up to 32 GiB (16 GB M4: 10.67 GB; 32 GB M1/M2 Max:
/// 21,845 MB), 3/4 above (64 GB M1 Max: 49,152 MiB; 96 GB M2 Max: 73,728 MB),
/// as reported in exo PR 1672, ollama issue 434, llama.cpp issues 1870 and
/// 3213 (sudo sysctl iogpu.wired_limit_mb raises it). NVIDIA's driver keeps
/// about 1% of the DRAM: CUDA reports 79.18-79.19 GiB total on an 80 GiB H100
/// and ~79.25 GiB on an 80 GiB A100 (engine_memory.csv: ML-012..022 print it;
/// ML-001/002 imply it from two utilisations). Others: all of it.
inline double gpu_visible_fraction(const device& d) {
  if (d.vendor == "Apple") return d.memory.value() <= 32.0 * gibi ? 2.0 / 3.0 : 0.75;
  if (d.vendor == "NVIDIA" && d.klass != device_class::cpu) return 0.99;
  return 1.0;
}

/// Where a model is split: tensor-parallel ranks share each layer, expert
/// ranks hold 1/ep of the routed experts and gather every rank's tokens.
struct rank_split {
  int tp = 1;
  int ep = 1;
  int pp = 1;
  int nodes = 1;
  [[nodiscard]] bool multi() const { return tp > 1 || ep > 1 || pp > 1; }
};

/// Bytes an engine adds to the routed experts when it loads them: MXFP4 expert
/// rows padded per tensor-parallel rank (gpt-oss: 2880 -> 3072, +6.7%).
inline bytes expert_padding_bytes(const architecture& a, const precision& pr, const engine_settings& e, int tp = 1) {
  if (!a.is_moe() || e.mxfp4_expert_pad <= 1 || pr.experts_format().name != "mxfp4") return make_bytes(0);
  const double rows = double(a.moe.expert_ffn) / tp;
  const double padded = std::ceil(rows / e.mxfp4_expert_pad) * e.mxfp4_expert_pad;
  return (padded / rows - 1) * pr.experts_format().bytes_of(count_parameters(a).routed_experts);
}

/// Tokens vLLM's fused-MoE kernel works on at once (VLLM_FUSED_MOE_CHUNK_SIZE, 32768).
inline constexpr double fused_moe_chunk_tokens = 32768;

/// Activation peak of one device's start-up profile: the larger of the forward
/// pass of max_batched_tokens tokens and the sampler of max_sequences sequences
/// (the forward's buffers are freed before the sampler runs).
/// Forward, 16-bit elements per token: QKV (h + 2g) d_h / tp, gate-up, act and
/// down 3 f / tp, two hidden states 2 d. MoE layers: the fused-MoE workspace of
/// min(32768, tokens x ep) tokens x top-k x (3 f_e / tp + d), plus the gathered
/// hidden states. Sampler: max_sequences x vocabulary x 4 B x sampler_copies.
inline bytes activation_peak(const architecture& a, const engine_settings& e, rank_split r = {}) {
  const double m = e.max_batched_tokens;
  const double dense_f = a.is_moe() && a.moe.first_dense_layers == 0 ? 0.0 : double(a.ffn_size);
  const double dh = a.head_dim > 0 ? a.head_dim : a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim;
  const double attn = (double(a.num_heads) + 2.0 * a.num_kv_heads) * dh / r.tp;
  double forward = m * (attn + 3.0 * dense_f / r.tp + 2.0 * a.hidden_size) * 2.0;
  if (a.is_moe()) {
    const double gathered = m * r.ep;
    const double chunk = std::min(fused_moe_chunk_tokens, gathered);
    const double moe = chunk * a.moe.experts_per_token * (3.0 * a.moe.expert_ffn / r.tp + a.hidden_size) * 2.0 +
                       gathered * a.hidden_size * 2.0;
    forward = std::max(forward, moe);
  }
  const double sampler = e.max_sequences * double(a.vocab_size) * 4.0 * e.sampler_copies;
  return make_bytes(std::max(forward, sampler));
}

/// The plan for `users` sequences of `context` tokens each on `devices` devices.
/// What a speculative drafter adds to one device's memory
/// (detail::drafter_terms, speculative_setup.hpp): its weights, its KV as a share
/// of the target's per token (an MTP module's layers, an EAGLE head's one
/// layer, a draft model's cache), and the lookahead slots each sequence
/// reserves (vLLM allocates k). None without speculation.
struct drafter_load {
  bytes weights = make_bytes(0);  ///< per device
  double kv_share = 0;            ///< drafter KV / the target's, per token on a device
  double lookahead = 0;           ///< tokens reserved per sequence beyond its context
};

struct memory_plan {
  int devices = 1;
  bytes device_memory = make_bytes(0);  ///< all devices' memory as built (an Apple chip's RAM)
  bytes capacity = make_bytes(0);     ///< all devices, as their runtime reports it (gpu_visible_fraction)
  bytes usable = make_bytes(0);       ///< capacity x memory_utilization
  bytes weights = make_bytes(0);
  bytes reserve = make_bytes(0);      ///< runtime and collective reserve (vLLM: non-torch memory)
  bytes activations = make_bytes(0);
  bytes kv_budget = make_bytes(0);    ///< usable - weights - reserve - activations (may be < 0)
  bytes kv_per_token = make_bytes(0); ///< per token below every window
  bytes kv_per_token_past_window = make_bytes(0);  ///< per token past every window (global layers only)
  bytes kv_per_sequence = make_bytes(0);  ///< one sequence at `context`, block-rounded
  bytes kv_needed = make_bytes(0);    ///< users x kv_per_sequence, less the shared prefix's copies
  double shared_tokens = 0;           ///< prompt-prefix tokens every sequence shares (held once)
  bytes kv_shared = make_bytes(0);    ///< their bytes in one sequence at `context` (per device)
  double users = 0;
  double context = 0;
  bool weights_fit = false;           ///< weights + reserve + activations <= usable
  bool fits = false;                  ///< the engine starts, and the KV of all users fits
  double max_sequences = 0;           ///< most sequences of `context` tokens that fit
  double max_context = 0;             ///< longest context each of `users` can hold
  double kv_blocks = 0;               ///< whole KV blocks in the budget (per device)
  double kv_tokens = 0;               ///< tokens those blocks hold (the engine's "KV cache size")
  double max_model_len = 0;           ///< the longest sequence the engine admits
  double max_concurrency = 0;         ///< kv_tokens / max_model_len, as vLLM prints it
  bool starts = false;                ///< KV budget > 0 and one max_model_len sequence fits
  double longest_start = 0;           ///< largest max_model_len that would start

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

namespace detail {

/// KV budget of one device (or of a pool of `devices`) as the engine's memory
/// model computes it; fills capacity, usable, weights, reserve, activations.
inline void apply_engine_budget(memory_plan& m, const architecture& a, const device& d, const engine_settings& e,
                                int devices, bytes weights, rank_split r) {
  m.device_memory = double(devices) * d.memory;
  m.capacity = gpu_visible_fraction(d) * m.device_memory;
  m.usable = e.memory_utilization * m.capacity;
  m.weights = weights;
  require_non_negative("stored_weights", m.weights.value());
  m.reserve = double(devices) * (e.runtime_reserve + (r.multi() ? e.collective_reserve : make_bytes(0)) +
                                 (r.nodes > 1 ? e.inter_node_reserve : make_bytes(0)));
  m.activations = activation_peak(a, e, r);
  switch (e.model) {
    case memory_model::fraction_of_total:
    case memory_model::exact:
      m.kv_budget = m.usable - m.weights - m.reserve - m.activations;
      break;
    case memory_model::static_fraction: {
      // mem_fraction_static x capacity holds weights and KV; what the process
      // already holds when SGLang measures (CUDA context, NCCL) comes out of it,
      // and activations beyond the rest of memory too.
      const bytes outside = m.capacity - m.usable;
      const bytes excess = m.activations - outside;
      m.kv_budget = m.usable - m.weights - m.reserve - (excess.value() > 0 ? excess : make_bytes(0));
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
}

/// Calls f with the engine's settings as it starts for `context`: vLLM V0's
/// token budget sized by max_model_len (with_scheduler_budget), copied only
/// then (a plan is priced in a search's inner loop).
template <class F>
void with_budget(const engine_settings& e, double context, F f) {
  if (e.budget_from_model_len) {
    f(with_scheduler_budget(e, e.max_model_len.value_or(std::max(1.0, context))));
  } else {
    f(e);
  }
}

/// The engine's start-up verdict for a device whose KV costs `per_token` bytes
/// per token of one sequence (that device's share) and `per_sequence(c)` bytes
/// for a sequence of c tokens: blocks, tokens, concurrency and refusal.
template <class PerSequence>
void apply_startup(memory_plan& m, const engine_settings& e, double max_model_len, double per_token,
                   PerSequence per_sequence) {
  m.max_model_len = max_model_len;
  const double budget = m.kv_budget.value();
  const double block = per_token * e.block_tokens;
  m.kv_blocks = budget > 0 && block > 0 ? std::floor(budget / block) : 0;
  m.kv_tokens = block > 0 ? m.kv_blocks * e.block_tokens : (budget > 0 ? 1e9 : 0);
  m.max_concurrency = m.kv_tokens / max_model_len;
  const double longest = budget > 0 ? largest_within(per_sequence, budget) : -1;
  m.longest_start = std::max(0.0, longest);
  m.starts = budget > 0 && per_sequence(max_model_len) <= budget;
}

}  // namespace detail

/// `stored_weights` replaces the counted weight bytes when a file says
/// exactly what is loaded (a GGUF or safetensors inventory). The engine's
/// max_model_len defaults to `context` (what a deployment for it would set).
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
  detail::with_budget(e, context, [&](const engine_settings& es) {
    detail::apply_engine_budget(
        m, a, d, es, devices,
        (stored_weights ? *stored_weights : weight_bytes(a, pr)) + expert_padding_bytes(a, pr, e, devices),
        rank_split{devices, 1});
  });
  m.kv_per_token = kv_bytes_per_token(a, pr.kv);
  m.kv_per_token_past_window = kv_bytes_per_token_past_windows(a, pr.kv);
  const auto per_sequence = [&](double c) { return kv_bytes_per_sequence(a, pr.kv, c, e.block_tokens).value(); };
  m.kv_per_sequence = make_bytes(per_sequence(context));
  m.kv_needed = users * m.kv_per_sequence;
  detail::apply_startup(m, e, e.max_model_len.value_or(std::max(1.0, context)), m.kv_per_token.value(), per_sequence);
  m.fits = m.starts && context <= m.max_model_len && m.kv_needed <= m.kv_budget;
  if (m.weights_fit) {
    const double per_seq = m.kv_per_sequence.value();
    m.max_sequences = per_seq > 0 ? std::floor(m.kv_budget.value() / per_seq) : 1e9;
    // KV grows monotonically with context (piecewise linear under sliding
    // windows and linear state), so search whole tokens (largest_within).
    m.max_context = std::max(
        0.0, detail::largest_within([&](double c) { return users * per_sequence(c); }, m.kv_budget.value()));
  }
  return m;
}

}  // namespace llmroof
