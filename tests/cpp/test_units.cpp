#include <doctest/doctest.h>

#include "llmroof/units/units.hpp"

using namespace llmroof;
using namespace llmroof::literals;

TEST_CASE("decimal bandwidth and binary capacity are explicit") {
  // 936 GB/s = 936e9 B/s; 24 GiB = 24 x 2^30 = 25,769,803,776 B.
  CHECK((936_GBps).value() == doctest::Approx(936e9));
  CHECK((24_GiB).value() == doctest::Approx(25769803776.0));
  CHECK(in_GB(24_GiB) == doctest::Approx(25.769803776));
  CHECK(in_GiB(80_GiB) == doctest::Approx(80.0));
}

TEST_CASE("time is bytes over bandwidth") {
  // 23.6 GB read at 1792 GB/s: 23.6 / 1792 = 13.17 ms.
  const seconds t = 23.6_GB / 1792_GBps;
  CHECK(t.value() == doctest::Approx(0.013169642857).epsilon(1e-9));
  // and tokens/s is tokens over time: 1 / 13.17 ms = 75.93 t/s.
  const tokens_per_second r = 1_tok / t;
  CHECK(r.value() == doctest::Approx(75.932203).epsilon(1e-6));
}

TEST_CASE("quantities keep arithmetic within a dimension") {
  bytes b = 1_GiB;
  b += 1_GiB;
  CHECK(b == 2_GiB);
  CHECK((3.0 * 1_KiB).value() == 3072.0);
  CHECK((1_ms + 1_us).value() == doctest::Approx(1.001e-3));
}
