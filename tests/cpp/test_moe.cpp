#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "llmroof/model/moe.hpp"

using namespace llmroof;

TEST_CASE("uniform routing: hand values for E = 128, k = 8") {
  CHECK(expected_distinct_experts(128, 8, 1) == doctest::Approx(8.0));
  // 128 x (1 - (15/16)^16) = 128 x (1 - 0.356074) = 82.42.
  CHECK(expected_distinct_experts(128, 8, 16) == doctest::Approx(82.4226).epsilon(1e-5));
  // B = 256: 128 x (1 - (15/16)^256) = 128 - 8.9e-6.
  CHECK(expected_distinct_experts(128, 8, 256) == doctest::Approx(128.0).epsilon(1e-6));
  CHECK(expected_distinct_experts(128, 8, 0) == 0.0);
}

TEST_CASE("skewed routing touches fewer experts than uniform at the same batch") {
  for (double alpha : {0.5, 1.0, 1.5}) {
    const auto p = zipf_popularity(128, alpha);
    for (double b : {2.0, 8.0, 32.0, 128.0}) {
      CAPTURE(alpha);
      CAPTURE(b);
      CHECK(expected_distinct_experts(p, 8, b) < expected_distinct_experts(128, 8, b));
    }
  }
  // alpha 0 is uniform.
  CHECK(expected_distinct_experts(zipf_popularity(128, 0), 8, 16) ==
        doctest::Approx(expected_distinct_experts(128, 8, 16)));
}

TEST_CASE("bad routing input names the field") {
  CHECK_THROWS_WITH_AS(expected_distinct_experts(8, 9, 1), "experts_per_token must be in (0, 8] (got 9)",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(expected_distinct_experts(0, 1, 1), "num_experts must be > 0 (got 0)", std::invalid_argument);
  CHECK_THROWS_WITH_AS(expected_distinct_experts(std::vector<double>{0.5, 0.6}, 1, 1),
                       "popularity sum must be 1 (got 1.1)", std::invalid_argument);
}

TEST_CASE("variance of distinct experts: zero at B = 1, zero once every expert is touched") {
  // B = 1: r1 = 15/16, r2 = (120 x 119)/(128 x 127); 128 r1 (1 - r1) = 7.5 and
  // 128 x 127 x (r2 - r1^2) = -7.5: exactly 8 experts, no spread.
  CHECK(distinct_experts_variance(128, 8, 1) == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(distinct_experts_variance(128, 8, 2000) == doctest::Approx(0.0).epsilon(1e-9));
  CHECK(distinct_experts_variance(128, 8, 16) > 1.0);
}

TEST_CASE("closed forms agree with the seeded Monte-Carlo simulator within 1%") {
  for (int b : {1, 4, 16, 64}) {
    CAPTURE(b);
    const routing_sample s = simulate_routing(uniform_popularity(128), 8, b, 1500, 42);
    CHECK(s.mean_distinct == doctest::Approx(expected_distinct_experts(128, 8, b)).epsilon(0.01));
    const double var = distinct_experts_variance(128, 8, b);
    if (var > 0.5) CHECK(s.variance_distinct == doctest::Approx(var).epsilon(0.10));
  }
  const auto zipf = zipf_popularity(256, 0.8);
  for (int b : {1, 8, 32}) {
    CAPTURE(b);
    const routing_sample s = simulate_routing(zipf, 8, b, 1500, 7);
    CHECK(s.mean_distinct == doctest::Approx(expected_distinct_experts(zipf, 8, b)).epsilon(0.01));
  }
}

TEST_CASE("expert parallelism: busiest rank and all-to-all traffic") {
  const auto p = uniform_popularity(256);
  const expert_parallel_load l = expert_parallel(p, 8, 64, 8);
  // Mean load: 64 tokens x 8 experts / 8 ranks = 64 assignments per rank.
  CHECK(l.tokens_per_rank == doctest::Approx(64.0));
  CHECK(l.token_imbalance() > 1.0);
  const routing_sample s = simulate_routing(p, 8, 64, 1000, 5, 8);
  CHECK(l.busiest_rank_tokens == doctest::Approx(s.mean_busiest_rank_tokens).epsilon(0.10));
  CHECK(l.busiest_rank_experts == doctest::Approx(s.mean_busiest_rank_experts).epsilon(0.10));
  // Skewed routing piles tokens on the rank holding the popular experts.
  CHECK(expert_parallel(zipf_popularity(256, 1.0), 8, 64, 8).token_imbalance() > l.token_imbalance());
  // All-to-all: 2 x 16 tokens x 8 experts x 7/8 remote x 7168 x 2 B = 3,211,264 B per layer.
  CHECK(all_to_all_bytes(16, 8, 8, 7168, 2) == doctest::Approx(3211264.0));
  CHECK(all_to_all_bytes(16, 8, 1, 7168, 2) == 0.0);
}

TEST_CASE("expert parallelism: the busiest rank touches at most the experts it holds") {
  // 256 experts on 8 ranks, 32 each. At 128 tokens a rank misses an expert
  // with p = (1 - 8/256)^128 = 0.0172: mean 32 x 0.9828 = 31.45 touched, sd
  // sqrt(32 x 0.0172 x 0.9828) = 0.735; the Gaussian busiest of 8 adds
  // sqrt(2 ln 8) x 0.735 = 1.50, 32.95 > the 32 the rank holds (the cap was
  // 256/8 + 1 = 33, so the busiest rank read more expert bytes than it stores).
  const auto p = uniform_popularity(256);
  CHECK(expert_parallel(p, 8, 128, 8).busiest_rank_experts == 32.0);
  CHECK(expert_parallel(p, 8, 128, 8).experts_per_rank == doctest::Approx(31.45).epsilon(0.001));
  // Uneven slices: 10 experts on 4 ranks hold 2, 3, 2, 3; every expert touched.
  CHECK(expert_parallel(uniform_popularity(10), 2, 10000, 4).busiest_rank_experts == 3.0);
  for (double tokens : {1.0, 4.0, 16.0, 64.0, 256.0, 4096.0}) {
    CHECK(expert_parallel(zipf_popularity(256, 1.2), 8, tokens, 16).busiest_rank_experts <= 16.0);
  }
}

TEST_CASE("expert parallelism under uniform routing: one pow, the general form's figures") {
  // 128 experts on 8 ranks, 8 per token, one token: q = 8/128 = 1/16; each of a
  // rank's 16 experts is missed with 15/16: mean experts 16 x 1/16 = 1, tokens 1.
  const expert_parallel_load one = expert_parallel_uniform(128, 8, 1, 8);
  CHECK(one.experts_per_rank == doctest::Approx(1.0));
  CHECK(one.tokens_per_rank == doctest::Approx(1.0));
  // Busiest: 1 + sqrt(2 ln 8) x sqrt(16 x 1/16 x 15/16) = 1 + 2.0393 x 0.96825 = 2.9746.
  CHECK(one.busiest_rank_tokens == doctest::Approx(2.9746).epsilon(1e-4));
  CHECK(one.busiest_rank_experts == doctest::Approx(2.9746).epsilon(1e-4));
  for (int experts : {8, 10, 60, 128, 256}) {
    for (int ranks : {1, 2, 3, 4, 7, 8}) {
      if (ranks > experts) continue;
      for (double tokens : {0.0, 1.0, 3.5, 64.0, 4096.0}) {
        CAPTURE(experts);
        CAPTURE(ranks);
        CAPTURE(tokens);
        const expert_parallel_load u = expert_parallel_uniform(experts, 6, tokens, ranks);
        const expert_parallel_load g = expert_parallel(uniform_popularity(experts), 6, tokens, ranks);
        CHECK(u.tokens_per_rank == doctest::Approx(g.tokens_per_rank).epsilon(1e-12));
        CHECK(u.busiest_rank_tokens == doctest::Approx(g.busiest_rank_tokens).epsilon(1e-12));
        CHECK(u.experts_per_rank == doctest::Approx(g.experts_per_rank).epsilon(1e-12));
        CHECK(u.busiest_rank_experts == doctest::Approx(g.busiest_rank_experts).epsilon(1e-12));
      }
    }
  }
  CHECK_THROWS_WITH_AS(expert_parallel_uniform(8, 2, 1, 9), doctest::Contains("ranks"), std::invalid_argument);
}
