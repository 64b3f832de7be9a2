// What would make a deployment hold a workload it does not: each change
// alone (a smaller weight or KV format the engine runs, a larger memory
// share, more devices, fewer users, a shorter context), with its fit and speed.
#pragma once

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "llmroof/deployment.hpp"
#include "llmroof/serving/prefix_cache.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// One change that could make a plan fit, with its fit and speed.
struct alternative {
  std::string change;  ///< "weights in fp8", "KV cache in fp8-e4m3", "memory utilisation 0.95", "2 devices (TP 2)", "fewer users", "shorter context"
  bool fits = false;
  double users = 0;
  double context = 0;
  int devices = 1;
  std::string weights; ///< weight format name (the linear layers' or, for MoE models, the experts')
  std::string kv;      ///< KV format name
  double max_users_at_context = 0;
  phase_timing step;   ///< all `users` decoding at `context`
  [[nodiscard]] double per_user_tokens_per_s() const { return 1.0 / step.estimate.value(); }
  [[nodiscard]] double total_tokens_per_s() const { return users / step.estimate.value(); }
};

/// The fewest whole layers a single-device deployment keeps in host RAM so
/// that `users` sequences of `context` fit (llama.cpp -ngl below the layer
/// count; `host` runs them), `shared` prefix tokens held once: none when it fits already, nullopt when even every
/// layer on the host does not fit. The share rises in steps of 1/num_layers.
inline std::optional<offload_plan> smallest_offload(const deployment& d, double users, double context,
                                                    device host = detail::default_offload_host(), double shared = 0) {
  offload_plan o;
  o.host = std::move(host);
  if (d.memory(users, context, shared).fits) return o;
  const int layers = d.model.num_layers;
  const auto fits = [&](int k) {
    o.layers = double(k) / layers;
    return d.with_offload(o).memory(users, context, shared).fits;
  };
  if (d.devices() != 1 || !fits(layers)) return std::nullopt;
  int lo = 0, hi = layers;  // fits(hi), !fits(lo)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  o.layers = double(hi) / layers;
  return o;
}

/// `d` with the smallest offload that holds `w` (llama.cpp: `--offload auto`,
/// offload as much as needed and no more). Throws std::invalid_argument when
/// `d` spans several devices or not even every layer in host RAM fits.
inline deployment with_offload_auto(const deployment& d, const workload& w,
                                    device host = detail::default_offload_host()) {
  if (d.devices() != 1) throw std::invalid_argument("offload auto needs a single device (got " + std::to_string(d.devices()) + ")");
  const auto o = smallest_offload(d, w.users, w.context, std::move(host), reuse_of(d, w).shared);
  if (!o) {
    throw std::invalid_argument("offload auto: " + std::to_string(static_cast<long long>(w.users)) + " x " +
                                std::to_string(static_cast<long long>(w.context)) +
                                " tokens do not fit even with every layer in host RAM");
  }
  return o->layers > 0 ? d.with_offload(*o) : d;
}

/// What would make workload `w` fit deployment `d`, each change alone (see
/// plan_result::alternatives); `now` is the workload's own memory plan.
inline std::vector<alternative> plan_alternatives(const deployment& d, const workload& w, const memory_plan& now) {
  std::vector<alternative> out;
  // The format most of the weights are in: the experts' in a MoE model.
  const auto bulk = [](const deployment& x) -> const numeric_format& {
    return x.model.is_moe() ? x.pr.experts_format() : x.pr.weights;
  };
  const double shared = reuse_of(d, w).shared;
  // A change keeps a speculative drafter (its memory) where the change can
  // run it: not a layer split or an offload, which speculate() does not model.
  const auto drafted = [&](const deployment& x) {
    return d.speculative && x.parallel().pp == 1 && !x.offload() ? x.with_speculation(d.speculative) : x;
  };
  const auto entry = [&](std::string change, const deployment& plain, double users, double context) {
    const deployment x = drafted(plain);
    const memory_plan m = x.memory(users, context, shared);
    out.push_back({std::move(change), m.fits, users, context, x.devices(), std::string(bulk(x).name),
                   std::string(x.pr.kv.name), m.max_sequences, x.decode(users, context)});
  };
  for (const char* kv : {"fp8-e4m3", "q8_0", "q4_0"}) {
    if (find_format(kv).bits >= d.pr.kv.bits || !kv_format_supported(d.engine.id, find_format(kv))) continue;
    deployment x = d;
    x.pr.kv = find_format(kv);
    entry(std::string("KV cache in ") + kv, x, w.users, w.context);
  }
  // Weight formats the engine runs at well under the bits stored now (a
  // checkpoint in that format: its tensors, so a file's own bytes no longer apply).
  const double stored_bits = bulk(d).bits;
  int offered = 0;
  for (std::string_view name : engine_row_of(d.engine.id).weight_formats) {
    const numeric_format& f = find_format(name);
    if (f.bits > 0.8 * stored_bits || offered == 2) continue;
    precision pr = precision::of(f, d.pr.kv);
    std::optional<bytes> stored;
    if (d.source) stored = loaded_weight_bytes(*d.source, pr, false);
    const deployment x(d.model, pr, d.roof(), d.where, d.engine, stored);
    entry("weights in " + std::string(name), x, w.users, w.context);
    ++offered;
  }
  // vLLM's gpu_memory_utilization (SGLang's mem_fraction_static) raised to
  // 0.95: what vLLM's own error asks for when no KV cache fits, and the value
  // gpt-oss-120b started with on one H100 (data/memory/engine_memory.csv ML-013).
  if (d.engine.memory_utilization < 0.95 && d.engine.model != memory_model::exact) {
    engine_settings e = d.engine;
    e.memory_utilization = 0.95;
    const deployment x(d.model, d.pr, d.roof(), d.where, e, d.stored);
    entry("memory utilisation 0.95", x, w.users, w.context);
  }
  // A smaller max_num_seqs, where the activation peak it profiles is what
  // leaves no KV cache: vLLM profiles its sampler with max_num_seqs
  // sequences of vocabulary-wide fp32 logits (gpt-oss-120b on one H100: 7.44
  // GiB at 1,024, 0.93 at 128). The largest power of two below it that fits,
  // never fewer sequences than the users.
  if (!now.fits && d.engine.sampler_copies > 0 && d.engine.max_sequences > w.users) {
    for (double seqs = std::exp2(std::ceil(std::log2(d.engine.max_sequences)) - 1); seqs >= std::max(1.0, w.users);
         seqs /= 2) {
      engine_settings e = d.engine;
      e.max_sequences = seqs;
      const deployment x(d.model, d.pr, d.roof(), d.where, e, d.stored);
      if (!drafted(x).memory(w.users, w.context, shared).fits) continue;
      entry("max_num_seqs " + std::to_string(static_cast<long long>(seqs)), x, w.users, w.context);
      break;
    }
  }
  for (int more : {2, 4}) {
    parallel_plan q = d.parallel();
    if (q.ep > 1) {
      q.ep *= more;  // under TP x EP both grow: each expert keeps its tp / ep split
      if (q.tp > 1) q.tp *= more;
      if (q.ep > d.model.moe.num_experts) continue;
    } else if (q.tp == 1 && (q.pp > 1 || engine_row_of(d.engine.id).splits_layers)) {
      q.pp *= more;  // llama.cpp splits by layers
      if (q.pp > d.model.num_layers) continue;
    } else {
      q.tp *= more;
    }
    q.devices_per_node = std::max(q.devices_per_node, q.devices());
    // A layout the model cannot take is no alternative (phi-4's 10 KV heads
    // split over 2 devices, not 4): left out, as recommend's search skips it.
    std::optional<deployment> built;
    try {
      // More devices drop an offload (it needs a single device): the devices
      // hold all the weights. The other changes keep it.
      built.emplace(d.model, d.pr, d.roof(), placement{q, std::nullopt}, d.engine, d.stored);
    } catch (const std::invalid_argument&) {
      continue;
    }
    const deployment& x = *built;
    const std::string how = q.ep > 1 || q.dp_attention_tp() ? layout_name(q)
                            : q.tp == 1 ? "layer split"
                                        : "TP " + std::to_string(q.tp) + (q.pp > 1 ? " x PP " + std::to_string(q.pp) : "");
    entry(std::to_string(q.devices()) + " devices (" + how + ")", x, w.users, w.context);
  }
  // llama.cpp: the fewest layers left in host RAM that make it fit.
  if (engine_row_of(d.engine.id).splits_layers && !d.offload() && d.devices() == 1 && !d.speculative) {
    if (const auto o = smallest_offload(d, w.users, w.context); o && o->layers > 0) {
      const long k = std::lround(o->layers * d.model.num_layers);
      entry("offload " + std::to_string(k) + " of " + std::to_string(d.model.num_layers) + " layers", d.with_offload(*o),
            w.users, w.context);
    }
  }
  if (now.weights_fit && now.max_sequences >= 1) entry("fewer users", d, std::min(w.users, now.max_sequences), w.context);
  if (now.weights_fit && now.max_context >= 1) entry("shorter context", d, w.users, std::min(w.context, now.max_context));
  return out;
}

}  // namespace llmroof
