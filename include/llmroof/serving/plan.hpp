// A plan: a workload's users on a deployment, what each of them sees (time
// to first token, tokens/s per user and in total against context) and
// whether the KV cache holds them, with what would make it fit.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "llmroof/serving/alternatives.hpp"
#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/deployment.hpp"
#include "llmroof/serving/energy.hpp"
#include "llmroof/units/metric.hpp"
#include "llmroof/serving/prefix_cache.hpp"
#include "llmroof/serving/speculative_step.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// One point of the decode curve: every user at `context` cached tokens.
struct curve_point {
  double context = 0;
  /// The plain steps (no speculation: speculate() prices a speculative one
  /// against them); `fits` holds a speculative drafter's memory too.
  bool fits = false;                 ///< all users at this context fit in memory
  phase_timing single;               ///< one user alone
  phase_timing all;                  ///< all users decoding together
  /// One user's tokens/s under the profile one standard error slower and one
  /// faster, never narrower than band_width(metric::decode_tps_per_seq).
  band single_band;
  /// Replicas' worth of `all`: users / the fullest replica's users (1 on one
  /// instance; 2 for 64 users on 2 replicas; 1.5 for 3 on 2, whose fuller
  /// replica sets the per-user speed).
  double instances = 1;
  [[nodiscard]] tokens_per_second per_user_estimate() const {
    return make_tokens(1) / all.estimate;
  }
  [[nodiscard]] tokens_per_second per_user_bound() const { return make_tokens(1) / all.bound; }
  [[nodiscard]] tokens_per_second total_estimate() const { return instances * all.tokens_per_s_estimate(); }
};

struct plan_result {
  memory_plan memory;
  phase_timing ttft;                  ///< prefill of the prompt, one user, empty cache
  prefix_reuse prefix;                ///< the workload's shared prefix on this deployment
  /// Prefill of the prompt when its prefix is cached (the uncached tokens
  /// after the cached ones); unset when nothing is cached.
  std::optional<phase_timing> ttft_cached;
  std::vector<curve_point> curve;     ///< from an empty context to workload.context
  double prompt = 0;
  /// When the plan does not fit: each change alone (a smaller KV format the
  /// engine supports, 2 and 4 times the devices, fewer users, a shorter
  /// context); empty when it fits.
  std::vector<alternative> alternatives;
  /// The deployment's replicas and the users of the fullest: `memory`, the
  /// TTFT and the curve's steps are of that replica (memory.users of its
  /// own, max_sequences of all replicas).
  int replicas = 1;
  double users = 0;              ///< the workload's, over every replica
  double users_per_replica = 0;  ///< the fullest replica's: memory.users
};

/// Contexts of the decode curve: 0, then powers of two from 1024, then `context`.
inline std::vector<double> curve_contexts(double context) {
  std::vector<double> cs{0};
  for (double c = 1024; c < context; c *= 2) cs.push_back(c);
  if (context > 0) cs.push_back(context);
  return cs;
}

/// Throws std::invalid_argument on invalid workload fields (see validate).
/// Throws also when the engine refuses sequences of the context (beyond the
/// model's positions: deployment::context_refusal).
inline plan_result plan(const deployment& d, const workload& w) {
  validate(w);
  if (const std::string why = d.context_refusal(w.context); !why.empty()) throw std::invalid_argument(why);
  if (d.replicas() > 1) {
    // Each replica its share of the users; the fullest sets what a user sees.
    const int r = d.replicas();
    workload each = w;
    each.users = std::ceil(w.users / r);
    plan_result out = plan(d.instance(), each);
    out.replicas = r;
    out.users = w.users;
    out.memory.max_sequences *= r;
    for (curve_point& pt : out.curve) pt.instances = w.users / each.users;
    for (alternative& a : out.alternatives) {
      a.users *= r;
      a.max_users_at_context *= r;
      a.devices *= r;
    }
    return out;
  }
  plan_result out;
  out.users = out.users_per_replica = w.users;
  out.prefix = reuse_of(d, w);
  out.memory = d.memory(w.users, w.context, out.prefix.shared);
  out.prompt = w.prompt_tokens();
  out.ttft = d.prefill(out.prompt);
  if (out.prefix.cached > 0) out.ttft_cached = prefill_on_hit(d, w, out.prefix);
  const deployment lo = d.with_efficiency(slower(d.efficiency()));
  const deployment hi = d.with_efficiency(faster(d.efficiency()));
  const double width = band_width(metric::decode_tps_per_seq);
  for (double c : curve_contexts(w.context)) {
    curve_point pt;
    pt.context = c;
    pt.fits = d.memory(w.users, c, out.prefix.shared).fits;
    pt.single = d.decode(1, c);
    pt.all = d.decode(w.users, c);
    const double low = 1.0 / lo.decode(1, c).estimate.value();
    const double high = 1.0 / hi.decode(1, c).estimate.value();
    pt.single_band = widen({low, high}, pt.single.tokens_per_s_estimate().value(), width);
    out.curve.push_back(pt);
  }
  if (!out.memory.fits) out.alternatives = plan_alternatives(d, w, out.memory);
  return out;
}

/// Power, energy per output token and cost of the plan's users at its
/// context: per output token of the load served when `load` runs one
/// (closed loop: requests/s x `output`; a stable open loop: rate x
/// `output`; a burst: its output over its duration), else of every user
/// decoding at once (the decode curve's last point); the power is their
/// decode step's. Per input token of its prompt: with_prefill_energy.
/// Marked `fits` false when no load runs and the users do not fit. Throws
/// std::invalid_argument for an invalid price.
/// Speculative: the verify step's power (power_step) over draft + verify,
/// each sequence keeping accepted_tokens per step.
inline energy_cost plan_energy(const deployment& d, const plan_result& r, const price& p = {},
                               const served_load* load = nullptr, double output = 0) {
  if (r.curve.empty()) return energy_and_cost(d, phase_timing{}, 0, p);
  const phase_timing& step = r.curve.back().all;
  const double users = r.memory.users, context = r.curve.back().context;
  // The output rate a bill divides by: the load served when one runs (its
  // prompts' prefill and waits in it), else every user decoding at once.
  const double served_by = r.curve.back().instances;  // replicas' worth of the step
  double served = served_by * (d.speculative ? users / step_of(d.instance(), users, context).per_token()
                                             : step.tokens_per_s_estimate().value());
  std::string basis = "decoding";
  if (load && load->closed && load->closed->requests_per_s > 0) {
    served = load->closed->output_tokens_per_s(output);
    basis = "closed loop";
  } else if (load && load->open && load->open->stable) {
    served = load->open->rate * output;
    basis = "open loop";
  } else if (load && load->burst) {
    served = load->burst->output_tokens_per_s();
    basis = "burst";
  }
  // The power of the users' decode steps at the context (prefill draws about
  // as much: both run near the roofs).
  energy_cost e = energy_and_cost(d, d.speculative ? power_step(d.instance(), users, context) : step, served, p);
  e.basis = basis;
  // A load that runs is served (users past the slots wait their turn); all
  // users decoding at once run only when they fit.
  e.fits = r.memory.fits || basis != "decoding";
  // The prompt side: the plan's TTFT prefill, blended with its cache hits.
  return with_prefill_energy(e, d, r.prompt, r.ttft, r.ttft_cached ? &*r.ttft_cached : nullptr, r.prefix.hit, p);
}

}  // namespace llmroof
