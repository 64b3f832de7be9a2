#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>

#include "catalog_checks.hpp"
#include "llmroof/hardware/device.hpp"

using namespace llmroof;

TEST_CASE("catalog holds at least 40 devices with unique lowercase hyphenated ids") {
  CHECK(devices().size() >= 40);
  check_catalog_entries(devices(), [](const device& d) {
    CHECK(d.memory.value() > 0);
    CHECK(d.bandwidth.value() > 0);
    CHECK(d.peak(math_format::bf16).value() > 0);
    CHECK_NOTHROW(validate(d));
  });
}

TEST_CASE("the devices the issue names are there") {
  for (const char* id :
       {"a100-40gb-pcie", "a100-80gb-sxm", "h100-pcie", "h100-sxm", "h100-nvl", "h200", "h20", "b200",
        "gb200", "l4", "l40s", "a10", "a40", "v100-sxm2-32gb", "p40", "rtx-a6000", "rtx-6000-ada",
        "rtx-4000-ada", "rtx-5000-ada", "rtx-pro-6000-blackwell", "rtx-3060", "rtx-3090", "rtx-3090-ti",
        "rtx-4090", "rtx-5090", "dgx-spark", "mi250x", "mi300x", "mi325x", "mi355x", "rx-7900-xtx",
        "ryzen-ai-max-395", "m1-max-32c", "m2-ultra-76c", "m3-max-40c", "m4-max-40c", "m4-pro-20c"}) {
    CAPTURE(id);
    CHECK_NOTHROW((void)find_device(id));
  }
}

TEST_CASE("seed devices carry the table's numbers") {
  const device& pro = find_device("rtx-pro-6000-blackwell");
  CHECK(in_GiB(pro.memory) == doctest::Approx(96));
  CHECK(in_GBps(pro.bandwidth) == doctest::Approx(1792));
  // bf16 derived from fp4 dense: 2000 / 4 = 500 TFLOPS.
  CHECK(in_TFLOPS(pro.peak(math_format::bf16)) == doctest::Approx(500));
  const device& r3090 = find_device("RTX-3090");
  CHECK(in_GBps(r3090.bandwidth) == doctest::Approx(936));
  CHECK(in_TFLOPS(r3090.peak(math_format::bf16)) == doctest::Approx(71));  // FP32-accumulate rate
}

TEST_CASE("Blackwell Ultra and MI355X: FP4 on B300, GB300, MI355X's own fabric") {
  // B300 (HGX): 1.5 x B200's 9000 dense FP4 = 13,500 TFLOPS (data/accelerators_derived.csv);
  // without it NVFP4 fell to the bf16 roof, 2250.
  const device& b300 = find_device("b300");
  CHECK(b300.effective_math(math_format::fp4) == math_format::fp4);
  CHECK(in_TFLOPS(b300.peak(math_format::fp4)) == doctest::Approx(13500));
  CHECK(b300.tdp_w == doctest::Approx(1100));
  // GB300 per GPU: 288 GB at 8 TB/s, bf16 2500, fp8 5000, fp4 15000 dense.
  const device& gb300 = find_device("GB300");
  CHECK(gb300.id == "gb300");
  CHECK(in_GBps(gb300.bandwidth) == doctest::Approx(8000));
  CHECK(in_TFLOPS(gb300.peak(math_format::fp4)) == doctest::Approx(15000));
  CHECK(in_TFLOPS(gb300.peak(math_format::fp8)) == doctest::Approx(5000));
  // MI355X: 7 Infinity Fabric links x 153.6 GB/s = 1075.2 GB/s both ways, so
  // 8 of them all-reduce at 537.6 GB/s each way, not over PCIe.
  const device& mi355x = find_device("mi355x");
  const link_spec l = intra_node_link(mi355x, 8);
  CHECK(in_GBps(l.bandwidth) == doctest::Approx(537.6));
  CHECK(in_GBps(intra_node_link(find_device("mi300x"), 8).bandwidth) == doctest::Approx(448));  // 896 / 2
}

TEST_CASE("math formats without units fall back to bf16, then fp32") {
  const device& a100 = find_device("a100-80gb-sxm");
  CHECK(a100.effective_math(math_format::fp8) == math_format::bf16);  // Ampere: no fp8
  CHECK(in_TFLOPS(a100.peak(math_format::fp8)) == doctest::Approx(312));
  const device& h100 = find_device("h100-sxm");
  CHECK(in_TFLOPS(h100.peak(math_format::fp8)) == doctest::Approx(1979));
  const device& m2 = find_device("m2-ultra-76c");
  CHECK(in_TFLOPS(m2.peak(math_format::bf16)) == doctest::Approx(27.2));  // fp16 at fp32 rate
}

TEST_CASE("unknown device lists the closest ids") {
  CHECK_THROWS_WITH_AS(find_device("rtx-3090x"), "unknown device 'rtx-3090x'; closest: rtx-3090, rtx-3090-ti, rtx-3060",
                       std::invalid_argument);
}

TEST_CASE("a user-built device is validated field by field") {
  device d = find_device("h100-sxm");
  d.bandwidth = make_bytes_per_second(0);
  CHECK_THROWS_WITH_AS(validate(d), "device.bandwidth must be > 0 (got 0)", std::invalid_argument);
  d = find_device("h100-sxm");
  d.memory = make_bytes(std::nan(""));
  CHECK_THROWS_WITH_AS(validate(d), "device.memory must be > 0 (got nan)", std::invalid_argument);
}
