// Mixture-of-Experts routing: how many distinct experts a batch of tokens
// touches in one layer, which decides the expert weight bytes of a step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
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
  detail::require_at_most("num_experts", num_experts, 1e6);
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

/// Variance of the distinct experts per layer under uniform routing.
/// With r1 = (1 - k/E)^B (an expert is missed by all B tokens) and
/// r2 = ((E-k)(E-k-1) / (E(E-1)))^B (two given experts both missed),
/// Var = E r1 (1 - r1) + E (E - 1) (r2 - r1^2).
inline double distinct_experts_variance(int num_experts, int experts_per_token, double token_count) {
  detail::require_positive("num_experts", num_experts);
  detail::require_in_open_closed("experts_per_token", experts_per_token, 0, num_experts);
  detail::require_non_negative("tokens", token_count);
  const double e = num_experts;
  const double k = experts_per_token;
  const double r1 = std::pow(1.0 - k / e, token_count);
  const double r2 = e > 1 ? std::pow((e - k) * (e - k - 1) / (e * (e - 1)), token_count) : 0.0;
  return std::max(0.0, e * r1 * (1 - r1) + e * (e - 1) * (r2 - r1 * r1));
}

/// Result of a Monte-Carlo routing simulation.
struct routing_sample {
  double mean_distinct = 0;      ///< experts touched per layer, averaged over trials
  double variance_distinct = 0;  ///< sample variance of the same
  double mean_busiest_rank_tokens = 0;    ///< token-expert assignments on the busiest rank
  double mean_busiest_rank_experts = 0;   ///< distinct experts on the busiest rank
};

/// Seeded Monte-Carlo routing: `trials` layers, each with `token_count` tokens
/// that pick experts with inclusion probabilities q_e = min(1, k p_e) by
/// systematic sampling (so each token picks k distinct experts when no q_e is
/// clipped, and the closed forms above are exact expectations). Experts are
/// placed on `ranks` ranks in contiguous blocks (expert parallelism).
/// Throws std::invalid_argument on bad input.
inline routing_sample simulate_routing(const std::vector<double>& popularity, int experts_per_token,
                                       int token_count, int trials, std::uint64_t seed,
                                       int ranks = 1) {
  if (popularity.size() > 1000000) detail::fail("popularity size", "<= 1e6", double(popularity.size()));
  const int e = static_cast<int>(popularity.size());
  if (e == 0) detail::fail("popularity size", "> 0", 0);
  detail::require_in_open_closed("experts_per_token", experts_per_token, 0, e);
  detail::require_in("tokens", token_count, 0, 1e7);
  detail::require_in("trials", trials, 1, 1e7);
  detail::require_in("ranks", ranks, 1, e);
  // Work grows with trials x (tokens x k + E): bounded so one call stays
  // well under a second.
  const double work = double(trials) * (double(token_count) * experts_per_token + e);
  if (work > 1e8) {
    detail::fail("trials x (tokens x experts_per_token + experts)", "<= 1e8", work);
  }
  std::vector<double> q(static_cast<std::size_t>(e));
  for (int i = 0; i < e; ++i) {
    q[static_cast<std::size_t>(i)] = std::fmin(1.0, experts_per_token * popularity[static_cast<std::size_t>(i)]);
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<int> order(static_cast<std::size_t>(e));
  std::vector<char> touched(static_cast<std::size_t>(e));
  std::vector<double> rank_tokens(static_cast<std::size_t>(ranks));
  std::vector<double> rank_experts(static_cast<std::size_t>(ranks));
  const auto rank_of = [&](int expert) { return static_cast<std::size_t>(static_cast<long long>(expert) * ranks / e); };
  double sum = 0, sum2 = 0, busy_tokens = 0, busy_experts = 0;
  for (int t = 0; t < trials; ++t) {
    std::fill(touched.begin(), touched.end(), 0);
    std::fill(rank_tokens.begin(), rank_tokens.end(), 0.0);
    for (int b = 0; b < token_count; ++b) {
      // Systematic sampling over a random order: expert i is picked when the
      // grid u, u+1, u+2, ... falls in its slice of length q_i.
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      double next = unit(rng);
      double cum = 0;
      for (int idx : order) {
        cum += q[static_cast<std::size_t>(idx)];
        if (cum > next) {
          touched[static_cast<std::size_t>(idx)] = 1;
          rank_tokens[rank_of(idx)] += 1;
          next += 1.0;
        }
      }
    }
    std::fill(rank_experts.begin(), rank_experts.end(), 0.0);
    double d = 0;
    for (int i = 0; i < e; ++i) {
      if (touched[static_cast<std::size_t>(i)] != 0) {
        d += 1;
        rank_experts[rank_of(i)] += 1;
      }
    }
    sum += d;
    sum2 += d * d;
    busy_tokens += *std::max_element(rank_tokens.begin(), rank_tokens.end());
    busy_experts += *std::max_element(rank_experts.begin(), rank_experts.end());
  }
  routing_sample r;
  r.mean_distinct = sum / trials;
  r.variance_distinct = trials > 1 ? (sum2 - sum * sum / trials) / (trials - 1) : 0.0;
  r.mean_busiest_rank_tokens = busy_tokens / trials;
  r.mean_busiest_rank_experts = busy_experts / trials;
  return r;
}

/// Uniform popularity over E experts.
inline std::vector<double> uniform_popularity(int num_experts) {
  detail::require_positive("num_experts", num_experts);
  detail::require_at_most("num_experts", num_experts, 1e6);
  return std::vector<double>(static_cast<std::size_t>(num_experts), 1.0 / num_experts);
}

/// What one MoE layer of a step costs each rank under expert parallelism over
/// `ranks` ranks (experts in contiguous blocks of E/ranks), in expectation.
struct expert_parallel_load {
  double ranks = 1;
  double tokens_per_rank = 0;     ///< mean token-expert assignments per rank
  double busiest_rank_tokens = 0; ///< expected on the busiest rank
  double experts_per_rank = 0;    ///< mean distinct experts touched per rank
  double busiest_rank_experts = 0;
  /// busiest / mean token load: the step waits for the busiest rank.
  [[nodiscard]] double token_imbalance() const {
    return tokens_per_rank > 0 ? busiest_rank_tokens / tokens_per_rank : 1.0;
  }
  [[nodiscard]] double expert_imbalance() const {
    return experts_per_rank > 0 ? busiest_rank_experts / experts_per_rank : 1.0;
  }
};

namespace detail {

// expert_parallel's checks, and what its two forms start from: `out` with
// its ranks, and (returned) the busiest rank's spread, sqrt(2 ln ranks)
// standard deviations above the mean.
inline double expert_parallel_start(expert_parallel_load& out, int experts, int experts_per_token, double token_count,
                                    int ranks) {
  require_in_open_closed("experts_per_token", experts_per_token, 0, experts);
  require_non_negative("tokens", token_count);
  require_in("ranks", ranks, 1, experts);
  out.ranks = ranks;
  return ranks > 1 ? std::sqrt(2.0 * std::log(double(ranks))) : 0.0;
}

}  // namespace detail

/// Expected per-rank loads for `token_count` tokens. Each rank's mean comes
/// from its experts' q_e; the busiest rank adds the fluctuation of the largest
/// of `ranks` loads, sigma * sqrt(2 ln ranks) (Gaussian extreme-value
/// approximation, checked against simulate_routing in the tests).
inline expert_parallel_load expert_parallel(const std::vector<double>& popularity, int experts_per_token,
                                            double token_count, int ranks) {
  if (popularity.size() > 1000000) detail::fail("popularity size", "<= 1e6", double(popularity.size()));
  const int e = static_cast<int>(popularity.size());
  if (e == 0) detail::fail("popularity size", "> 0", 0);
  expert_parallel_load out;
  const double spread = detail::expert_parallel_start(out, e, experts_per_token, token_count, ranks);
  double tok_sum = 0, exp_sum = 0;
  for (int r = 0; r < ranks; ++r) {
    double tok_mean = 0, tok_var = 0, exp_mean = 0, exp_var = 0;
    const int lo = static_cast<int>(static_cast<long long>(r) * e / ranks);
    const int hi = static_cast<int>(static_cast<long long>(r + 1) * e / ranks);
    for (int i = lo; i < hi; ++i) {
      const double q = std::fmin(1.0, experts_per_token * popularity[static_cast<std::size_t>(i)]);
      const double miss = std::pow(1.0 - q, token_count);
      tok_mean += token_count * q;
      tok_var += token_count * q * (1 - q);
      exp_mean += 1 - miss;
      exp_var += miss * (1 - miss);
    }
    tok_sum += tok_mean;
    exp_sum += exp_mean;
    out.busiest_rank_tokens = std::max(out.busiest_rank_tokens, tok_mean + spread * std::sqrt(tok_var));
    // A rank touches at most the experts it holds.
    out.busiest_rank_experts =
        std::max(out.busiest_rank_experts, std::fmin(exp_mean + spread * std::sqrt(exp_var), double(hi - lo)));
  }
  out.tokens_per_rank = tok_sum / ranks;
  out.experts_per_rank = exp_sum / ranks;
  return out;
}

/// expert_parallel under uniform popularity (the router as the load model
/// assumes it), in closed form: every expert is missed by a step's tokens
/// with the same (1 - k/E)^tokens, so a rank's sums are its expert count
/// times one expert's terms and only the two slice sizes (floor and ceil of
/// E / ranks) need their busiest-rank figures. One pow per call, where the
/// general form takes one per expert (a decode step of a 128-expert model
/// under EP). Throws as expert_parallel.
inline expert_parallel_load expert_parallel_uniform(int num_experts, int experts_per_token, double token_count,
                                                    int ranks) {
  detail::require_positive("num_experts", num_experts);
  detail::require_at_most("num_experts", num_experts, 1e6);
  const int e = num_experts;
  expert_parallel_load out;
  const double spread = detail::expert_parallel_start(out, e, experts_per_token, token_count, ranks);
  const double q = std::fmin(1.0, experts_per_token * (1.0 / e));
  const double miss = std::pow(1.0 - q, token_count);
  const auto busiest = [&](int held) {
    const double g = held;
    out.busiest_rank_tokens =
        std::max(out.busiest_rank_tokens, g * token_count * q + spread * std::sqrt(g * token_count * q * (1 - q)));
    out.busiest_rank_experts =
        std::max(out.busiest_rank_experts, std::fmin(g * (1 - miss) + spread * std::sqrt(g * miss * (1 - miss)), g));
  };
  // Contiguous slices [r E / R, (r + 1) E / R) hold floor(E / R) or ceil(E / R) experts.
  busiest(e / ranks);
  if (e % ranks != 0) busiest(e / ranks + 1);
  out.tokens_per_rank = e * token_count * q / ranks;
  out.experts_per_rank = e * (1 - miss) / ranks;
  return out;
}

/// Bytes one MoE layer moves between ranks per step: every token-expert
/// assignment whose expert lives on another rank sends the hidden state there
/// (dispatch) and back (combine): 2 * tokens * k * (ranks - 1)/ranks * d * b/8.
inline double all_to_all_bytes(double token_count, int experts_per_token, int ranks, int hidden_size,
                               double bytes_per_element) {
  detail::require_in("ranks", ranks, 1, 1e6);
  return 2.0 * token_count * experts_per_token * (ranks - 1.0) / ranks * hidden_size * bytes_per_element;
}

}  // namespace llmroof
