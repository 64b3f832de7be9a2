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

}  // namespace llmroof
