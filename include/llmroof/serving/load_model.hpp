// Load: a deployment under Poisson arrivals (open loop) or N users who send
// their next request when the last answer completes (closed loop): queueing,
// chunked-prefill interference, the engine's slots, Little's law.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <stdexcept>
#include <utility>
#include <vector>

#include "llmroof/deployment.hpp"
#include "llmroof/serving/detail/lockstep.hpp"
#include "llmroof/detail/search.hpp"
#include "llmroof/serving/prefix_cache.hpp"
#include "llmroof/serving/serving_limit.hpp"
#include "llmroof/serving/speculative_step.hpp"
#include "llmroof/serving/workload.hpp"

namespace llmroof {

/// Steady state of a server under Poisson arrivals of `rate` requests/s, each
/// with workload.prompt prompt tokens and workload.output generated tokens.
struct load_result {
  double rate = 0;             ///< requests/s offered
  bool stable = false;         ///< the server keeps up (utilisation < 1, memory holds)
  bool keeps_up = false;       ///< the queue is bounded, memory aside
  /// Mean requests in the server, rate x (TTFT + (output - 1) x TPOT) by Little's
  /// law: below one at light load (0.01 requests/s holds 0.01 x 3.7 s), 0 idle.
  double users = 0;
  /// Mean sequences decoding: rate x (output - 1) x TPOT (the rest wait for their
  /// first token), at most `users`.
  double decoding = 0;
  double prefill_share = 0;    ///< share of device time spent in prefill
  seconds prefill = make_seconds(0);     ///< one prompt's prefill, alone (the mean over prefix-cache hits and misses)
  seconds ttft_wait = make_seconds(0);   ///< mean queueing before the prefill starts
  seconds ttft = make_seconds(0);        ///< wait + prefill stretched by running decodes
  seconds tpot = make_seconds(0);        ///< time per output token while N users decode
  [[nodiscard]] tokens_per_second tokens_per_s_per_user() const {
    return tpot.value() > 0 ? make_tokens(1) / tpot : make_tokens(0) / make_seconds(1);
  }
  /// Output tokens/s of the server: the decoding sequences' steps and each
  /// request's first token from its prefill, which is rate x output once it
  /// keeps up (never more: no more tokens are asked).
  [[nodiscard]] tokens_per_second tokens_per_s_total() const {
    return tpot.value() > 0 ? make_tokens(decoding + rate * tpot.value()) / tpot : make_tokens(0) / make_seconds(1);
  }
};

namespace detail {

/// Whether a turn finds its conversation's earlier turns cached
/// (workload::history): under a prefix cache of shared blocks (vLLM, SGLang,
/// TensorRT-LLM) always; under llama.cpp's per-slot prompt cache when every
/// user has a slot of its own (llama-server picks the slot whose last prompt
/// matches), not when users take turns in fewer slots.
inline bool keeps_history(const deployment& d, const llmroof::workload& s) {
  return d.engine.prefix_caching &&
         (engine_row_of(d.engine.id).shares_prefix_blocks || s.users <= d.engine.max_sequences);
}

/// What serve_at_rate computes of a workload on a deployment before any
/// rate: the prompt's mean prefill S over cache hits and misses, E[S^2],
/// its chunks of max_num_batched_tokens, the per-request handling;
/// and, at a rate, the times a request sees with `users` in the server
/// decoding steps of `step` s. The one place those formulas are written
/// (serve_at_rate's fixed point, the closed loop's direct solve, and the
/// prefill pool of pd_split).
struct open_loop {
  double prompt = 0;
  double mean_context = 0;  ///< history + prompt + output / 2: where the decodes run
  double handling = 0;      ///< the engine's per-request time, s
  double S = 0;             ///< mean prefill, s
  double S_compute = 0;     ///< of S, the time its compute-limited ops take
  double S2 = 0;            ///< E[S^2], s^2
  double residual = 0;      ///< E[S^2] / E[S], s
  double chunks = 0;        ///< mean prefill chunks per request
  double mbt = 0;           ///< max_num_batched_tokens
  double alone = 0;         ///< s per output token of one sequence decoding at mean_context (step_of)

  open_loop(const deployment& d, const llmroof::workload& s)
      : prompt(s.prompt_tokens()), mean_context(s.mean_decode_context()), handling(d.efficiency().per_request.value()),
        mbt(d.engine.max_batched_tokens) {
    alone = step_of(d, 1, mean_context).per_token();
    if (const double past = s.history(); past > 0) {
      // A turn of a longer conversation (workload::history): its history is
      // in the engine's prefix cache, its prompt prefilled over it; without
      // a cache the whole conversation is prefilled again. The shared prefix
      // lies inside the history.
      const bool kept = keeps_history(d, s);
      const phase_timing turn = kept ? d.prefill(prompt, past) : d.prefill(past + prompt);
      S = turn.estimate.value();
      S_compute = turn.compute_time.value();
      S2 = S * S;
      residual = S;
      chunks = std::ceil((kept ? prompt : past + prompt) / mbt);
      return;
    }
    const prefix_reuse reuse = reuse_of(d, s);
    const phase_timing on_miss = d.prefill(prompt);
    const phase_timing on_hit = reuse.hit > 0 ? prefill_on_hit(d, s, reuse) : on_miss;
    const double miss = on_miss.estimate.value(), hit = on_hit.estimate.value();
    const double h = reuse.hit;
    S = h * hit + (1 - h) * miss;
    S_compute = h * on_hit.compute_time.value() + (1 - h) * on_miss.compute_time.value();
    S2 = h * hit * hit + (1 - h) * miss * miss;
    residual = h > 0 ? S2 / S : S;
    chunks = h * std::ceil((prompt - reuse.cached) / mbt) + (1 - h) * std::ceil(prompt / mbt);
  }

  struct times {
    double tpot = 0;
    double wait = 0;  ///< before the prefill starts
    double ttft = 0;
  };
  /// At `rate` requests/s, a share `interfering` of them met, `users` in the
  /// server decoding in steps `st` (step_of: st.tokens per sequence each).
  [[nodiscard]] times at(double rate, double interfering, double users, const token_step& st) const {
    const double step = st.seconds;
    const double rho = interfering * (rate * S);
    const double others = interfering * users;  // requests a new one finds (below one: the chance it finds one)
    // Chunked prefill: the others' chunks ride in mixed steps that also
    // advance every decode (one weight read for both), each lasting its
    // chunk's prefill or at least a decode step, or both's compute added
    // (mixed_step_seconds); pure decode steps fill the rest of the time.
    // TPOT is the mean step over the tokens it keeps: 1 / (tokens x steps
    // per second).
    const double mixed_per_s = interfering * rate * chunks;
    const double mixed = mixed_step_seconds(st, S / chunks, S_compute / chunks);
    times t;
    t.tpot = 1 / (st.tokens * (mixed_per_s + (1 - mixed_per_s * mixed) / step));
    t.wait = rho * residual / (2 * (1 - rho)) + 0.5 * step * std::min(1.0, others);
    t.ttft = handling + t.wait + S + chunks * step * std::min(1.0, others / std::max(1.0, mbt));
    return t;
  }
};

// serve_at_rate of `d` and `s` at their open loop's `terms` (rate-free: a
// search over rates computes them once); `memory` false skips the memory
// check (stable = keeps_up), for searches that only ask whether the engine
// keeps up (serve_closed_loop). `enough`: stop once the users reach it
// (the iterates are below the smallest fixed point, so it holds at least
// that many: a search asking "fewer than N?" needs no more); the figures
// are then those of the last iterate.
inline load_result serve_at_rate(const deployment& d, const llmroof::workload& s, const open_loop& terms, double rate,
                                 double interfering, bool memory,
                                 double enough = std::numeric_limits<double>::infinity()) {
  detail::require_non_negative("rate", rate);
  detail::require_in("interfering", interfering, 0, 1);
  load_result out;
  out.rate = rate;
  out.prefill = make_seconds(terms.S);
  out.prefill_share = rate * terms.S;
  // Requests in the server, fractional at light load (a step still runs at
  // least one sequence): Little's law from one sequence's times.
  double n = rate * (terms.handling + terms.S + s.decode_steps() * terms.alone);
  bool ok = out.prefill_share < 1;
  bool converged = false;
  double tpot = 0, ttft = 0, wait = 0;
  // Users implied by n users decoding (Little's law), with TTFT and TPOT.
  const auto implied = [&](double users) {
    const open_loop::times t =
        terms.at(rate, interfering, users, step_of(d, std::max(1.0, users), terms.mean_context));
    tpot = t.tpot;
    wait = t.wait;
    ttft = t.ttft;
    return rate * (ttft + s.decode_steps() * tpot);
  };
  // The iteration n <- implied(n) rises from below to the smallest fixed
  // point when one exists (and runs away when none does): implied() rises
  // with n wherever the step does, so no iterate passes a fixed point n*
  // (implied(x) <= implied(n*) = n* for x <= n*), even where the step jumps
  // up with the batch (a kernel switch at a batch size, a rank's sequences
  // rounding up), which the damped iteration's extrapolated jumps it
  // replaced could leap (README, Performance: the two compared). The one
  // step that falls as the batch grows, MLX's quantized mat-vec on M1/M2
  // below its row limit (qmv_rows_below: the weights re-read per row until
  // qmm takes over), is not covered: there the iteration settles at the
  // limit, as the damped one did.
  for (int it = 0; it < 2000 && ok; ++it) {
    const double next = implied(n);
    if (next > 1e7) break;  // the batch grows without bound: unstable
    if (std::fabs(next - n) <= 1e-6 * n || next >= enough) {
      n = next;
      converged = true;
      break;
    }
    n = next;
  }
  out.users = n;
  out.decoding = std::min(out.users, rate * s.decode_steps() * tpot);
  out.tpot = make_seconds(tpot);
  out.ttft_wait = make_seconds(wait);
  out.ttft = make_seconds(ttft);
  const bool fits =
      converged && (!memory || memory_of(d, s, std::max(1.0, std::ceil(n)), s.request_end()).fits);
  out.keeps_up = ok && converged;
  out.stable = out.keeps_up && fits;
  return out;
}

// The open loop at `rate` holding `users` (a fixed point the caller found),
// decoding in steps `st`: serve_at_rate's figures there, memory unchecked.
inline load_result load_at(const llmroof::workload& s, const open_loop& terms, double rate, double interfering,
                           double users, const token_step& st) {
  const open_loop::times t = terms.at(rate, interfering, users, st);
  load_result out;
  out.rate = rate;
  out.prefill = make_seconds(terms.S);
  out.prefill_share = rate * terms.S;
  out.users = users;
  out.decoding = std::min(users, rate * s.decode_steps() * t.tpot);
  out.tpot = make_seconds(t.tpot);
  out.ttft_wait = make_seconds(t.wait);
  out.ttft = make_seconds(t.ttft);
  out.keeps_up = out.stable = true;
  return out;
}

inline load_result serve_at_rate(const deployment& d, const llmroof::workload& s, double rate, double interfering,
                                 bool memory) {
  validate(s);
  return serve_at_rate(d, s, open_loop(d, s), rate, interfering, memory);
}

}  // namespace detail

/// First-order serving model, documented in README "Load":
///  * Decode: N sequences at the mean context (prompt + output/2) share each
///    step, TPOT(N) = the step over the tokens it keeps (step_of: one
///    without speculation, draft + verify over the accepted ones with).
///  * Prefill of a request takes S = prefill(prompt), in k = ceil(prompt /
///    max_batched_tokens) chunks. Engines batch each chunk with the running
///    decodes (chunked prefill): a mixed step lasts m = max(S / k, step), or
///    the two's compute-limited times added when longer (mixed_step_seconds;
///    a speculative step's drafts before the max), and
///    advances every decode too, so with c = interfering x rate x k mixed
///    steps per second TPOT = 1 / (c + (1 - c m) / step), between step (no
///    prefills) and step / (1 - rho) (prefill-first). rho = interfering x
///    rate x S is the device share of the prefills that arrive while a request
///    decodes, and the prefill queue is M/D/1: W = rho S / (2 (1 - rho))
///    (Pollaczek-Khinchine, deterministic service). With a shared prefix a
///    share h of the prompts are cache hits prefilling only their uncached
///    tokens (S_hit) and the rest full ones (S_miss): S and the chunks are
///    the means, and the queue is M/G/1, W = interfering x rate x E[S^2] /
///    (2 (1 - rho)).
///  * A new request first waits for the step the engine is running to end
///    (half a step on average while anyone else decodes: engines admit
///    requests between steps), and pays the engine's per-request handling.
///  * A prefill runs beside the batch's decodes: its chunks also carry the
///    running decode tokens, TTFT = per_request + W + step/2 + S + (chunks) x
///    TPOT(N) x decode share.
///  * Little's law closes the loop: N = rate x (TTFT + (output - 1) x TPOT(N)),
///    solved by fixed-point iteration. Unstable when rate x S >= 1, when the
///    iteration diverges (each added user slows every step enough to add
///    more than one user), or when N users do not fit in memory.
/// `interfering` in [0, 1] is the share of the arrivals a request meets:
/// 1 for open-loop (Poisson) arrivals; in a closed loop of N users a request
/// meets the other N - 1 (the arrival theorem), (N - 1) / N, and never its own
/// prefill: one user alone sees TTFT = per_request + S, TPOT = step(1).
inline load_result serve_at_rate(const deployment& d, const workload& s, double rate, double interfering = 1) {
  return detail::serve_at_rate(d, s, rate, interfering, true);
}

/// Highest arrival rate (requests/s) that stays stable with a mean TTFT at or
/// under `ttft_target` (0 = no TTFT target). Bisection over the rate.
inline double max_rate(const deployment& d, const workload& s, seconds ttft_target = make_seconds(0)) {
  detail::require_non_negative("ttft_target", ttft_target.value());
  validate(s);
  const detail::open_loop terms(d, s);
  const auto ok = [&](double rate) {
    const load_result l = detail::serve_at_rate(d, s, terms, rate, 1, true);
    return l.stable && (ttft_target.value() <= 0 || l.ttft <= ttft_target);
  };
  if (!ok(1e-9)) return 0;
  return detail::last_true(ok, 0, 1, 1e7, false, detail::rate_halvings);
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
  serving_limit limit = serving_limit::none;  ///< none, kv_cache (its slots), max_num_seqs, compute (it saturates)
  arrival_pattern arrivals = arrival_pattern::mixed;  ///< the workload's: which model gave these figures
  /// Lockstep only: the mean TTFT of the first `active` requests, all sent at
  /// once (the cold start a short benchmark averages in); 0 when mixed.
  seconds first_wave_ttft = make_seconds(0);
  /// Output tokens each decode step keeps per sequence: accepted_tokens when
  /// the deployment decodes speculatively, else 1.
  double tokens_per_step = 1;
  [[nodiscard]] double output_tokens_per_s(double output) const { return requests_per_s * output; }
  /// 0 when nothing is served (not one request fits).
  [[nodiscard]] tokens_per_second tokens_per_s_per_user() const {
    return tpot.value() > 0 ? make_tokens(1) / tpot : make_tokens(0) / make_seconds(1);
  }
};

/// Most requests of the workload's shape (prompt + output tokens each) the
/// engine holds at once, and what caps them: the KV cache or max_num_seqs.
/// The one place that decision is made.
struct engine_slots {
  double slots = 0;
  serving_limit limit = serving_limit::kv_cache;
};

inline engine_slots slots_for(const deployment& d, const workload& s) {
  const memory_plan m = memory_of(d, s, 1, s.request_end());
  return {std::min(m.max_sequences, d.engine.max_sequences),
          m.max_sequences <= d.engine.max_sequences ? serving_limit::kv_cache : serving_limit::max_num_seqs};
}

/// The rate λ that holds `active` requests in the engine solves Little's law
/// active = λ (TTFT(λ) + (output - 1) x TPOT(λ)) of the open-loop model
/// (serve_at_rate, whose users grow with λ): bisection on λ. Requests beyond the
/// engine's slots wait; by Little's law again their wait is (N - active) / λ.
/// When even the rate at which the engine saturates holds fewer than `active`,
/// it runs at that rate and the rest queue (serving_limit::compute).
/// Throws std::invalid_argument on invalid workload fields or unless concurrency
/// is a whole number in [1, 1e6].
namespace detail {

// The rate at which `active` requests are in the engine, solved directly:
// at that rate the open loop's fixed point is n = active, so its decode step
// is step(active) and only the rate-dependent terms of serve_at_rate's
// implied() remain (closed forms: the prefill queue, the mixed steps), and
// rate x (TTFT + (output - 1) x TPOT) = active is bisected to `tolerance` without
// a decode step per trial. None when no rate reaches it, or when the open
// loop at the rate found does not settle at `active` (another fixed point
// lies below it): the caller searches as serve_closed_loop does.
inline std::optional<std::pair<double, load_result>> closed_loop_rate(const deployment& d, const llmroof::workload& s,
                                                                      const open_loop& terms, double active,
                                                                      double interfering, double tolerance) {
  const double S = terms.S;
  const token_step step = step_of(d, std::max(1.0, active), terms.mean_context);
  // As serve_at_rate's implied(active), at `rate`.
  const auto held = [&](double rate) {
    if (rate * S >= 1) return std::numeric_limits<double>::infinity();
    const open_loop::times t = terms.at(rate, interfering, active, step);
    if (!(t.tpot > 0)) return std::numeric_limits<double>::infinity();
    return rate * (t.ttft + s.decode_steps() * t.tpot);
  };
  // Every request takes at least h + S + (output - 1) steps of one token.
  double lo = 0, hi = std::min(1 / S, active / (terms.handling + S + s.decode_steps() * step.per_token()));
  if (!(held(hi) >= active)) return std::nullopt;
  while (hi - lo > tolerance * hi) {
    const double mid = (lo + hi) / 2;
    (held(mid) < active ? lo : hi) = mid;
  }
  // The open loop at `lo`, from below, must reach `active` (to the search's
  // precision): settling lower, it holds fewer. Its iterates stay below its
  // smallest fixed point, so once one reaches there it is known to; the
  // figures are those at `active`.
  const double reach = active * (1 - 10 * tolerance);
  const load_result l = serve_at_rate(d, s, terms, lo, interfering, false, reach);
  if (!l.keeps_up || l.users < reach) return std::nullopt;
  return std::pair<double, load_result>{lo, load_at(s, terms, lo, interfering, active, step)};
}

// The closed loop of `out.active` identical requests in lockstep (the engine's
// steps simulated: run_lockstep); users beyond the slots wait in the engine's
// queue, (concurrency - active) / rate by Little's law, their handling done
// while they wait (the engine never waits for them).
inline closed_loop_result serve_lockstep(const deployment& d, const llmroof::workload& s, closed_loop_result out) {
  out.active = std::floor(out.active);
  const prefix_reuse reuse = reuse_of(d, s);
  // A turn of a longer conversation: its history cached where the engine caches (workload::history).
  const double past = s.history();
  const double cached = past > 0 ? (keeps_history(d, s) ? past : 0) : reuse.cached_by_all();
  const double handling = d.efficiency().per_request.value();
  const bool queued = out.concurrency > out.active;
  const lockstep_run run =
      run_lockstep(d, past + s.prompt_tokens(), cached, s.output, queued ? 0 : handling, out.active);
  out.requests_per_s = run.requests_per_s;
  out.queue_wait = make_seconds((out.concurrency - out.active) / run.requests_per_s);
  out.ttft = make_seconds(run.ttft) + out.queue_wait;
  out.tpot = make_seconds(run.tpot);
  out.first_wave_ttft = make_seconds(run.first_wave_ttft);
  load_result& l = out.load;
  l.rate = run.requests_per_s;
  l.stable = l.keeps_up = true;
  l.users = out.active;
  l.decoding = std::min(out.active, run.requests_per_s * s.decode_steps() * run.tpot);
  l.prefill_share = run.prefill_share;
  l.prefill = d.prefill(past + s.prompt_tokens() - cached, cached).estimate;
  l.ttft = make_seconds(run.ttft);
  l.tpot = out.tpot;
  return out;
}

// serve_closed_loop; `tolerance` > 0 stops the search for the rate once it
// is bracketed to that share of itself (a search scoring many candidates),
// 0 runs it to adjacent doubles. `given`: the workload's open_loop on `d`,
// when the caller holds it.
inline closed_loop_result serve_closed_loop(const deployment& d, const llmroof::workload& s, double concurrency,
                                            double tolerance, std::optional<engine_slots> slots = std::nullopt,
                                            const open_loop* given = nullptr) {
  validate(s);
  detail::require_whole("concurrency", concurrency);
  detail::require_in("concurrency", concurrency, 1, 1e6);
  closed_loop_result out;
  out.concurrency = concurrency;
  out.arrivals = s.arrivals;
  out.tokens_per_step = d.speculative ? accepted_tokens(*d.speculative) : 1;
  const engine_slots held_at_once = slots ? *slots : slots_for(d, s);
  out.slots = held_at_once.slots;
  if (out.slots < 1) {
    out.limit = serving_limit::kv_cache;
    return out;  // not one request fits: nothing is served
  }
  out.active = std::min(concurrency, out.slots);
  out.limit = concurrency <= out.slots ? serving_limit::none : held_at_once.limit;
  if (s.arrivals == arrival_pattern::lockstep) return serve_lockstep(d, s, out);
  // Rate-free: every rate tried below shares them (and a search's loops of
  // one deployment at several concurrencies: `given`).
  const std::optional<open_loop> own = given ? std::nullopt : std::optional<open_loop>(std::in_place, d, s);
  const open_loop& terms = given ? *given : *own;
  if (out.active == 1) {
    // One user alone meets nobody (interfering 0): its rate is one request
    // per its own TTFT + (output - 1) x TPOT, at which it is the one user inside.
    // Users beyond the one slot (llama.cpp --parallel 1) queue: by Little's
    // law each waits (N - 1) / rate, i.e. N - 1 whole requests.
    const load_result alone = serve_at_rate(d, s, terms, 0, 0, true);
    out.requests_per_s = 1 / (alone.ttft + s.decode_steps() * alone.tpot).value();
    out.load = serve_at_rate(d, s, terms, out.requests_per_s, 0, true);
    out.queue_wait = make_seconds((concurrency - 1) / out.requests_per_s);
    out.ttft = out.load.ttft + out.queue_wait;
    out.tpot = out.load.tpot;
    return out;
  }
  // A request meets the other active - 1, never its own prefill (the arrival theorem).
  const double interfering = (out.active - 1) / out.active;
  // Requests in the engine at a rate, by Little's law on the open-loop times
  // (not floored at one user as the open-loop report is).
  const auto held = [&](double rate) {
    // Only "fewer than active?" is asked: the iteration may stop at active.
    const load_result l = serve_at_rate(d, s, terms, rate, interfering, false, out.active);
    return l.keeps_up ? rate * (l.ttft.value() + s.decode_steps() * l.tpot.value()) : std::numeric_limits<double>::infinity();
  };
  // The highest rate that holds fewer than `active`: the engine holds them there
  // or stops keeping up just above it.
  double rate = 0;
  std::optional<load_result> known;  // the open loop at `rate`, when the direct solve computed it
  if (tolerance <= 0) {
    rate = detail::last_true([&](double x) { return held(x) < out.active; }, 0, 1e-3, 1e9, false, 80);
  } else if (auto direct = closed_loop_rate(d, s, terms, out.active, interfering, tolerance)) {
    rate = direct->first;
    known = direct->second;
  } else {
    // Every request takes at least h + S + (output - 1) x step(1), so no rate from
    // active / (h + S + (output - 1) x step(1)) up holds fewer than `active`: quarter down
    // from there to a rate that does, then halve the bracket.
    double hi = out.active / (terms.handling + terms.S + s.decode_steps() * terms.alone);
    double lo = hi / 4;
    while (lo > 1e-12 && !(held(lo) < out.active)) {
      hi = lo;
      lo /= 4;
    }
    while (hi - lo > tolerance * lo) {
      const double mid = (lo + hi) / 2;
      (held(mid) < out.active ? lo : hi) = mid;
    }
    rate = lo;
  }
  // Fewer than the slots are inside, so they fit: a search skips the check.
  load_result l = known ? *known : serve_at_rate(d, s, terms, rate, interfering, tolerance <= 0);
  const double inside = rate * (l.ttft.value() + s.decode_steps() * l.tpot.value());
  if (inside < out.active * (1 - 1e-3)) {
    // The engine saturates before it holds `active`: it serves at that rate and the rest wait.
    out.active = inside;
    out.limit = serving_limit::compute;
  }
  out.load = l;
  out.requests_per_s = rate;
  out.queue_wait = make_seconds(rate > 0 ? (concurrency - out.active) / rate : 0.0);
  out.ttft = l.ttft + out.queue_wait;
  out.tpot = l.tpot;
  return out;
}

}  // namespace detail

inline closed_loop_result serve_closed_loop(const deployment& d, const workload& s, double concurrency) {
  return detail::serve_closed_loop(d, s, concurrency, 0);
}

/// How the output lengths of a burst's requests spread about the workload's
/// output: all equal (a fixed-length benchmark: `--random-output-len` with
/// `--ignore-eos`), or exponential with that mean and at most context -
/// prompt tokens (answers of a chat dataset such as ShareGPT: many short,
/// a long tail; the exponential is the widest spread a mean alone implies,
/// an assumption, not a measured shape).
enum class length_spread : std::uint8_t { fixed, exponential };

inline constexpr std::array<std::string_view, 2> length_spread_names{"fixed", "exponential"};

constexpr std::string_view to_string(length_spread l) { return detail::enum_name(l, length_spread_names); }

/// "fixed" or "exponential"; throws std::invalid_argument "burst_lengths must
/// be fixed or exponential (got 'x')".
inline length_spread parse_length_spread(std::string_view name) {
  if (auto l = detail::enum_from_name<length_spread>(name, length_spread_names)) return *l;
  throw std::invalid_argument("burst_lengths must be fixed or exponential (got '" + std::string(name) + "')");
}

/// The most requests serve_burst simulates (trtllm-bench's datasets hold up
/// to 30,000). The command's --burst and validate's burst rows take the same
/// limit.
inline constexpr double max_burst_requests = 1e5;

/// Most work serve_burst simulates, in cohort-steps (burst_cohort_steps):
/// about 5 s in the unoptimized build, under 1 s optimized.
inline constexpr double max_burst_cohort_steps = 4e8;

/// Work of simulating a burst, in cohort-steps: its steps (each of
/// `requests` prompts of `prompt_tokens` in chunks of the token `budget`, an
/// admission step each, the longest answer, and the steps the answers'
/// tokens, `width` a sequence each step, need to pass through the budget),
/// each walking the cohorts at the scheduler (at most `slots` and the
/// requests; when every answer is `longest_answer` long the identical ones
/// join, at most one cohort per step of an answer's life and a few
/// prefilling) beside a step's own work (its roofline terms, worth ~300
/// cohorts).
inline double burst_cohort_steps(double requests, double prompt_tokens, double budget, double longest_answer,
                                 double slots, length_spread spread, double width = 1) {
  const double steps = requests * std::ceil(prompt_tokens / budget) + requests + longest_answer +
                       std::ceil(requests * longest_answer * width / budget);
  double cohorts = std::min(slots, requests);
  if (spread == length_spread::fixed) cohorts = std::min(cohorts, longest_answer + 4);
  return steps * (cohorts + 300);
}

/// What a burst of requests sees: all sent at once with no concurrency cap
/// (`vllm bench serve --request-rate inf`, sglang.bench_serving with every
/// prompt at t = 0), the engine admitting as many as its slots hold and the
/// rest as those complete.
struct burst_result {
  double requests = 0;  ///< sent at once
  double slots = 0;     ///< most requests of the workload's mean shape the engine holds (slots_for)
  serving_limit limit = serving_limit::none;  ///< none (all admitted at once), kv_cache or max_num_seqs
  /// Mean over the requests from the send to the first token: the server's
  /// handling of those sent before it, then the prompts ahead of it in the
  /// scheduler's FIFO, max_batched_tokens a step.
  seconds ttft = make_seconds(0);
  /// Mean over the requests of (last token - first token) / (output - 1): a
  /// request decoding while others' prompts still fill each step's token
  /// budget waits a whole mixed step per token (far above the closed loop's
  /// TPOT at the same batch).
  seconds tpot = make_seconds(0);
  seconds duration = make_seconds(0);         ///< until the last request completes
  seconds first_wave_ttft = make_seconds(0);  ///< mean of the requests admitted first
  double prefill_share = 0;                   ///< share of the duration the prompts' prefill takes
  double output_tokens = 0;                   ///< generated by all the requests
  length_spread lengths = length_spread::fixed;  ///< how the answers' lengths spread
  /// requests / duration, as `vllm bench serve` reports it.
  [[nodiscard]] double requests_per_s() const { return duration.value() > 0 ? requests / duration.value() : 0; }
  /// Output tokens / duration: the benchmark's output token throughput.
  [[nodiscard]] double output_tokens_per_s() const {
    return duration.value() > 0 ? output_tokens / duration.value() : 0;
  }
};

namespace detail {

// The output lengths of `requests` requests, in the order sent: the
// workload's output each (fixed), or exponential quantiles (spread over the
// order by the golden ratio's sequence, so that every stretch of the queue
// holds short and long ones) scaled so their mean is the workload's output,
// each whole and in [1, context - prompt].
inline std::vector<request_shape> burst_requests(const llmroof::workload& s, double requests, length_spread spread) {
  const double prompt = s.prompt_tokens();
  std::vector<request_shape> out(static_cast<std::size_t>(requests), request_shape{prompt, s.output});
  if (spread == length_spread::fixed) return out;
  const double cap = std::max(1.0, s.context - prompt);
  const auto lengths = [&](double scale) {
    double sum = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      const double u = std::fmod((static_cast<double>(i) + 0.5) * 0.6180339887498949, 1.0);
      out[i].output = std::clamp(std::round(-scale * std::log1p(-u)), 1.0, cap);
      sum += out[i].output;
    }
    return sum / requests;
  };
  // The mean rises with the scale: bisect it to the workload's output (as
  // near as whole tokens under the cap allow).
  double lo = 0, hi = s.output;
  while (lengths(hi) < s.output && hi < 1e9) hi *= 2;
  for (int i = 0; i < 60 && hi - lo > 1e-6 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (lengths(mid) < s.output ? lo : hi) = mid;
  }
  lengths(hi);
  return out;
}

}  // namespace detail

/// `requests` requests of the workload's prompt and output (spread as
/// `spread` says) sent at once: the engine's scheduler simulated step by step
/// (detail::run_cohorts: each step the running decodes, then prompt tokens
/// in the order sent up to max_batched_tokens); the server handles the
/// requests one at a time (the engine's per-request time each), the engine
/// holds its slots (slots_for the mean shape) and admits one more as each
/// completes. Throws std::invalid_argument on invalid workload fields,
/// unless requests is a whole number in [1, max_burst_requests] and its
/// burst_cohort_steps at most max_burst_cohort_steps, the output a whole number of tokens (with
/// exponential lengths at most context - prompt) and prefix_hit (with a
/// prefix) 0 or 1 (identical prompts all find the prefix or none does).
inline burst_result serve_burst(const deployment& d, const workload& s, double requests,
                                length_spread spread = length_spread::fixed) {
  validate(s);
  detail::require_whole("requests", requests);
  detail::require_in("requests", requests, 1, max_burst_requests);
  detail::require_whole("output", s.output);
  if (s.prefix > 0 && s.prefix_hit && *s.prefix_hit != 0 && *s.prefix_hit != 1) {
    detail::fail("prefix_hit", "0 or 1 in a burst (identical prompts all find the prefix or none does)",
                 *s.prefix_hit);
  }
  // Exponential answers reach the context: their mean must fit below it.
  const double room = s.context - s.prompt_tokens();
  if (spread == length_spread::exponential && s.output > room) {
    detail::fail("output",
                 "<= context - prompt (" + detail::show(room) +
                     " tokens) with exponential lengths: the answers spread up to the context",
                 s.output);
  }
  burst_result out;
  out.requests = requests;
  out.lengths = spread;
  // A burst is new requests, each its own conversation: slots of prompt + output, no earlier turns.
  llmroof::workload fresh = s;
  fresh.context = std::min(s.context, s.prompt_tokens() + s.output);
  const engine_slots held = slots_for(d, fresh);
  out.slots = std::floor(std::min(held.slots, 1e6));
  if (out.slots < 1) {
    out.limit = serving_limit::kv_cache;
    return out;  // not one request fits: nothing is served
  }
  out.limit = requests <= out.slots ? serving_limit::none : held.limit;
  const prefix_reuse reuse = reuse_of(d, s);
  const double cached = reuse.cached_by_all();
  // Refuse a burst whose steps (each prompt in chunks of the token budget,
  // then the answers) would run for minutes (hostile budgets: 16-token steps
  // of 32k prompts).
  const double todo = s.prompt_tokens() - cached;
  const double longest = spread == length_spread::exponential ? room : s.output;
  const double width = d.speculative ? d.speculative->draft_tokens + 1.0 : 1.0;
  const double work =
      burst_cohort_steps(requests, todo, d.engine.max_batched_tokens, longest, out.slots, spread, width);
  if (work > max_burst_cohort_steps) {
    detail::fail("requests",
                 "fewer for a simulated burst: " + detail::show(requests) + " prompts of " + detail::show(todo) +
                     " tokens in steps of " + detail::show(d.engine.max_batched_tokens) + " and answers of " +
                     (spread == length_spread::exponential ? "up to " : "") + detail::show(longest) +
                     " tokens take " + detail::show(work) + " cohort-steps (at most " +
                     detail::show(max_burst_cohort_steps) + ")",
                 requests);
  }
  const std::vector<detail::request_shape> sent = detail::burst_requests(s, requests, spread);
  for (const detail::request_shape& r : sent) out.output_tokens += r.output;
  const detail::burst_run run = detail::run_burst(d, cached, d.efficiency().per_request.value(), out.slots, sent);
  out.ttft = make_seconds(run.ttft);
  out.tpot = make_seconds(run.tpot);
  out.duration = make_seconds(run.duration);
  out.first_wave_ttft = make_seconds(run.first_wave_ttft);
  out.prefill_share = run.prefill_share;
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

}  // namespace llmroof
