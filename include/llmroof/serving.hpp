// Serving plans: N users on a device, what each of them sees — time to first
// token, tokens/s per user and in total, against context — and whether the
// KV cache holds them.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "llmroof/deployment.hpp"
#include "llmroof/detail/search.hpp"
#include "llmroof/metric.hpp"

namespace llmroof {

/// What a deployment serves: N users, each with a prompt, an answer and a
/// context budget. Holds nothing the deployment holds.
struct workload {
  double users = 1;        ///< concurrent sequences
  double context = 4096;   ///< tokens each user may hold (prompt + answer)
  double prompt = 0;       ///< prompt tokens of a new request; 0 = min(context, 2048)
  double output = 512;     ///< tokens generated per request (load model)

  /// The prompt a new request brings: `prompt`, or min(context, 2048) and at
  /// least one token when unset. The one place that default is decided.
  [[nodiscard]] double prompt_tokens() const { return prompt > 0 ? prompt : std::max(1.0, std::min(context, 2048.0)); }
};

/// One point of the decode curve: every user at `context` cached tokens.
struct curve_point {
  double context = 0;
  bool fits = false;                 ///< all users at this context fit in memory
  phase_timing single;               ///< one user alone
  phase_timing all;                  ///< all users decoding together
  /// One user's tokens/s under the profile one standard error slower and one
  /// faster, never narrower than band_width(metric::decode_tps_per_seq).
  band single_band;
  [[nodiscard]] tokens_per_second per_user_estimate() const {
    return make_tokens(1) / all.estimate;
  }
  [[nodiscard]] tokens_per_second per_user_bound() const { return make_tokens(1) / all.bound; }
  [[nodiscard]] tokens_per_second total_estimate() const { return all.tokens_per_s_estimate(); }
};

/// One change that could make a plan fit, with its fit and speed.
struct alternative {
  std::string change;  ///< "KV cache in fp8-e4m3", "2 devices (TP 2)", "fewer users", "shorter context"
  bool fits = false;
  double users = 0;
  double context = 0;
  int devices = 1;
  std::string kv;      ///< KV format name
  double max_users_at_context = 0;
  phase_timing step;   ///< all `users` decoding at `context`
  [[nodiscard]] double per_user_tokens_per_s() const { return 1.0 / step.estimate.value(); }
  [[nodiscard]] double total_tokens_per_s() const { return users / step.estimate.value(); }
};

struct plan_result {
  memory_plan memory;
  phase_timing ttft;                  ///< prefill of the prompt, one user, empty cache
  std::vector<curve_point> curve;     ///< from an empty context to workload.context
  double prompt = 0;
  /// When the plan does not fit: each change alone (a smaller KV format the
  /// engine supports, 2 and 4 times the devices, fewer users, a shorter
  /// context); empty when it fits.
  std::vector<alternative> alternatives;
};

/// Contexts of the decode curve: 0, then powers of two from 1024, then `context`.
inline std::vector<double> curve_contexts(double context) {
  std::vector<double> cs{0};
  for (double c = 1024; c < context; c *= 2) cs.push_back(c);
  if (context > 0) cs.push_back(context);
  return cs;
}

/// Throws std::invalid_argument naming the field: users a whole number in
/// [1, 1e9], context in [1, 1e9] tokens, prompt a whole number in [0, 1e9]
/// (0: the default), output in [1, 1e9].
inline void validate(const workload& w) {
  detail::require_whole("users", w.users);
  detail::require_in("users", w.users, 1, 1e9);
  detail::require_tokens("context", w.context);
  if (w.context < 1) detail::fail("context", ">= 1 token", w.context);
  detail::require_tokens("prompt", w.prompt);
  detail::require_whole("prompt", w.prompt);
  detail::require_in("output", w.output, 1, 1e9);
}

/// What would make workload `w` fit deployment `d`, each change alone (see
/// plan_result::alternatives); `now` is the workload's own memory plan.
inline std::vector<alternative> plan_alternatives(const deployment& d, const workload& w, const memory_plan& now) {
  std::vector<alternative> out;
  const auto entry = [&](std::string change, const deployment& x, double users, double context) {
    const memory_plan m = x.memory(users, context);
    out.push_back({std::move(change), m.fits, users, context, x.devices(), std::string(x.pr.kv.name), m.max_sequences,
                   x.decode(users, context)});
  };
  for (const char* kv : {"fp8-e4m3", "q8_0", "q4_0"}) {
    if (find_format(kv).bits >= d.pr.kv.bits || !kv_format_supported(d.engine.name, find_format(kv))) continue;
    deployment x = d;
    x.pr.kv = find_format(kv);
    entry(std::string("KV cache in ") + kv, x, w.users, w.context);
  }
  for (int more : {2, 4}) {
    parallel_plan q = d.parallel();
    if (q.ep > 1) {
      q.ep *= more;
      if (q.ep > d.model.moe.num_experts) continue;
    } else {
      q.tp *= more;
    }
    q.devices_per_node = std::max(q.devices_per_node, q.devices());
    // More devices drop an offload (it needs a single device): the devices
    // hold all the weights. The other changes keep it.
    const deployment x(d.model, d.pr, d.roof(), {q, std::nullopt}, d.engine, d.stored);
    entry(std::to_string(q.devices()) + " devices (" + (q.ep > 1 ? "EP " + std::to_string(q.ep) : "TP " + std::to_string(q.tp)) + ")",
          x, w.users, w.context);
  }
  if (now.weights_fit && now.max_sequences >= 1) entry("fewer users", d, std::min(w.users, now.max_sequences), w.context);
  if (now.weights_fit && now.max_context >= 1) entry("shorter context", d, w.users, std::min(w.context, now.max_context));
  return out;
}

/// Throws std::invalid_argument on invalid workload fields (see validate).
inline plan_result plan(const deployment& d, const workload& w) {
  validate(w);
  plan_result out;
  out.memory = d.memory(w.users, w.context);
  out.prompt = w.prompt_tokens();
  out.ttft = d.prefill(out.prompt);
  const deployment lo = d.with_efficiency(slower(d.efficiency()));
  const deployment hi = d.with_efficiency(faster(d.efficiency()));
  const double width = band_width(metric::decode_tps_per_seq);
  for (double c : curve_contexts(w.context)) {
    curve_point pt;
    pt.context = c;
    pt.fits = d.memory(w.users, c).fits;
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

// ---- load: arrivals, queueing, capacity ---------------------------------------

/// Steady state of a server under Poisson arrivals of `rate` requests/s, each
/// with workload.prompt prompt tokens and workload.output generated tokens.
struct load_result {
  double rate = 0;             ///< requests/s offered
  bool stable = false;         ///< the server keeps up (utilisation < 1, memory holds)
  bool keeps_up = false;       ///< the queue is bounded, memory aside
  double users = 0;            ///< mean concurrent sequences (Little's law)
  double prefill_share = 0;    ///< share of device time spent in prefill
  seconds prefill = make_seconds(0);     ///< one prompt's prefill, alone
  seconds ttft_wait = make_seconds(0);   ///< mean queueing before the prefill starts
  seconds ttft = make_seconds(0);        ///< wait + prefill stretched by running decodes
  seconds tpot = make_seconds(0);        ///< time per output token while N users decode
  [[nodiscard]] tokens_per_second tokens_per_s_per_user() const { return make_tokens(1) / tpot; }
  [[nodiscard]] tokens_per_second tokens_per_s_total() const { return make_tokens(users) / tpot; }
};

/// First-order serving model, documented in README "Load":
///  * Decode: N sequences at the mean context (prompt + output/2) share each
///    step, TPOT(N) = decode step time.
///  * Prefill of a request takes S = prefill(prompt), in k = ceil(prompt /
///    max_batched_tokens) chunks. Engines batch each chunk with the running
///    decodes (chunked prefill): a mixed step lasts m = max(S / k, step) and
///    advances every decode too, so with c = interfering x rate x k mixed
///    steps per second TPOT = 1 / (c + (1 - c m) / step), between step (no
///    prefills) and step / (1 - rho) (prefill-first). rho = interfering x
///    rate x S is the device share of the prefills that arrive while a request
///    decodes, and the prefill queue is M/D/1: W = rho S / (2 (1 - rho))
///    (Pollaczek-Khinchine, deterministic service).
///  * A new request first waits for the step the engine is running to end
///    (half a step on average while anyone else decodes: engines admit
///    requests between steps), and pays the engine's per-request handling.
///  * A prefill runs beside the batch's decodes: its chunks also carry the
///    running decode tokens, TTFT = per_request + W + step/2 + S + (chunks) x
///    TPOT(N) x decode share.
///  * Little's law closes the loop: N = rate x (TTFT + output x TPOT(N)),
///    solved by fixed-point iteration. Unstable when rate x S >= 1, when the
///    iteration diverges (each added user slows every step enough to add
///    more than one user), or when N users do not fit in memory.
/// `interfering` in [0, 1] is the share of the arrivals a request meets:
/// 1 for open-loop (Poisson) arrivals; in a closed loop of N users a request
/// meets the other N - 1 (the arrival theorem), (N - 1) / N, and never its own
/// prefill: one user alone sees TTFT = per_request + S, TPOT = step(1).
inline load_result serve_at_rate(const deployment& d, const workload& s, double rate, double interfering = 1) {
  validate(s);
  detail::require_non_negative("rate", rate);
  detail::require_in("interfering", interfering, 0, 1);
  const double prompt = s.prompt_tokens();
  const double mean_context = prompt + s.output / 2;
  const double handling = d.efficiency().per_request.value();
  load_result out;
  out.rate = rate;
  out.prefill = d.prefill(prompt).estimate;
  const double S = out.prefill.value();
  out.prefill_share = rate * S;
  const double rho = interfering * out.prefill_share;
  const double chunks = std::ceil(prompt / d.engine.max_batched_tokens);
  double n = std::max(
      1.0, rate * (handling + S + s.output * d.decode(1, mean_context).estimate.value()));
  bool ok = out.prefill_share < 1;
  bool converged = false;
  double tpot = 0, ttft = 0, wait = 0;
  // Users implied by n users decoding (Little's law), with TTFT and TPOT.
  const auto implied = [&](double users) {
    const double step = d.decode(std::max(1.0, users), mean_context).estimate.value();
    const double others = interfering * users;  // requests a new one finds decoding
    // Chunked prefill: the others' chunks ride in mixed steps that also
    // advance every decode (one weight read for both), each lasting its
    // chunk's prefill or at least a decode step; pure decode steps fill the
    // rest of the time. TPOT is the mean step: 1 / (steps per second).
    const double mixed_per_s = interfering * rate * chunks;
    const double mixed = std::max(S / chunks, step);
    tpot = 1 / (mixed_per_s + (1 - mixed_per_s * mixed) / step);
    wait = rho * S / (2 * (1 - rho)) + 0.5 * step * std::min(1.0, others);
    ttft = handling + wait + S + chunks * step * std::min(1.0, others / std::max(1.0, d.engine.max_batched_tokens));
    return std::max(1.0, rate * (ttft + s.output * tpot));
  };
  // The damped iteration n <- (n + implied(n)) / 2 rises from below to the
  // smallest fixed point when one exists (and runs away when none does).
  // Every two steps the last three iterates are extrapolated (Aitken) 0.9 of
  // the way toward the limit their shrinking steps point at, at most 4 steps'
  // length, and the jump is kept only where implied() is still above it, as
  // it is below the smallest fixed point: short, checked jumps do not leap
  // past it (past the unstable fixed point beyond it the load would run away),
  // so the iteration reaches the same limit in ~2.7x fewer steps (README,
  // Performance: the comparison with the plain iteration).
  double before = n, last = n;
  bool known = false;  // `there` holds implied(n): an accepted extrapolation computed it
  double there = 0;
  bool fresh = false;  // before, last and this step's damped are three plain iterates
  for (int it = 0; it < 500 && ok; ++it) {
    const double next = known ? there : implied(n);
    known = false;
    if (next > 1e7) break;  // the batch grows without bound: unstable
    if (std::fabs(next - n) <= 1e-6 * n) {
      n = next;
      converged = true;
      break;
    }
    const double damped = 0.5 * n + 0.5 * next;
    const double d1 = last - before, d2 = damped - last;
    if (fresh && d2 > 0 && d1 > d2) {
      const double jump = std::min(-0.9 * d2 * d2 / (d2 - d1), 4 * d2);
      const double ahead = damped + jump;
      there = implied(ahead);
      if (there > ahead) {  // still below the smallest fixed point
        before = last;
        last = n = ahead;
        known = true;
        fresh = false;
        continue;
      }
    }
    fresh = true;
    before = last;
    last = n = damped;
  }
  out.users = n;
  out.tpot = make_seconds(tpot);
  out.ttft_wait = make_seconds(wait);
  out.ttft = make_seconds(ttft);
  const bool fits = converged && d.memory(std::ceil(n), prompt + s.output).fits;
  out.keeps_up = ok && converged;
  out.stable = out.keeps_up && fits;
  return out;
}

/// Highest arrival rate (requests/s) that stays stable with a mean TTFT at or
/// under `ttft_target` (0 = no TTFT target). Bisection over the rate.
inline double max_rate(const deployment& d, const workload& s, seconds ttft_target = make_seconds(0)) {
  detail::require_non_negative("ttft_target", ttft_target.value());
  const auto ok = [&](double rate) {
    const load_result l = serve_at_rate(d, s, rate);
    return l.stable && (ttft_target.value() <= 0 || l.ttft <= ttft_target);
  };
  if (!ok(1e-9)) return 0;
  return detail::last_true(ok, 0, 1, 1e7, false);
}

/// Steady state of N closed-loop users: each sends its next request (workload
/// prompt and output) as soon as the previous answer is complete, as `vllm bench
/// serve --max-concurrency N`, sglang.bench_serving and AIPerf do.
struct closed_loop_result {
  double concurrency = 0;        ///< N users
  double active = 0;             ///< requests inside the engine (the rest wait for a slot)
  double slots = 0;              ///< most requests the engine holds: KV for prompt + output, max_num_seqs
  load_result load;              ///< the engine at the request rate that keeps `active` inside
  seconds queue_wait = make_seconds(0);  ///< wait for a slot before the request is admitted
  seconds ttft = make_seconds(0);        ///< queue wait + the engine's TTFT
  seconds tpot = make_seconds(0);
  double requests_per_s = 0;
  std::string limit;             ///< "none", "memory" (KV slots), "max_num_seqs", "compute" (the engine saturates)
  [[nodiscard]] double output_tokens_per_s(double output) const { return requests_per_s * output; }
  [[nodiscard]] tokens_per_second tokens_per_s_per_user() const { return make_tokens(1) / tpot; }
};

/// Most requests of the workload's shape (prompt + output tokens each) the
/// engine holds at once, and what caps them: "memory" (the KV cache) or
/// "max_num_seqs". The one place that decision is made.
struct engine_slots {
  double slots = 0;
  std::string limit;
};

inline engine_slots slots_for(const deployment& d, const workload& s) {
  const memory_plan m = d.memory(1, s.prompt_tokens() + s.output);
  return {std::min(m.max_sequences, d.engine.max_sequences),
          m.max_sequences <= d.engine.max_sequences ? "memory" : "max_num_seqs"};
}

/// The rate λ that holds `active` requests in the engine solves Little's law
/// active = λ (TTFT(λ) + output x TPOT(λ)) of the open-loop model
/// (serve_at_rate, whose users grow with λ): bisection on λ. Requests beyond the
/// engine's slots wait; by Little's law again their wait is (N - active) / λ.
/// When even the rate at which the engine saturates holds fewer than `active`,
/// it runs at that rate and the rest queue ("compute").
/// Throws std::invalid_argument on invalid workload fields or unless concurrency
/// is a whole number in [1, 1e6].
inline closed_loop_result serve_closed_loop(const deployment& d, const workload& s, double concurrency) {
  validate(s);
  detail::require_whole("concurrency", concurrency);
  detail::require_in("concurrency", concurrency, 1, 1e6);
  closed_loop_result out;
  out.concurrency = concurrency;
  const engine_slots held_at_once = slots_for(d, s);
  out.slots = held_at_once.slots;
  if (out.slots < 1) {
    out.limit = "memory";
    return out;  // not one request fits: nothing is served
  }
  out.active = std::min(concurrency, out.slots);
  out.limit = concurrency <= out.slots ? "none" : held_at_once.limit;
  if (out.active == 1) {
    // One user alone meets nobody (interfering 0): its rate is one request
    // per its own TTFT + output x TPOT, at which it is the one user inside.
    const load_result alone = serve_at_rate(d, s, 0, 0);
    out.requests_per_s = 1 / (alone.ttft + s.output * alone.tpot).value();
    out.load = serve_at_rate(d, s, out.requests_per_s, 0);
    out.ttft = out.load.ttft;
    out.tpot = out.load.tpot;
    return out;
  }
  // A request meets the other active - 1, never its own prefill (the arrival theorem).
  const double interfering = (out.active - 1) / out.active;
  // Requests in the engine at a rate, by Little's law on the open-loop times
  // (not floored at one user as the open-loop report is).
  const auto held = [&](double rate) {
    const load_result l = serve_at_rate(d, s, rate, interfering);
    return l.keeps_up ? rate * (l.ttft.value() + s.output * l.tpot.value()) : std::numeric_limits<double>::infinity();
  };
  // The highest rate that holds fewer than `active`: the engine holds them there
  // or stops keeping up just above it.
  double rate = detail::last_true([&](double x) { return held(x) < out.active; }, 0, 1e-3, 1e9, false, 80);
  load_result l = serve_at_rate(d, s, rate, interfering);
  const double inside = rate * (l.ttft.value() + s.output * l.tpot.value());
  if (inside < out.active * (1 - 1e-3)) {
    // The engine saturates before it holds `active`: it serves at that rate and the rest wait.
    out.active = inside;
    out.limit = "compute";
  }
  out.load = l;
  out.requests_per_s = rate;
  out.queue_wait = make_seconds(rate > 0 ? (concurrency - out.active) / rate : 0.0);
  out.ttft = l.ttft + out.queue_wait;
  out.tpot = l.tpot;
  return out;
}

/// The closed loop a plan reports: `concurrency` when given; else, when no
/// open-loop rate is asked for, the plan's users when there are 2 to 1e6 of
/// them (the seed's "four users on one card" are four users in a loop).
inline std::optional<double> loop_concurrency(const workload& s, std::optional<double> concurrency, bool rate_given) {
  if (concurrency || rate_given) return concurrency;
  if (s.users > 1 && s.users <= 1e6) return s.users;
  return std::nullopt;
}

/// The most a deployment serves of one request shape (workload prompt and
/// output) and what stops it serving more.
struct saturation_result {
  double requests_per_s = 0;       ///< highest sustained request rate
  double output_tokens_per_s = 0;  ///< requests_per_s x output
  double users = 0;                ///< requests in the engine at that rate
  closed_loop_result at;           ///< the closed loop that reaches it
  /// What binds: "kv_cache" (the KV slots fill first), "max_num_seqs", or the
  /// roof of the engine's time once it saturates below its slots: "compute",
  /// "bandwidth", "scheduler" (per-step and launch overheads), "link"
  /// (collectives), "prefill" (prompts take most of the device).
  std::string limit;
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
    out.limit = "kv_cache";
    return out;
  }
  out.at = serve_closed_loop(d, s, slots);
  out.requests_per_s = out.at.requests_per_s;
  out.output_tokens_per_s = out.at.output_tokens_per_s(s.output);
  out.users = out.at.active;
  if (out.at.limit != "compute") {
    out.limit = held_at_once.limit == "memory" ? "kv_cache" : held_at_once.limit;
    return out;
  }
  if (out.at.load.prefill_share >= 0.5) {
    out.limit = "prefill";
    return out;
  }
  const phase_timing step = d.decode(std::max(1.0, out.users), s.prompt_tokens() + s.output / 2);
  switch (step.limit()) {
    case bottleneck::memory: out.limit = "bandwidth"; break;
    case bottleneck::compute: out.limit = "compute"; break;
    case bottleneck::overhead: out.limit = "scheduler"; break;
    case bottleneck::link: out.limit = "link"; break;
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

/// The most concurrent users (all at `context` cached tokens) such that each
/// gets at least `min_tokens_per_s`, a new arrival's TTFT (prefill of
/// workload.prompt beside the running decodes) stays at or under
/// `ttft_target` (0 = none), and everything fits in memory.
struct users_result {
  double users = 0;                        ///< 0 when not even one user meets the targets
  phase_timing step;                       ///< decode step at that many users
  seconds ttft = make_seconds(0);
  memory_plan memory;
  std::string limit;                       ///< what stops one more user: "tokens/s", "ttft", "memory"
  /// Those users in a closed loop, each sending workload prompt + output
  /// tokens when the last answer completes (concurrency 0 when users is 0).
  closed_loop_result loop;
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
  const auto check = [&](double n, std::string* why) {
    const phase_timing step = d.decode(n, s.context);
    if (1.0 / step.estimate.value() < min_tokens_per_s.value()) {
      if (why) *why = "tokens/s";
      return false;
    }
    const seconds ttft = arrival_ttft(n, step);
    if (ttft_target.value() > 0 && ttft > ttft_target) {
      if (why) *why = "ttft";
      return false;
    }
    if (!d.memory(n, s.context).fits) {
      if (why) *why = "memory";
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
  return out;
}

}  // namespace llmroof
