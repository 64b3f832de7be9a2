// Identical requests started together: the engine's steps simulated cohort
// by cohort, for users in lockstep (load_model.hpp's serve_closed_loop with
// arrival_pattern::lockstep) and for a burst sent at once (serve_burst).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <stdexcept>
#include <utility>
#include <vector>

#include "llmroof/serving/speculative_step.hpp"

namespace llmroof::detail {

/// Requests of one shape in the same state: the engine's scheduler sees a
/// cohort as one entry (identical requests admitted together stay together
/// until the token budget splits them).
struct cohort {
  double n = 0;            ///< requests
  double first_index = 0;  ///< of the first one among all requests sent
  double sent = 0;         ///< s, when they were sent
  double ready = 0;        ///< s, when they reach the scheduler
  double first = 0;        ///< s, when their first token came
  double done = 0;         ///< prompt tokens prefilled, each
  double generated = 0;    ///< output tokens, each
  double prompt = 0;       ///< tokens, each
  double output = 0;       ///< tokens to generate, each
};

/// The engine's scheduler as vLLM V1 and TensorRT-LLM run it: each
/// step first takes the tokens of every decoding sequence (one, or k + 1 to
/// verify when speculative), then fills the rest of `max_batched_tokens`
/// with prompt tokens in arrival order (the last prompt it reaches runs
/// partly: chunked prefill). SGLang (engine_settings::mixed_prefill false)
/// runs a step of prompt tokens alone, up to the whole budget, whenever one
/// waits, and its decodes wait for it. A step lasts mixed_step_seconds of its decodes
/// (step_of the batch at its mean context: draft passes, then the verify)
/// and its prompt chunks (deployment::prefill of their mean chunk after their
/// mean cached tokens, all of them in one batch): the longer of the two, or
/// their compute-limited times added when that is longer. A prompt's last
/// chunk yields its first token. Runs of pure decode steps are timed
/// together at their mean context, so the cost is per event, not per token. Steps the cohorts `sent` (each reaching the
/// scheduler at its `ready`; sent in the order they are ready, which is the
/// scheduler's FIFO) from time 0 until nothing is left or
/// `policy.done(live, arriving, t)`; each finished cohort goes to
/// `policy.finished(c, t, sends)`, which records it and appends the requests
/// it lets in (ready when they reach the scheduler, never before those sent
/// earlier); `policy.prefilled(s)` hears each mixed step's prompt time. Only
/// the cohorts at the scheduler are walked each step, and neighbours it can
/// no longer tell apart (the same prompt progress, answer, send and first
/// token) run as one cohort from then on when `policy.joins(a, b)` allows it
/// (what the policy records of them must not tell them apart either): exact,
/// and a burst's requests, admitted one at a time, are walked as a few
/// cohorts instead of one by one.
/// Returns the time the last step ends, s. The cohorts must fit in the engine.
template <class Policy>
double run_cohorts(const deployment& d, double cached, std::vector<cohort> sent, Policy& policy) {
  // Prompt tokens each request of a cohort prefills (`cached` are the prefix's).
  const auto todo = [cached](const cohort& c) { return c.prompt - cached; };
  const double budget_per_step = d.engine.max_batched_tokens;
  // A prompt chunk's time and the part of it its compute-limited ops take.
  const auto prefill_s = [&](double tokens, double before, double batch) {
    const double x = std::max(1.0, std::round(tokens)), a = std::max(0.0, std::round(before));
    if (d.where.offload) {  // one sequence at a time
      const phase_timing p = d.prefill(x, a);
      return std::pair{batch * p.estimate.value(), batch * p.compute_time.value()};
    }
    const phase_timing p = d.prefill(x, a, batch);
    return std::pair{p.estimate.value(), p.compute_time.value()};
  };
  // Cohorts not yet at the scheduler wait in `arriving`, soonest first (both
  // policies send in the order they are ready, so the scheduler's FIFO is
  // the order of arrival); `live` holds those it schedules.
  std::deque<cohort> arriving;
  const auto arrive = [&](const cohort& c) {
    const auto at = std::upper_bound(arriving.begin(), arriving.end(), c.ready,
                                     [](double r, const cohort& x) { return r < x.ready; });
    arriving.insert(at, c);
  };
  for (const cohort& c : sent) arrive(c);
  double t = 0, steps = 0;
  std::vector<cohort> live, next, sends;
  while (!live.empty() || !arriving.empty()) {
    if (++steps > 1e7) throw std::logic_error("the engine's step simulation did not end");
    while (!arriving.empty() && arriving.front().ready <= t) {
      live.push_back(arriving.front());
      arriving.pop_front();
    }
    double b = 0, ctx = 0, waiting = 0;
    for (const cohort& c : live) {
      if (c.done >= todo(c)) {
        b += c.n;
        ctx += c.n * (c.prompt + c.generated);
      } else {
        ++waiting;
      }
    }
    if (b == 0 && waiting == 0) {  // the engine is idle until the next request arrives
      t = arriving.front().ready;
      continue;
    }
    ctx = b > 0 ? ctx / b : 0;
    // A decoding sequence keeps st.tokens per step (more than one when
    // speculative: the expected accepted drafts) and puts st.width through it.
    const token_step st = b > 0 ? step_of(d, b, ctx) : token_step{};
    const double decode_s = st.seconds;
    // A prefill-first engine (SGLang) gives a waiting prompt a step of its own.
    const bool mixed = d.engine.mixed_prefill;
    // The decodes fill the whole budget: no prompt token runs until one finishes.
    const bool starved = mixed && waiting > 0 && budget_per_step - b * st.width <= 0;
    if (waiting == 0 || starved) {
      // Pure decode steps until a request finishes or (when a prompt could
      // run) a new one arrives.
      double steps_to_finish = 1e18;
      for (const cohort& c : live) {
        if (c.done < todo(c)) continue;
        steps_to_finish = std::min(steps_to_finish, std::ceil((c.output - c.generated) / st.tokens - 1e-9));
      }
      const double steps_to_arrival =
          arriving.empty() || starved ? 1e18 : std::ceil((arriving.front().ready - t) / decode_s);
      const double k = std::max(1.0, std::min(steps_to_finish, steps_to_arrival));
      for (cohort& c : live) {
        if (c.done >= todo(c)) c.generated += k * st.tokens;
      }
      t += k * (k > 1 ? step_of(d, b, ctx + (k - 1) * st.tokens / 2).seconds : decode_s);
    } else {
      // One mixed step: the decodes, then prompt tokens in arrival order (a
      // prefill-only step: the prompt tokens alone, the decodes waiting).
      double budget = budget_per_step - (mixed ? b * st.width : 0.0), chunks = 0, tokens = 0, before = 0;
      next.clear();
      for (cohort& c : live) {
        if (c.done >= todo(c) || budget <= 0) {
          next.push_back(c);
          continue;
        }
        const double rest = todo(c) - c.done;
        if (c.n * rest <= budget) {  // every one of them runs its remaining prompt
          budget -= c.n * rest;
          chunks += c.n;
          tokens += c.n * rest;
          before += c.n * (cached + c.done);
          c.done = todo(c);
          next.push_back(c);
          continue;
        }
        // The budget ends inside this cohort: m complete, one runs part, the rest wait.
        const double m = std::floor(budget / rest), part = budget - m * rest;
        cohort whole = c, partial = c, untouched = c;
        whole.n = m;
        partial.n = part > 0 ? 1 : 0;
        untouched.n = c.n - m - partial.n;
        partial.first_index = c.first_index + m;
        untouched.first_index = partial.first_index + partial.n;
        chunks += m + partial.n;
        tokens += m * rest + part;
        before += (m + partial.n) * (cached + c.done);
        whole.done = todo(c);
        partial.done += part;
        for (const cohort* x : {&whole, &partial, &untouched}) {
          if (x->n > 0) next.push_back(*x);
        }
        budget = 0;
      }
      live.swap(next);
      const auto [prefill_part, prefill_compute] =
          chunks > 0 ? prefill_s(tokens / chunks, before / chunks, chunks) : std::pair{0.0, 0.0};
      // The chunks ride with the decodes' verify, not their draft passes.
      const double step = mixed ? mixed_step_seconds(st, prefill_part, prefill_compute) : prefill_part;
      policy.prefilled(prefill_part);
      t += step;
      for (cohort& c : live) {
        if (c.done >= todo(c) && c.generated == 0) {
          c.generated = 1;  // the prompt's last chunk samples the first token
          c.first = t;
        } else if (c.done >= todo(c) && mixed) {
          c.generated += st.tokens;
        }
      }
    }
    // Finished requests: recorded, and what they let in.
    next.clear();
    sends.clear();
    for (const cohort& c : live) {
      if (c.done < todo(c) || c.generated < c.output) {
        next.push_back(c);
        continue;
      }
      policy.finished(c, t, sends);
    }
    live.clear();
    // Neighbours the scheduler can no longer tell apart run as one cohort.
    for (const cohort& c : next) {
      if (!live.empty()) {
        cohort& a = live.back();
        // Consecutive requests only: a budget's split counts indices from the first.
        if (a.done == c.done && a.generated == c.generated && a.prompt == c.prompt && a.output == c.output &&
            a.sent == c.sent && a.first == c.first && c.first_index == a.first_index + a.n && policy.joins(a, c)) {
          a.n += c.n;
          continue;
        }
      }
      live.push_back(c);
    }
    for (const cohort& c : sends) arrive(c);
    if (policy.done(live, arriving, t)) break;
  }
  return t;
}

/// What `clients` users see, each sending an identical request the moment
/// their last one completes. Means over the requests sent once the loop has
/// settled (the third to the fifth wave of `clients` requests), and over the
/// cold start's first wave.
struct lockstep_run {
  double ttft = 0;             ///< s, from sending to the first token
  double tpot = 0;             ///< s, (last token - first token) / (output - 1); 0 for one output token
  double requests_per_s = 0;   ///< completions per second in the settled loop
  double first_wave_ttft = 0;  ///< s, the first `clients` requests, all sent at once
  double prefill_share = 0;    ///< share of the settled loop's time its prompts' prefill takes
};

/// run_cohorts with `clients` users in a loop: a finished request's user
/// sends the next at once; it reaches the scheduler `handling` s later
/// (tokenising, admission), so a cohort that finishes in one step comes back
/// in one step. `clients` must fit in the engine (the caller caps them at its
/// slots). Throws std::invalid_argument on a non-whole `clients` or `output`.
inline lockstep_run run_lockstep(const deployment& d, double prompt, double cached, double output, double handling,
                                 double clients) {
  require_whole("concurrency", clients);
  require_whole("output", output);
  constexpr int settle = 2, measured = 3, waves = settle + measured + 1;
  struct loop {
    double clients, prompt, output, handling, lo, hi;
    double sent;
    // The settled loop's window: from the send of request `lo` to that of `hi`.
    double t_lo = -1, t_hi = -1, idx_lo = -1, idx_hi = -1;
    double ttft_sum = 0, tpot_sum = 0, counted = 0, first_sum = 0, first_counted = 0, prefill_time = 0;
    void prefilled(double s) {
      if (t_lo >= 0 && t_hi < 0) prefill_time += s;
    }
    void finished(const cohort& c, double t, std::vector<cohort>& sends) {
      if (c.first_index >= lo && c.first_index < hi) {
        ttft_sum += c.n * (c.first - c.sent);
        tpot_sum += c.n * (output > 1 ? (t - c.first) / (output - 1) : 0);
        counted += c.n;
      }
      if (c.first_index < clients) {
        first_sum += c.n * (c.first - c.sent);
        first_counted += c.n;
      }
      if (sent < waves * clients) {
        if (idx_lo < 0 && sent + c.n > lo) {
          idx_lo = sent;
          t_lo = t;
        }
        if (idx_hi < 0 && sent + c.n > hi) {
          idx_hi = sent;
          t_hi = t;
        }
        sends.push_back({c.n, sent, t, t + handling, 0, 0, 0, prompt, output});
        sent += c.n;
      }
    }
    // Its cohorts are whole waves already; joined, the windows would blur.
    [[nodiscard]] static bool joins(const cohort&, const cohort&) { return false; }
    // Every measured request is done: the rest is the drain.
    [[nodiscard]] bool done(const std::vector<cohort>& live, const std::deque<cohort>& arriving, double) const {
      const auto measured = [&](const cohort& c) { return c.first_index < hi; };
      return t_hi >= 0 && std::none_of(live.begin(), live.end(), measured) &&
             std::none_of(arriving.begin(), arriving.end(), measured);
    }
  } p{clients, prompt, output, handling, settle * clients, (settle + measured) * clients, clients};
  run_cohorts(d, cached, {{clients, 0, 0, handling, 0, 0, 0, prompt, output}}, p);
  lockstep_run out;
  out.ttft = p.ttft_sum / p.counted;
  out.tpot = p.tpot_sum / p.counted;
  out.first_wave_ttft = p.first_sum / p.first_counted;
  const double span = p.t_hi - p.t_lo;
  out.requests_per_s = (p.idx_hi - p.idx_lo) / span;
  out.prefill_share = std::min(1.0, p.prefill_time / span);
  return out;
}

/// One request of a burst: its prompt and output tokens.
struct request_shape {
  double prompt = 0;
  double output = 0;
};

/// What the requests of a burst, sent at once, see: the means over all of
/// them, from the send (time 0) to the last completion.
struct burst_run {
  double ttft = 0;             ///< s, mean from the send to the first token
  double tpot = 0;             ///< s, mean (last token - first token) / (output - 1) over those of 2+ tokens
  double duration = 0;         ///< s, until the last request completes
  double first_wave_ttft = 0;  ///< s, the mean of the `slots` requests admitted first
  double prefill_share = 0;    ///< share of the duration prompts' prefill takes
};

/// run_cohorts over `requests` (in the order sent, all at time 0). The
/// server handles them one at a time, `handling` s each (one process parses,
/// templates and tokenizes every request: vLLM's and SGLang's OpenAI servers,
/// TensorRT-LLM's trtllm-serve), so the i-th (from 0) reaches the scheduler
/// at (i + 1) x handling; the engine holds `slots` at once and admits the
/// next waiting one as each completes. `slots` >= 1; `requests` not empty.
/// `join` false walks every request on its own (the reference the joined
/// cohorts are tested against).
inline burst_run run_burst(const deployment& d, double cached, double handling, double slots,
                           const std::vector<request_shape>& requests, bool join = true) {
  struct burst {
    const std::vector<request_shape>& sent_order;
    double handling, wave;
    bool join;
    std::size_t next = 0;
    double ttft_sum = 0, tpot_sum = 0, tpot_counted = 0, prefill_time = 0, first_sum = 0;
    void prefilled(double s) { prefill_time += s; }
    [[nodiscard]] cohort admit(double t) {
      const request_shape& r = sent_order[next];
      const double i = static_cast<double>(next++);
      return {1, i, 0, std::max(t, (i + 1) * handling), 0, 0, 0, r.prompt, r.output};
    }
    void finished(const cohort& c, double t, std::vector<cohort>& sends) {
      ttft_sum += c.n * (c.first - c.sent);
      if (c.output > 1) {
        tpot_sum += c.n * (t - c.first) / (c.output - 1);
        tpot_counted += c.n;
      }
      if (c.first_index < wave) first_sum += c.n * (c.first - c.sent);
      for (double k = 0; k < c.n && next < sent_order.size(); ++k) sends.push_back(admit(t));
    }
    // The first wave's TTFT is kept apart: a cohort is all in it or all out.
    [[nodiscard]] bool joins(const cohort& a, const cohort& b) const {
      return join && (a.first_index < wave) == (b.first_index < wave);
    }
    [[nodiscard]] bool done(const std::vector<cohort>&, const std::deque<cohort>&, double) const { return false; }
  };
  const double n = static_cast<double>(requests.size());
  burst p{requests, handling, std::min(slots, n), join};
  std::vector<cohort> live;
  live.reserve(static_cast<std::size_t>(p.wave));
  while (static_cast<double>(p.next) < p.wave) live.push_back(p.admit(0));
  burst_run out;
  out.duration = run_cohorts(d, cached, std::move(live), p);
  out.ttft = p.ttft_sum / n;
  out.tpot = p.tpot_counted > 0 ? p.tpot_sum / p.tpot_counted : 0;
  out.first_wave_ttft = p.first_sum / p.wave;
  out.prefill_share = std::min(1.0, p.prefill_time / out.duration);
  return out;
}

}  // namespace llmroof::detail
