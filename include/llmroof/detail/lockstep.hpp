// Identical requests in lockstep: the engine's steps simulated cohort by
// cohort (load.hpp's serve_closed_loop with arrival_pattern::lockstep).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "llmroof/speculative.hpp"

namespace llmroof::detail {

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

/// The engine's scheduler as vLLM V1, SGLang and TensorRT-LLM run it: each
/// step first takes the tokens of every decoding sequence (one, or k + 1 to
/// verify when speculative), then fills the rest of `max_batched_tokens`
/// with prompt tokens in arrival order (the last prompt it reaches runs
/// partly: chunked prefill). A step lasts the longer of its decodes (step_of
/// the batch at its mean context: draft passes, then the verify) and its
/// prompt chunks (deployment::prefill of their mean chunk after their mean
/// cached tokens, all of them in one batch): one pass reads the weights once
/// for both, as the open loop's mixed steps do (the draft passes run before
/// the max). A prompt's last chunk yields
/// its first token. A finished request's user sends the next at once; it
/// reaches the scheduler `handling` s later (tokenising, admission), so a
/// cohort that finishes in one step comes back in one step. Runs of pure
/// decode steps are timed together at their mean context, so the cost is per
/// event, not per token. `clients` must fit in the engine (the caller caps
/// them at its slots). Throws std::invalid_argument on a non-whole `clients`
/// or `output`.
inline lockstep_run run_lockstep(const deployment& d, double prompt, double cached, double output, double handling,
                                 double clients) {
  require_whole("concurrency", clients);
  require_whole("output", output);
  constexpr int settle = 2, measured = 3, waves = settle + measured + 1;
  const double todo = prompt - cached;  // prompt tokens each request prefills
  const double budget_per_step = d.engine.max_batched_tokens;
  struct cohort {
    double n = 0;          // requests, identical and in the same state
    double first_index = 0;  // of the first one among all requests sent
    double sent = 0, ready = 0, first = 0;
    double done = 0;       // prompt tokens prefilled, each
    double generated = 0;  // output tokens, each
  };
  std::vector<cohort> live;  // in arrival order: the scheduler's FIFO
  live.push_back({clients, 0, 0, handling, 0, 0, 0});
  double sent = clients, t = 0;
  const double lo = settle * clients, hi = (settle + measured) * clients;
  // The settled loop's window: from the send of request `lo` to that of `hi`.
  double t_lo = -1, t_hi = -1, idx_lo = -1, idx_hi = -1;
  double ttft_sum = 0, tpot_sum = 0, counted = 0, first_sum = 0, first_counted = 0, prefill_time = 0, steps = 0;
  const auto prefill_s = [&](double tokens, double before, double batch) {
    const double x = std::max(1.0, std::round(tokens)), a = std::max(0.0, std::round(before));
    if (d.where.offload) return batch * d.prefill(x, a).estimate.value();  // one sequence at a time
    return d.prefill(x, a, batch).estimate.value();
  };
  std::vector<cohort> next, sends;
  while (!live.empty()) {
    if (++steps > 1e7) throw std::logic_error("lockstep: the loop did not settle");
    double b = 0, ctx = 0, waiting = 0;
    for (const cohort& c : live) {
      if (c.ready > t) continue;
      if (c.done >= todo) {
        b += c.n;
        ctx += c.n * (prompt + c.generated);
      } else {
        ++waiting;
      }
    }
    if (b == 0 && waiting == 0) {  // the engine is idle until the next request arrives
      double soonest = live.front().ready;
      for (const cohort& c : live) soonest = std::min(soonest, c.ready);
      t = soonest;
      continue;
    }
    ctx = b > 0 ? ctx / b : 0;
    // A decoding sequence keeps st.tokens per step (more than one when
    // speculative: the expected accepted drafts) and puts st.width through it.
    const token_step st = b > 0 ? step_of(d, b, ctx) : token_step{};
    const double decode_s = st.seconds;
    if (waiting == 0) {
      // Pure decode steps until a request finishes or a new one arrives.
      double steps_to_finish = 1e18, arrival = 1e18;
      for (const cohort& c : live) {
        if (c.ready > t) {
          arrival = std::min(arrival, c.ready);
        } else {
          steps_to_finish = std::min(steps_to_finish, std::ceil((output - c.generated) / st.tokens - 1e-9));
        }
      }
      const double steps_to_arrival = arrival < 1e18 ? std::ceil((arrival - t) / decode_s) : 1e18;
      const double k = std::max(1.0, std::min(steps_to_finish, steps_to_arrival));
      for (cohort& c : live) {
        if (c.ready <= t && c.done >= todo) c.generated += k * st.tokens;  // the decoding ones, not those arriving meanwhile
      }
      t += k * (k > 1 ? step_of(d, b, ctx + (k - 1) * st.tokens / 2).seconds : decode_s);
    } else {
      // One mixed step: the decodes, then prompt tokens in arrival order.
      double budget = budget_per_step - b * st.width, chunks = 0, tokens = 0, before = 0;
      next.clear();
      for (cohort& c : live) {
        if (c.ready > t || c.done >= todo || budget <= 0) {
          next.push_back(c);
          continue;
        }
        const double rest = todo - c.done;
        if (c.n * rest <= budget) {  // every one of them runs its remaining prompt
          budget -= c.n * rest;
          chunks += c.n;
          tokens += c.n * rest;
          before += c.n * (cached + c.done);
          c.done = todo;
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
        whole.done = todo;
        partial.done += part;
        for (const cohort* x : {&whole, &partial, &untouched}) {
          if (x->n > 0) next.push_back(*x);
        }
        budget = 0;
      }
      live.swap(next);
      const double prefill_part = chunks > 0 ? prefill_s(tokens / chunks, before / chunks, chunks) : 0;
      // The chunks ride with the decodes' verify, not their draft passes.
      const double step = st.draft + std::max(decode_s - st.draft, prefill_part);
      if (t_lo >= 0 && t_hi < 0) prefill_time += prefill_part;
      const double start = t;
      t += step;
      for (cohort& c : live) {
        if (c.ready > start) continue;
        if (c.done >= todo && c.generated == 0) {
          c.generated = 1;  // the prompt's last chunk samples the first token
          c.first = t;
        } else if (c.done >= todo) {
          c.generated += st.tokens;
        }
      }
    }
    // Finished requests: recorded, and their users send the next.
    next.clear();
    sends.clear();
    for (const cohort& c : live) {
      if (c.done < todo || c.generated < output || c.ready > t) {
        next.push_back(c);
        continue;
      }
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
        sends.push_back({c.n, sent, t, t + handling, 0, 0, 0});
        sent += c.n;
      }
    }
    live.swap(next);
    live.insert(live.end(), sends.begin(), sends.end());
    // Every measured request is done: the rest is the drain.
    if (t_hi >= 0 && std::none_of(live.begin(), live.end(), [&](const cohort& c) { return c.first_index < hi; })) break;
  }
  lockstep_run out;
  out.ttft = ttft_sum / counted;
  out.tpot = tpot_sum / counted;
  out.first_wave_ttft = first_sum / first_counted;
  const double span = t_hi - t_lo;
  out.requests_per_s = (idx_hi - idx_lo) / span;
  out.prefill_share = std::min(1.0, prefill_time / span);
  return out;
}

}  // namespace llmroof::detail
