#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "llmroof/moe.hpp"

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
