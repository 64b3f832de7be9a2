// JSON reports of the command and the Python bindings (schema: docs/cli-json.md): the plan.
#include "report/tables.hpp"

#include <cmath>
#include <string>

namespace llmroof::report {
namespace {


struct plan_view {
  const setup& s;  // the shared walk's (setup_fields)
  const plan_answer& a;
};

json curve_rows(const plan_result& res) {
  json curve = json::array();
  for (const auto& pt : res.curve) {
    curve.push_back({{"context", pt.context},
                     {"single_user_tokens_per_s_low", pt.single_band.low},
                     {"single_user_tokens_per_s_high", pt.single_band.high},
                     {"fits", pt.fits},
                     {"single_user_tokens_per_s_bound", pt.single.tokens_per_s_bound().value()},
                     {"single_user_tokens_per_s_estimate", pt.single.tokens_per_s_estimate().value()},
                     {"per_user_tokens_per_s_bound", pt.per_user_bound().value()},
                     {"per_user_tokens_per_s_estimate", pt.per_user_estimate().value()},
                     {"total_tokens_per_s_estimate", pt.total_estimate().value()},
                     {"tpot_s_estimate", pt.all.estimate.value()},
                     {"bottleneck", to_string(pt.all.limit())}});
  }
  return curve;
}

const field_table<plan_view>& plan_fields() {
  using V = plan_view;
  static const field_table<V> t = report_table<V>(
      "llmroof.plan/1",
      {
          {"efficiency", object_t, "The efficiency profile the estimates use (shares, overheads, its source).",
           [](const V& v) { return efficiency_json(v.s.roof().efficiency()); }},
          {"memory", "MemoryPlan",
           "Weights, reserve, activations and every user's KV cache against the memory: one replica's devices "
           "and users (the fullest's) where parallel.replicas > 1, max_users_at_context of them all.",
           [](const V& v) { return memory_json(v.a.result.memory); }},
          {"users", "float", "The plan's users, over every replica.", [](const V& v) { return json(v.a.result.users); }},
          {"users_per_replica", "float", "Users of the fullest replica (memory.users); the users on one replica.",
           [](const V& v) { return json(v.a.result.users_per_replica); }},
          {"prompt_tokens", "float", "Prompt of the TTFT estimate.", [](const V& v) { return json(v.a.result.prompt); }},
          {"ttft", "Phase", "Prefill of prompt_tokens for one user on an empty cache: TTFT without queueing.",
           [](const V& v) { return phase_json(v.a.result.ttft); }},
          {"prefix", maybe_object_t,
           "The prompt prefix every request shares, when one is given: tokens, cached_tokens (what a cache hit "
           "skips: whole blocks, never the last prompt token; 0 when the engine caches none), hit_rate, "
           "shared_tokens (held once in memory: block-sharing engines), computed_tokens (mean prompt tokens a "
           "request computes) and ttft_cached (the prefill on a hit, a phase; None when nothing is cached).",
           [](const V& v) { return v.a.result.prefix.prefix > 0 ? prefix_json(v.a.result.prefix, v.a.result.ttft_cached) : absent(); }},
          {"decode_curve", rows_t,
           "Decode speed at each context from 0 to the plan's: context, fits, "
           "single_user_tokens_per_s_estimate/_bound/_low/_high (one user alone, with the band), "
           "per_user_tokens_per_s_estimate/_bound and total_tokens_per_s_estimate (all users), tpot_s_estimate, "
           "bottleneck.",
           [](const V& v) { return curve_rows(v.a.result); }},
          {"alternatives", rows_t,
           "When it does not fit: each change alone (change, fits, users, context, devices, weights, kv, "
           "max_users_at_context, per_user_tokens_per_s_estimate, total_tokens_per_s_estimate); else empty.",
           [](const V& v) { return alternatives_json(v.a.result.alternatives); }},
          {"energy", object_t,
           "The plan's users at its context: devices, power_w (all devices, their decode step's, from the "
           "roofline's compute- and memory-bound time between idle and TDP; null without a TDP), "
           "output_tokens_per_s (basis: the load served, 'closed loop', 'open loop' or 'burst', when one runs, "
           "else 'decoding', every user decoding at once), joules_per_output_token, output_tokens_per_s_per_kw, "
           "and with a price cost_per_hour, cost_per_month (x 730.5 h) and cost_per_million_output_tokens "
           "(cost_per_hour / output tokens per hour; USD; null without one); fits (false: the users do not fit, "
           "the figures are what it would draw if they did); the prompt's prefill: joules_per_input_token and "
           "cost_per_million_input_tokens, blended over prefix-cache hits (its share of the same hours, not added).",
           [](const V& v) { return energy_json(v.a.energy); }},
          {"disaggregation", maybe_object_t,
           "With pd: the plan's devices as aggregated replicas, as one instance, and split into x prefill and y "
           "decode instances (link, link_efficiency, layerwise, ttft_target_s, tpot_target_s; rows: layout, "
           "disaggregated, prefill_instances, decode_instances, devices, requests_per_s (the goodput under the "
           "targets), output_tokens_per_s, output_tokens_per_s_per_device, ttft_s, tpot_s, kv_transfer_s, "
           "decode_users, prefill_utilisation, power_w and joules_per_output_token (every device of both pools), "
           "limit, and loop: the layout under the plan's closed loop (concurrency, or its users) without the "
           "targets, users, requests_per_s, output_tokens_per_s, ttft_s, tpot_s, queue_wait_s, inside (null "
           "without a loop); best, why).",
           [](const V& v) { return v.a.pd ? pd_json(*v.a.pd) : absent(); }},
          {"speculation", maybe_object_t,
           "With speculative decoding (--spec): the speculate report (llmroof.speculative/1) at the plan's users "
           "and context, against batch up to twice the users, with its memory.",
           [](const V& v) { return v.a.speculative ? speculative_json(v.s, *v.s.speculative, *v.a.speculative) : absent(); }},
          {"load", maybe_object_t,
           "The plan under load: a closed loop (concurrency, or more than one user), an open loop (a rate) or a "
           "burst (requests sent at once: requests, lengths, slots, limit, duration_s, requests_per_s, ttft_s, "
           "first_wave_ttft_s, tpot_s, output_tokens, output_tokens_per_s, prefill_share), with its saturation; "
           "absent for one user alone.",
           [](const V& v) {
             return v.a.load.open || v.a.load.closed || v.a.load.burst ? load_json(v.a.load, v.a.work.output) : absent();
           }},
      });
  return t;
}

}  // namespace

json plan_json(const plan_answer& a) {
  return object_json(plan_fields(), plan_view{a.setup, a});
}

std::vector<key_doc> plan_keys() { return keys(plan_fields()); }

}  // namespace llmroof::report
