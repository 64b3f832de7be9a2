// Capacity: the most a deployment serves of one request shape and what binds
// (saturation), the load a plan reports (served_load), and the most users
// meeting speed and TTFT targets (max_users).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "llmroof/serving/energy.hpp"
#include "llmroof/serving/load_model.hpp"

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
  // What bounds the step that runs (a speculative deployment's verify).
  const phase_timing step = power_step(d, std::max(1.0, out.users), s.mean_decode_context());
  switch (step.limit()) {
    case bottleneck::memory: out.limit = serving_limit::bandwidth; break;
    case bottleneck::compute: out.limit = serving_limit::compute; break;
    case bottleneck::overhead: out.limit = serving_limit::scheduler; break;
    case bottleneck::link: out.limit = serving_limit::link; break;
  }
  return out;
}

namespace detail {

/// The closed loop of `users` over the replicas of `d` behind a router that
/// spreads them as evenly as they go (r - m replicas hold q users, m hold
/// q + 1; q = floor(users / r)), each its own closed loop: requests/s and the
/// requests inside summed, the times the means over requests (a fuller
/// replica sends more of them); slots of all replicas; the fullest replica's
/// load and limit.
inline closed_loop_result replicated_loop(const deployment& d, const llmroof::workload& s, double users) {
  const deployment one = d.instance();
  const double r = d.replicas(), q = std::floor(users / r), more = users - r * q;
  std::vector<std::pair<double, closed_loop_result>> groups;
  if (r - more > 0 && q > 0) groups.emplace_back(r - more, serve_closed_loop(one, s, q));
  if (more > 0) groups.emplace_back(more, serve_closed_loop(one, s, q + 1));
  closed_loop_result out = groups.back().second;  // the fullest replica's load, limit and shape
  out.concurrency = users;
  out.slots *= r;
  out.active = out.requests_per_s = 0;
  for (const auto& [n, c] : groups) {
    out.active += n * c.active;
    out.requests_per_s += n * c.requests_per_s;
  }
  if (!(out.requests_per_s > 0)) return out;
  out.ttft = out.tpot = out.queue_wait = out.first_wave_ttft = make_seconds(0);
  for (const auto& [n, c] : groups) {
    const double share = n * c.requests_per_s / out.requests_per_s;
    out.ttft = out.ttft + share * c.ttft;
    out.tpot = out.tpot + share * c.tpot;
    out.queue_wait = out.queue_wait + share * c.queue_wait;
    out.first_wave_ttft = out.first_wave_ttft + share * c.first_wave_ttft;
  }
  return out;
}

/// `s` of one replica scaled to `r` of them: rates and requests r times.
inline saturation_result replicated(saturation_result s, double r) {
  s.requests_per_s *= r;
  s.output_tokens_per_s *= r;
  s.users *= r;
  return s;
}

}  // namespace detail

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
  std::optional<burst_result> burst;  ///< every request sent at once (serve_burst)
};

/// Serves the workload's request shape (prompt, output) at `rate` requests/s,
/// to `concurrency` closed-loop users, or as a `burst` of that many requests
/// sent at once (their answers spread as `lengths` says); with none, the
/// plan's users when more than one (loop_concurrency). Throws
/// std::invalid_argument when more than one is given, when a rate or a burst
/// meets lockstep arrivals, and on invalid fields.
inline served_load serve_load(const deployment& d, const workload& s, std::optional<double> rate, std::optional<double> concurrency,
                              seconds ttft_target = make_seconds(1), std::optional<double> burst = std::nullopt,
                              length_spread lengths = length_spread::fixed) {
  if (rate && concurrency) throw std::invalid_argument("concurrency and rate are two load models; give one");
  if (burst && (rate || concurrency)) throw std::invalid_argument("a burst is a load model of its own; give it alone");
  if (!burst && lengths != length_spread::fixed) throw std::invalid_argument("burst_lengths needs burst");
  if (rate && s.arrivals == arrival_pattern::lockstep) {
    throw std::invalid_argument("arrivals: lockstep is a closed loop of identical requests; a rate is an open loop");
  }
  if (burst && s.arrivals == arrival_pattern::lockstep) {
    throw std::invalid_argument("arrivals: lockstep is a closed loop; a burst sends every request at once");
  }
  if (!burst && !rate && s.arrivals == arrival_pattern::lockstep && !loop_concurrency(s, concurrency, false)) {
    throw std::invalid_argument("arrivals: lockstep shapes a closed loop, and none runs: give users > 1 or concurrency");
  }
  if (d.replicas() > 1) {
    // Each replica its share: a rate split r ways, a burst as evenly as it
    // goes (the fullest replica's times), the closed loop by groups.
    const deployment one = d.instance();
    const double r = d.replicas();
    served_load out;
    out.ttft_target = ttft_target;
    if (burst) {
      out.burst = serve_burst(one, s, std::ceil(*burst / r), lengths);
      out.burst->output_tokens *= *burst / out.burst->requests;
      out.burst->requests = *burst;
      out.burst->slots *= r;
      out.most = detail::replicated(saturation(one, s), r);
      return out;
    }
    if (rate) {
      out.open = serve_at_rate(one, s, *rate / r);
      out.open->rate = *rate;
      out.open->users *= r;
      out.open->decoding *= r;
      out.max_rate_at_target = r * max_rate(one, s, ttft_target);
      out.max_rate = r * max_rate(one, s);
    }
    if (auto n = loop_concurrency(s, concurrency, rate.has_value())) out.closed = detail::replicated_loop(d, s, *n);
    if (out.open || out.closed) out.most = detail::replicated(saturation(one, s), r);
    return out;
  }
  served_load out;
  out.ttft_target = ttft_target;
  if (burst) {
    out.burst = serve_burst(d, s, *burst, lengths);
    out.most = saturation(d, s);
    return out;
  }
  if (rate) {
    out.open = serve_at_rate(d, s, *rate);
    out.max_rate_at_target = max_rate(d, s, ttft_target);
    out.max_rate = max_rate(d, s);
  }
  if (auto n = loop_concurrency(s, concurrency, rate.has_value())) out.closed = serve_closed_loop(d, s, *n);
  if (out.open || out.closed) out.most = saturation(d, s);
  return out;
}

/// One point of the users curve: n users in a closed loop of the workload's
/// requests, at the workload's context.
struct users_point {
  double users = 0;
  phase_timing step;        ///< the decode step of all of them
  bool fits = false;        ///< the deployment holds them at the context
  closed_loop_result loop;  ///< them sending prompt + output requests, the next when one completes
  double output_tokens_per_s = 0;  ///< the loop's, all users together
  [[nodiscard]] double tokens_per_s_per_user() const { return loop.tokens_per_s_per_user().value(); }
  [[nodiscard]] double tokens_per_s_total() const { return output_tokens_per_s; }
};

/// The most users (each at `context` cached tokens, sending workload.prompt +
/// workload.output requests in a closed loop: the next when an answer
/// completes) such that every one of them is inside the engine, each decodes
/// at least `min_tokens_per_s` in that loop (chunked prefills of the others
/// included), the loop's TTFT stays at or under `ttft_target` (0 = none), and
/// all of them fit in memory at the context. One answer: the headline and the
/// closed loop are the same users.
struct users_result {
  double users = 0;                        ///< 0 when not even one user meets the targets
  phase_timing step;                       ///< decode step at that many users, alone
  seconds ttft = make_seconds(0);          ///< the closed loop's
  memory_plan memory;
  /// What stops one more user: memory (at the context), kv_cache or
  /// max_num_seqs (the engine's slots), compute (it saturates before
  /// holding them), tokens_per_s (decode speed), prefill (the others'
  /// prefills slow decode below the target), ttft.
  serving_limit limit = serving_limit::none;
  /// Those users in the closed loop (concurrency 0 when users is 0).
  closed_loop_result loop;
  /// Per-user and total tokens/s at 1, 2, 4, ... users (below twice the
  /// answer, at most 4,096) and at the answer itself.
  std::vector<users_point> curve;
  double output_tokens_per_s = 0;  ///< the loop's, all users together
  prefix_reuse prefix;             ///< the workload's shared prefix on the deployment
  [[nodiscard]] double tokens_per_s_per_user() const { return loop.tokens_per_s_per_user().value(); }
  [[nodiscard]] double tokens_per_s_total() const { return output_tokens_per_s; }
};

inline users_result max_users(const deployment& d, const workload& s, tokens_per_second min_tokens_per_s, seconds ttft_target = make_seconds(0)) {
  if (d.replicas() > 1) {
    // The most users of one replica, on each: r times them, each user's
    // speed and TTFT the replica's.
    const double r = d.replicas();
    users_result u = max_users(d.instance(), s, min_tokens_per_s, ttft_target);
    const auto all = [r](double& users, double& output, closed_loop_result& loop) {
      for (double* x : {&users, &output, &loop.concurrency, &loop.active, &loop.slots, &loop.requests_per_s}) *x *= r;
    };
    all(u.users, u.output_tokens_per_s, u.loop);
    u.memory.max_sequences *= r;
    for (users_point& p : u.curve) all(p.users, p.output_tokens_per_s, p.loop);
    return u;
  }
  validate(s);
  if (const std::string why = d.context_refusal(s.context); !why.empty()) throw std::invalid_argument(why);
  detail::require_non_negative("min_tokens_per_s", min_tokens_per_s.value());
  const auto check = [&](double n, serving_limit* why) {
    const auto no = [&](serving_limit l) {
      if (why) *why = l;
      return false;
    };
    if (!memory_of(d, s, n, s.context).fits) return no(serving_limit::memory);
    const closed_loop_result loop = serve_closed_loop(d, s, n);
    if (loop.active < n - 1e-9) {
      // Not all inside: the slots are full, or the engine saturates first (on prompts, mostly).
      if (loop.limit != serving_limit::compute) return no(loop.limit);
      return no(loop.load.prefill_share >= 0.5 ? serving_limit::prefill : serving_limit::compute);
    }
    if (loop.tokens_per_s_per_user() < min_tokens_per_s) {
      // Fast enough alone, too slow beside the others' prefills: interference.
      const bool alone = 1.0 / step_of(d, n, s.mean_decode_context()).per_token() >= min_tokens_per_s.value();
      return no(alone ? serving_limit::prefill : serving_limit::tokens_per_s);
    }
    if (ttft_target.value() > 0 && loop.ttft > ttft_target) return no(serving_limit::ttft);
    return true;
  };
  users_result out;
  out.prefix = reuse_of(d, s);
  if (!check(1, &out.limit)) return out;
  const double lo = detail::last_true([&](double n) { return check(n, nullptr); }, 1, 2, 1e6, true);
  if (lo < 1e6) check(lo + 1, &out.limit);
  out.users = lo;
  out.step = d.decode(lo, s.context);
  out.loop = serve_closed_loop(d, s, lo);
  out.output_tokens_per_s = out.loop.output_tokens_per_s(s.output);
  out.ttft = out.loop.ttft;
  out.memory = memory_of(d, s, lo, s.context);
  std::vector<double> ns;
  for (double n = 1; n < lo * 2 && n <= 4096; n *= 2) ns.push_back(n);
  if (std::find(ns.begin(), ns.end(), lo) == ns.end()) ns.push_back(lo);
  std::sort(ns.begin(), ns.end());
  for (double n : ns) {
    const closed_loop_result loop = n == lo ? out.loop : serve_closed_loop(d, s, n);
    out.curve.push_back({n, d.decode(n, s.context), memory_of(d, s, n, s.context).fits, loop, loop.output_tokens_per_s(s.output)});
  }
  return out;
}

/// Power, energy per output token and cost of the most users `u` of
/// workload `w`: their decode step at its context, at the closed loop's
/// output tokens/s (none when not one user qualifies), and per input token
/// of its prompt (with_prefill_energy, cache hits blended in). Throws
/// std::invalid_argument for an invalid price.
inline energy_cost users_energy(const deployment& d, const users_result& u, const workload& w, const price& p = {}) {
  if (!(u.users >= 1)) return energy_and_cost(d, phase_timing{}, 0, p);
  // The step that runs (a speculative deployment's verify) sets the power:
  // each replica's, its share of the users.
  const double each = std::ceil(u.users / d.replicas());
  energy_cost e = energy_and_cost(d, power_step(d.instance(), each, w.context), u.tokens_per_s_total(), p);
  e.basis = "closed loop";
  const double prompt = w.prompt_tokens();
  const std::optional<phase_timing> hit =
      u.prefix.hit > 0 ? std::optional<phase_timing>(prefill_on_hit(d, w, u.prefix)) : std::nullopt;
  return with_prefill_energy(e, d, prompt, d.prefill(prompt), hit ? &*hit : nullptr, u.prefix.hit, p);
}

}  // namespace llmroof
