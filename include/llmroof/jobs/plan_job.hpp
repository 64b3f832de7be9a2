// The plan job: one question (a workload and its load on a deployment) and
// its whole answer (memory, TTFT, the decode curve, the load served, the
// P/D comparison, the speculative table, energy and cost). The command's
// `plan`, Python's `plan()` and the report read the answer; none computes
// a part of it.
#pragma once

#include <algorithm>
#include <optional>

#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/serving/disaggregation.hpp"
#include "llmroof/serving/energy.hpp"
#include "llmroof/serving/plan.hpp"
#include "llmroof/serving/speculative_step.hpp"

namespace llmroof {

/// The P/D comparison a plan is asked for (the command's --pd, --tps,
/// --kv-link, --kv-link-efficiency, --kv-overlap).
struct pd_request {
  std::optional<int> devices;               ///< devices per instance; unset: "auto"
  std::optional<double> min_tokens_per_s;   ///< per user, the TPOT target's inverse; unset: none
  std::optional<link_spec> kv_link;         ///< unset: default_kv_link
  std::optional<double> kv_link_efficiency; ///< unset: default_kv_link_efficiency
  bool kv_overlap = false;                  ///< layer-by-layer hand-over
};

/// What the plan job is asked. The load is one of `rate`, `concurrency` and
/// `burst` (none: the workload's users when more than one, serve_load).
struct plan_request {
  workload work;                             ///< users, context, prompt, output, prefix, arrivals
  std::optional<double> rate;                ///< requests/s: the open loop
  std::optional<double> concurrency;         ///< closed-loop users
  std::optional<double> burst;               ///< requests sent at once
  length_spread burst_lengths = length_spread::fixed;
  seconds ttft_target = make_seconds(1);     ///< the load's and the P/D goodput's TTFT target
  price cost;                                ///< no price: energy only
  /// Part of the model in host RAM; with `offload_auto`, the fewest layers
  /// on `offload_host` that hold the workload (llama.cpp's --offload auto).
  std::optional<offload_plan> offload;
  bool offload_auto = false;
  device offload_host = detail::default_offload_host();
  std::optional<pd_request> pd;
  std::optional<speculation> spec;           ///< decode speculatively, with the table at the plan's users
};

/// The plan job's answer: everything the plan report shows.
struct plan_answer {
  deployment setup;                          ///< as planned: the request's offload and speculation applied
  workload work;
  plan_result result;
  served_load load;
  std::optional<pd_comparison> pd;
  std::optional<speculative_table> speculative;
  energy_cost energy;
};

/// The plan of `q` on `d`. Throws std::invalid_argument naming the field of
/// an invalid request (as plan, serve_load, validate(price),
/// compare_disaggregation and speculate_against_batch do).
inline plan_answer answer(const deployment& d, const plan_request& q) {
  const deployment s = (q.offload_auto ? with_offload_auto(d, q.work, q.offload_host)
                                       : q.offload ? d.with_offload(q.offload) : d)
                           .with_speculation(q.spec);
  plan_result res = plan(s, q.work);
  served_load load = serve_load(s, q.work, q.rate, q.concurrency, q.ttft_target, q.burst, q.burst_lengths);
  validate(q.cost);
  std::optional<pd_comparison> split;
  if (q.pd) {
    serving_targets t;
    t.ttft = q.ttft_target;
    if (q.pd->min_tokens_per_s) t.tpot = make_seconds(1 / detail::require_positive("min_tokens_per_s", *q.pd->min_tokens_per_s));
    const kv_transfer link = kv_transfer_for(s, q.pd->kv_link, q.pd->kv_link_efficiency, q.pd->kv_overlap);
    // The plan's closed loop (its concurrency, or its users) on every layout too.
    const std::optional<double> loop = load.closed ? std::optional<double>(load.closed->concurrency) : std::nullopt;
    split = compare_disaggregation(s, q.work, t, q.pd->devices, link, loop);
  }
  std::optional<speculative_table> table;
  if (q.spec) {
    // At the plan's users and context, against batch up to twice its users.
    table = speculate_against_batch(s, *q.spec, q.work.users, q.work.context,
                                    std::max(1.0, std::min(2 * q.work.users, 1e6)), res.prefix.shared);
  }
  energy_cost energy = plan_energy(s, res, q.cost, &load, q.work.output);
  return plan_answer{s, q.work, std::move(res), std::move(load), std::move(split), std::move(table), std::move(energy)};
}

}  // namespace llmroof
