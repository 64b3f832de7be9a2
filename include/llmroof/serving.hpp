// Serving plans: N users on a device, what each of them sees — time to first
// token, tokens/s per user and in total, against context — and whether the
// KV cache holds them.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "llmroof/memory_plan.hpp"
#include "llmroof/phases.hpp"

namespace llmroof {

/// N users, each with a prompt and a context budget.
struct scenario {
  double users = 1;        ///< concurrent sequences
  double context = 4096;   ///< tokens each user may hold (prompt + answer)
  double prompt = 0;       ///< prompt tokens of a new request; 0 = min(context, 2048)
  engine_settings engine;
  int devices = 1;
  std::optional<bytes> stored_weights;  ///< exact loaded bytes from a file, if known
};

/// One point of the decode curve: every user at `context` cached tokens.
struct curve_point {
  double context = 0;
  bool fits = false;                 ///< all users at this context fit in memory
  phase_timing single;               ///< one user alone
  phase_timing all;                  ///< all users decoding together
  [[nodiscard]] tokens_per_second per_user_estimate() const {
    return make_tokens(1) / all.estimate;
  }
  [[nodiscard]] tokens_per_second per_user_bound() const { return make_tokens(1) / all.bound; }
  [[nodiscard]] tokens_per_second total_estimate() const { return all.tokens_per_s_estimate(); }
};

struct plan_result {
  memory_plan memory;
  phase_timing ttft;                  ///< prefill of the prompt, one user, empty cache
  std::vector<curve_point> curve;     ///< from an empty context to scenario.context
  double prompt = 0;
};

/// Contexts of the decode curve: 0, then powers of two from 1024, then `context`.
inline std::vector<double> curve_contexts(double context) {
  std::vector<double> cs{0};
  for (double c = 1024; c < context; c *= 2) cs.push_back(c);
  if (context > 0) cs.push_back(context);
  return cs;
}

/// Throws std::invalid_argument on invalid scenario fields (users < 1,
/// context < 0, prompt < 0, devices < 1) or engine settings.
inline plan_result plan(const architecture& a, const precision& pr, const roofline& r,
                        const scenario& s) {
  detail::require_non_negative("prompt", s.prompt);
  plan_result out;
  out.memory = plan_memory(a, pr, r.dev(), s.users, s.context, s.engine, r.devices(), s.stored_weights);
  out.prompt = s.prompt > 0 ? s.prompt : std::max(1.0, std::min(s.context, 2048.0));
  out.ttft = prefill(a, pr, r, out.prompt);
  for (double c : curve_contexts(s.context)) {
    curve_point p;
    p.context = c;
    p.fits = out.memory.weights_fit &&
             s.users * kv_bytes_per_sequence(a, pr.kv, c, s.engine.block_tokens).value() <=
                 out.memory.kv_budget.value();
    p.single = decode_step(a, pr, r, 1, c);
    p.all = decode_step(a, pr, r, s.users, c);
    out.curve.push_back(p);
  }
  return out;
}

/// Two models decoding side by side against batch (users at one context).
struct model_comparison {
  double context = 0;
  std::vector<double> batches;
  std::vector<phase_timing> first;   ///< model a at each batch
  std::vector<phase_timing> second;  ///< model b at each batch
  /// First batch at which a's step reads at least as many bytes as b's (none
  /// if never up to max_batch).
  std::optional<double> bytes_crossover;
  /// First batch at which a's estimated per-user tokens/s drop to b's or below.
  std::optional<double> speed_crossover;
};

namespace detail {
/// First integer batch in [1, max_batch] where `pred` holds, assuming it
/// holds from some batch on (found by doubling, then bisection).
template <class Pred>
std::optional<double> first_batch(Pred pred, double max_batch) {
  if (pred(1.0)) return 1.0;
  double lo = 1, hi = 2;
  while (hi <= max_batch && !pred(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > max_batch) {
    if (!pred(max_batch)) return std::nullopt;
    hi = max_batch;
  }
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (pred(mid) ? hi : lo) = mid;
  }
  return hi;
}
}  // namespace detail

/// Decode of models a and b at batches 1, 2, 4, ... max_batch, every sequence
/// at `context` tokens, and where a stops being cheaper than b.
/// Throws std::invalid_argument on context < 0 or max_batch < 1.
inline model_comparison compare_decode(const architecture& a, const precision& pa, const architecture& b,
                                       const precision& pb, const roofline& r, double context,
                                       double max_batch = 1024) {
  detail::require_non_negative("context", context);
  detail::require_in("max_batch", max_batch, 1, 1e7);
  model_comparison out;
  out.context = context;
  for (double n = 1; n <= max_batch; n *= 2) {
    out.batches.push_back(n);
    out.first.push_back(decode_step(a, pa, r, n, context));
    out.second.push_back(decode_step(b, pb, r, n, context));
  }
  out.bytes_crossover = detail::first_batch(
      [&](double n) {
        return count_decode(a, pa, n, context).total_bytes() >= count_decode(b, pb, n, context).total_bytes();
      },
      max_batch);
  out.speed_crossover = detail::first_batch(
      [&](double n) {
        return decode_step(a, pa, r, n, context).estimate >= decode_step(b, pb, r, n, context).estimate;
      },
      max_batch);
  return out;
}

}  // namespace llmroof
