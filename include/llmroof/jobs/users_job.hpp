// The users job: the most users of a workload that meet a tokens/s and a
// TTFT target on a deployment, with their closed loop, curve and energy.
// The command's `users`, Python's `users()` and the report read the answer.
#pragma once

#include <optional>

#include "llmroof/serving/capacity_search.hpp"
#include "llmroof/serving/energy.hpp"

namespace llmroof {

/// What the users job is asked: the users' context and their loop's
/// prompt, prefix, arrivals and output (`work.users` is ignored: it is the
/// answer), the targets, a price and speculative decoding.
struct users_request {
  workload work;
  double min_tokens_per_s = 10;              ///< per user
  double ttft_target_s = 0;                  ///< a new arrival's TTFT at most (0: no target)
  price cost;                                ///< no price: energy only
  std::optional<speculation> spec;
};

/// The users job's answer: everything the users report shows.
struct users_answer {
  deployment setup;                          ///< as served: the request's speculation applied
  workload work;
  double min_tokens_per_s = 0;
  double ttft_target_s = 0;
  users_result result;
  energy_cost energy;                        ///< of the most users' closed loop (zero users: none served)
  /// J per request of that loop, all devices: its power over its requests/s,
  /// = J per output token x output tokens (the prompts' prefill time is in
  /// the loop's rate, at the step's power). Unset without a TDP or users.
  std::optional<double> joules_per_request;
};

/// The most users of `q` on `d`. Throws std::invalid_argument naming the
/// field of an invalid request (as max_users and validate(price) do).
inline users_answer answer(const deployment& d, const users_request& q) {
  const deployment s = d.with_speculation(q.spec);
  users_result u = max_users(s, q.work, make_tokens_per_second(q.min_tokens_per_s), make_seconds(q.ttft_target_s));
  energy_cost e = users_energy(s, u, q.work, q.cost);
  const std::optional<double> per_request =
      e.joules_per_token ? std::optional<double>(*e.joules_per_token * q.work.output) : std::nullopt;
  return users_answer{s, q.work, q.min_tokens_per_s, q.ttft_target_s, std::move(u), std::move(e), per_request};
}

}  // namespace llmroof
