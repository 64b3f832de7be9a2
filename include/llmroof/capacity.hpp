// Capacity: the most a deployment serves of one request shape and what binds
// (saturation), the load a plan reports (served_load), and the most users
// meeting speed and TTFT targets (max_users).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "llmroof/load.hpp"

namespace llmroof {

/// The most a deployment serves of one request shape (workload prompt and
/// output) and what stops it serving more.
struct saturation_result {
  double requests_per_s = 0;       ///< highest sustained request rate
  double output_tokens_per_s = 0;  ///< requests_per_s x output
  double users = 0;                ///< requests in the engine at that rate
  closed_loop_result at;           ///< the closed loop that reaches it
  /// What binds: kv_cache (the KV slots fill first), max_num_seqs, or the
  /// roof of the engine's time once it saturates below its slots: compute,
  /// bandwidth, scheduler (per-step and launch overheads), link
  /// (collectives), prefill (prompts take most of the device).
  serving_limit limit = serving_limit::none;
};

/// Throughput grows with the users in the engine until the KV cache or
/// max_num_seqs stops admitting more, or the engine's time saturates first:
/// the closed loop with as many users as the engine has slots finds both.
/// Throws std::invalid_argument on invalid workload fields.
inline saturation_result saturation(const deployment& d, const workload& s) {
  validate(s);
  const engine_slots held_at_once = slots_for(d, s);
  const double slots = std::floor(std::min(held_at_once.slots, 1e6));
  saturation_result out;
  if (slots < 1) {
    out.limit = serving_limit::kv_cache;
    return out;
  }
  out.at = serve_closed_loop(d, s, slots);
  out.requests_per_s = out.at.requests_per_s;
  out.output_tokens_per_s = out.at.output_tokens_per_s(s.output);
  out.users = out.at.active;
  if (out.at.limit != serving_limit::compute) {
    out.limit = held_at_once.limit;
    return out;
  }
  if (out.at.load.prefill_share >= 0.5) {
    out.limit = serving_limit::prefill;
    return out;
  }
  const phase_timing step = d.decode(std::max(1.0, out.users), s.prompt_tokens() + s.output / 2);
  switch (step.limit()) {
    case bottleneck::memory: out.limit = serving_limit::bandwidth; break;
    case bottleneck::compute: out.limit = serving_limit::compute; break;
    case bottleneck::overhead: out.limit = serving_limit::scheduler; break;
    case bottleneck::link: out.limit = serving_limit::link; break;
  }
  return out;
}

/// What a plan reports under load: the open loop at a request rate (with the
/// most requests/s at a TTFT target and without one), or the closed loop of N
/// users, and the deployment's saturation beside either. Empty without load.
struct served_load {
  std::optional<load_result> open;
  seconds ttft_target = make_seconds(1);  ///< of max_rate_at_target
  double max_rate_at_target = 0;          ///< requests/s, open loop only
  double max_rate = 0;                    ///< requests/s, open loop only
  std::optional<closed_loop_result> closed;
  std::optional<saturation_result> most;
};

/// Serves the workload's request shape (prompt, output) at `rate` requests/s
/// or to `concurrency` closed-loop users; with neither, the plan's users when
/// more than one (loop_concurrency). Throws std::invalid_argument when both
/// are given, and on invalid fields.
inline served_load serve_load(const deployment& d, const workload& s, std::optional<double> rate, std::optional<double> concurrency,
                              seconds ttft_target = make_seconds(1)) {
  if (rate && concurrency) throw std::invalid_argument("concurrency and rate are two load models; give one");
  served_load out;
  out.ttft_target = ttft_target;
  if (rate) {
    out.open = serve_at_rate(d, s, *rate);
    out.max_rate_at_target = max_rate(d, s, ttft_target);
    out.max_rate = max_rate(d, s);
  }
  if (auto n = loop_concurrency(s, concurrency, rate.has_value())) out.closed = serve_closed_loop(d, s, *n);
  if (out.open || out.closed) out.most = saturation(d, s);
  return out;
}

/// One point of the users curve: n users at the workload's context.
struct users_point {
  double users = 0;
  phase_timing step;  ///< the decode step of all of them
  bool fits = false;  ///< the deployment holds them
  [[nodiscard]] double tokens_per_s_per_user() const { return 1.0 / step.estimate.value(); }
  [[nodiscard]] double tokens_per_s_total() const { return users / step.estimate.value(); }
};

/// The most concurrent users (all at `context` cached tokens) such that each
/// gets at least `min_tokens_per_s`, a new arrival's TTFT (prefill of
/// workload.prompt beside the running decodes) stays at or under
/// `ttft_target` (0 = none), and everything fits in memory.
struct users_result {
  double users = 0;                        ///< 0 when not even one user meets the targets
  phase_timing step;                       ///< decode step at that many users
  seconds ttft = make_seconds(0);
  memory_plan memory;
  serving_limit limit = serving_limit::none;  ///< what stops one more user: tokens_per_s, ttft, memory
  /// Those users in a closed loop, each sending workload prompt + output
  /// tokens when the last answer completes (concurrency 0 when users is 0).
  closed_loop_result loop;
  /// Per-user and total tokens/s at 1, 2, 4, ... users (below twice the
  /// answer, at most 4,096) and at the answer itself.
  std::vector<users_point> curve;
};

inline users_result max_users(const deployment& d, const workload& s, tokens_per_second min_tokens_per_s, seconds ttft_target = make_seconds(0)) {
  validate(s);
  detail::require_non_negative("min_tokens_per_s", min_tokens_per_s.value());
  const double prompt = s.prompt_tokens();
  const seconds prefill_alone = d.prefill(prompt).estimate;
  // The n-th user's request pays the engine's request handling, waits half the
  // step the others are running, and its prompt's chunks share their steps.
  const auto arrival_ttft = [&](double n, const phase_timing& step) {
    return d.efficiency().per_request + (n > 1 ? 0.5 : 0.0) * step.estimate + prefill_alone +
           std::ceil(prompt / d.engine.max_batched_tokens) * step.estimate;
  };
  const auto check = [&](double n, serving_limit* why) {
    const phase_timing step = d.decode(n, s.context);
    if (1.0 / step.estimate.value() < min_tokens_per_s.value()) {
      if (why) *why = serving_limit::tokens_per_s;
      return false;
    }
    const seconds ttft = arrival_ttft(n, step);
    if (ttft_target.value() > 0 && ttft > ttft_target) {
      if (why) *why = serving_limit::ttft;
      return false;
    }
    if (!d.memory(n, s.context).fits) {
      if (why) *why = serving_limit::memory;
      return false;
    }
    return true;
  };
  users_result out;
  if (!check(1, &out.limit)) return out;
  const double lo = detail::last_true([&](double n) { return check(n, nullptr); }, 1, 2, 1e6, true);
  check(lo + 1, &out.limit);
  out.users = lo;
  out.step = d.decode(lo, s.context);
  out.ttft = arrival_ttft(lo, out.step);
  out.memory = d.memory(lo, s.context);
  if (lo <= 1e6) out.loop = serve_closed_loop(d, s, lo);
  std::vector<double> ns;
  for (double n = 1; n < lo * 2 && n <= 4096; n *= 2) ns.push_back(n);
  if (std::find(ns.begin(), ns.end(), lo) == ns.end()) ns.push_back(lo);
  std::sort(ns.begin(), ns.end());
  for (double n : ns) out.curve.push_back({n, d.decode(n, s.context), d.memory(n, s.context).fits});
  return out;
}

}  // namespace llmroof
