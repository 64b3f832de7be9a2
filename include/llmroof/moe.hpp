// Mixture-of-Experts routing: how many distinct experts a batch of tokens
// touches in one layer, which decides the expert weight bytes of a step.
#pragma once

#include <cmath>
#include <vector>

#include "llmroof/detail/check.hpp"

namespace llmroof {

/// Expected distinct experts per layer when `token_count` tokens each pick k
/// distinct experts of E uniformly: E * (1 - (1 - k/E)^token_count).
/// A given expert is missed by one token with probability 1 - k/E.
/// Throws std::invalid_argument unless 0 < k <= E and token_count >= 0.
inline double expected_distinct_experts(int num_experts, int experts_per_token, double token_count) {
  detail::require_positive("num_experts", num_experts);
  detail::require_in_open_closed("experts_per_token", experts_per_token, 0, num_experts);
  detail::require_non_negative("tokens", token_count);
  const double e = num_experts;
  const double miss = 1.0 - experts_per_token / e;
  return e * (1.0 - std::pow(miss, token_count));
}

/// Expected distinct experts with skewed routing. `popularity` holds each
/// expert's share of routing decisions (sums to 1); an expert is picked by
/// one token with probability q_e = min(1, k * p_e), so the expectation is
/// sum_e 1 - (1 - q_e)^token_count. Throws std::invalid_argument on an empty or
/// negative vector, or one that does not sum to 1 within 1e-6.
inline double expected_distinct_experts(const std::vector<double>& popularity,
                                         int experts_per_token, double token_count) {
  if (popularity.empty()) detail::fail("popularity size", "> 0", 0);
  detail::require_in_open_closed("experts_per_token", experts_per_token, 0,
                                 static_cast<double>(popularity.size()));
  detail::require_non_negative("tokens", token_count);
  double sum = 0;
  for (double p : popularity) sum += detail::require_non_negative("popularity[i]", p);
  if (std::fabs(sum - 1.0) > 1e-6) detail::fail("popularity sum", "1", sum);
  double distinct = 0;
  for (double p : popularity) {
    const double q = std::fmin(1.0, experts_per_token * p);
    distinct += 1.0 - std::pow(1.0 - q, token_count);
  }
  return distinct;
}

/// Zipf(alpha) popularity over E experts: p_e proportional to 1 / e^alpha
/// (e = 1..E). alpha 0 is uniform. Throws unless E > 0 and alpha >= 0.
inline std::vector<double> zipf_popularity(int num_experts, double alpha) {
  detail::require_positive("num_experts", num_experts);
  detail::require_non_negative("alpha", alpha);
  std::vector<double> p(static_cast<std::size_t>(num_experts));
  double sum = 0;
  for (int e = 0; e < num_experts; ++e) {
    p[static_cast<std::size_t>(e)] = 1.0 / std::pow(e + 1.0, alpha);
    sum += p[static_cast<std::size_t>(e)];
  }
  for (double& x : p) x /= sum;
  return p;
}

}  // namespace llmroof
