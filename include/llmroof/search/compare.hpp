// Two deployments side by side against batch (two models on one machine, or
// one model on two machines), and a Mixture-of-Experts model
// against the dense model of its total size: where batching takes the MoE
// model's advantage away.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "llmroof/model/moe.hpp"
#include "llmroof/deployment.hpp"
#include "llmroof/detail/search.hpp"

namespace llmroof {

/// Two deployments decoding side by side against batch (users at one context).
struct model_comparison {
  double context = 0;
  param_counts first_params;   ///< model a's parameters
  param_counts second_params;  ///< model b's
  parallel_plan first_layout;   ///< model a's layout on the plan's devices (layout_for)
  parallel_plan second_layout;  ///< model b's
  std::vector<double> batches;
  std::vector<phase_timing> first;   ///< model a at each batch
  std::vector<phase_timing> second;  ///< model b at each batch
  /// First batch at which a's step reads at least as many bytes as b's (none
  /// if never up to max_batch).
  std::optional<double> bytes_crossover;
  /// First batch at which a's estimated per-user tokens/s drop to b's or below.
  std::optional<double> speed_crossover;
  weights_fit first_fit;   ///< a's weights and KV room at `context`
  weights_fit second_fit;  ///< b's
  /// Whether side a (`side_a` true) or b holds batch `n` at `context`: its
  /// weights fit and its KV room takes n sequences (weights_fit::holds).
  [[nodiscard]] bool holds(bool side_a, double n) const { return (side_a ? first_fit : second_fit).holds(n); }
  /// Largest whole batch up to the table's last that both sides hold; 0
  /// when one side's weights do not fit or its KV room takes no sequence (the
  /// table's speeds are then what it would run at with the memory, never an
  /// answer).
  [[nodiscard]] double held_batch() const {
    if (batches.empty() || !first_fit.fits || !second_fit.fits) return 0;
    double out = batches.back();
    for (const weights_fit* f : {&first_fit, &second_fit}) {
      if (f->context > 0) out = std::min(out, std::floor(f->max_users));
    }
    return std::max(0.0, out);
  }
  /// speed_crossover where both sides hold it: a conclusion drawn only from
  /// batches that run (none when the crossover lies past what both hold).
  [[nodiscard]] std::optional<double> held_speed_crossover() const {
    if (!speed_crossover || !holds(true, *speed_crossover) || !holds(false, *speed_crossover)) return std::nullopt;
    return speed_crossover;
  }
};

/// Decode of deployments a and b at batches 1, 2, 4, ... max_batch, every
/// sequence at `context` tokens, each in its own layout, and where a stops
/// being cheaper than b. Throws std::invalid_argument on context < 0 or
/// max_batch < 1, or a deployment without a device.
inline model_comparison compare_decode(const deployment& a, const deployment& b, double context,
                                       double max_batch = 1024) {
  a.require_device();
  b.require_device();
  detail::require_tokens("context", context);
  detail::require_in("max_batch", max_batch, 1, 1e7);
  model_comparison out;
  out.context = context;
  out.first_params = count_parameters(a.model);
  out.second_params = count_parameters(b.model);
  out.first_layout = a.parallel();
  out.second_layout = b.parallel();
  for (double n = 1; n <= max_batch; n *= 2) {
    out.batches.push_back(n);
    out.first.push_back(a.decode(n, context));
    out.second.push_back(b.decode(n, context));
  }
  out.bytes_crossover = detail::first_batch(
      [&](double n) {
        return count_decode_parallel(a.model, a.pr, a.dev(), a.parallel(), n, context).total_bytes() >=
               count_decode_parallel(b.model, b.pr, b.dev(), b.parallel(), n, context).total_bytes();
      },
      max_batch);
  out.speed_crossover = detail::first_batch(
      [&](double n) { return a.decode(n, context).estimate >= b.decode(n, context).estimate; }, max_batch);
  out.first_fit = a.fit(context);
  out.second_fit = b.fit(context);
  return out;
}

/// Whether `a` and `b` run on the same machine: the same device (id and
/// roofs: every custom device is "custom") and count; two models compared
/// there share its device plan.
inline bool same_devices(const deployment& a, const deployment& b) {
  const device &x = a.dev(), &y = b.dev();
  return x.id == y.id && x.bandwidth == y.bandwidth && x.memory == y.memory && x.peaks == y.peaks &&
         a.devices() == b.devices() && a.parallel().nodes() == b.parallel().nodes();
}

/// The second side of a comparison as it is compared: on the same devices
/// under the same engine, laid out on `a`'s device plan (beside: a dense
/// model on an expert-parallel plan takes TP); otherwise `b` as it is, in its
/// own layout (llama.cpp's layer split beside vLLM's TP).
inline deployment compared_side(const deployment& a, const deployment& b) {
  a.require_device();
  b.require_device();
  const bool beside = same_devices(a, b) && a.engine.qualified_name() == b.engine.qualified_name();
  return beside ? b.beside(a) : b;
}

/// compare_decode of `a` and compared_side(a, b), as the command and Python
/// compare them; the same model in the same formats reads the same bytes on
/// any machine, so it has no bytes crossover. Throws as compare_decode.
inline model_comparison compare_deployments(const deployment& a, const deployment& b, double context,
                                            double max_batch = 1024) {
  // Two names of one deployment compare nothing: every row would tie.
  if (a.model.id == b.model.id && same_devices(a, b) &&
      a.engine.qualified_name() == b.engine.qualified_name() && a.pr.weights.name == b.pr.weights.name &&
      a.pr.experts_format().name == b.pr.experts_format().name && a.pr.kv.name == b.pr.kv.name &&
      a.parallel().tp == b.parallel().tp && a.parallel().pp == b.parallel().pp && a.parallel().ep == b.parallel().ep) {
    throw std::invalid_argument("compare: both sides are the same deployment (" + a.model.id + " on " +
                                std::to_string(a.devices()) + " x " + a.dev().id + "): change the model, device, "
                                "engine or a format");
  }
  model_comparison c = compare_decode(a, compared_side(a, b), context, max_batch);
  if (a.model.id == b.model.id && a.pr.weights.name == b.pr.weights.name && a.pr.kv.name == b.pr.kv.name &&
      a.pr.lm_head.name == b.pr.lm_head.name) {
    c.bytes_crossover.reset();
  }
  return c;
}

/// Routing of one batch: how many of a layer's routed experts its tokens touch.
struct routing_row {
  double batch = 0;
  double experts_per_layer = 0;     ///< expected distinct experts per MoE layer
  double experts_per_layer_sd = 0;  ///< their standard deviation
  bytes expert_weights = make_bytes(0);  ///< routed-expert bytes the step reads
};

/// A MoE model against the dense model of its total size.
struct moe_analysis {
  architecture dense;        ///< dense_equivalent(a, true)
  model_comparison decode;   ///< first: the MoE model, second: the dense one (its layout: second_layout)
  std::vector<routing_row> routing;  ///< per batch of `decode`
  double routed_expert_params = 0;  ///< one expert's parameters x MoE layers
  /// First batch at which the MoE step reads at least as many weight bytes
  /// per device as the dense one (to within 1%; more under expert
  /// parallelism, whose ranks hold attention whole): from there only its
  /// smaller FLOP remain.
  std::optional<double> weights_crossover;
};

/// The MoE deployment against its dense twin on the same devices (the twin
/// in layout_for). Throws std::invalid_argument for a dense model, context < 0
/// or max_batch < 1.
inline moe_analysis analyze_moe(const deployment& d, double context, double max_batch = 1024) {
  d.require_device();
  const architecture& a = d.model;
  const precision& pr = d.pr;
  if (!a.is_moe()) throw std::invalid_argument("model '" + a.id + "' is dense: 'moe' needs a Mixture-of-Experts model");
  moe_analysis out{dense_equivalent(a, true), {}, {}, expert_params(a) * a.num_moe_layers(), std::nullopt};
  out.decode = compare_decode(d, d.with_model(out.dense, pr), context, max_batch);
  for (std::size_t i = 0; i < out.decode.batches.size(); ++i) {
    const double n = out.decode.batches[i];
    routing_row row{n, expected_distinct_experts(a.moe.num_experts, a.moe.experts_per_token, n),
                    std::sqrt(distinct_experts_variance(a.moe.num_experts, a.moe.experts_per_token, n)), make_bytes(0)};
    for (const auto& o : out.decode.first[i].counts.list()) {
      if (o.kind == op_kind::experts) row.expert_weights = o.weights;
    }
    out.routing.push_back(row);
  }
  // The MoE step converges on the dense one from below as the batch touches
  // every expert.
  const auto weights_at = [&](const architecture& m, const parallel_plan& q, double n) {
    return count_decode_parallel(m, pr, d.dev(), q, n, context).weight_bytes().value();
  };
  out.weights_crossover = detail::first_batch(
      [&](double n) {
        return weights_at(a, out.decode.first_layout, n) >= 0.99 * weights_at(out.dense, out.decode.second_layout, n);
      },
      max_batch);
  return out;
}

/// A catalog MoE model with its parameter counts.
struct moe_model_row {
  const architecture* model = nullptr;
  param_counts params;
};

/// Every catalog MoE model, in catalog order.
inline std::vector<moe_model_row> moe_catalog() {
  std::vector<moe_model_row> out;
  for (const auto& a : models()) {
    if (a.is_moe()) out.push_back({&a, count_parameters(a)});
  }
  return out;
}

}  // namespace llmroof
