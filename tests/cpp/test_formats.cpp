#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "llmroof/units/formats.hpp"

using namespace llmroof;

TEST_CASE("block formats have the bits of their layout") {
  // q4_0: 32 x 4 bit + fp16 scale = 16 + 2 = 18 B per 32 -> 18 * 8 / 32 = 4.5.
  CHECK(find_format("q4_0").bits == doctest::Approx(18.0 * 8 / 32));
  // q8_0: 32 B + 2 B per 32 -> 34 * 8 / 32 = 8.5.
  CHECK(find_format("q8_0").bits == doctest::Approx(34.0 * 8 / 32));
  // q4_K: 144 B per 256 -> 144 * 8 / 256 = 4.5; q6_K: 210 * 8 / 256 = 6.5625.
  CHECK(find_format("q4_k").bits == doctest::Approx(144.0 * 8 / 256));
  CHECK(find_format("q6_k").bits == doctest::Approx(210.0 * 8 / 256));
  // q2_K 84 B, q3_K 110 B, q5_K 176 B per 256.
  CHECK(find_format("q2_k").bits == doctest::Approx(84.0 * 8 / 256));
  CHECK(find_format("q3_k").bits == doctest::Approx(110.0 * 8 / 256));
  CHECK(find_format("q5_k").bits == doctest::Approx(176.0 * 8 / 256));
  // MXFP4: 4 + 8/32 = 4.25; NVFP4: 4 + 8/16 = 4.5.
  CHECK(find_format("mxfp4").bits == doctest::Approx(4.25));
  CHECK(find_format("nvfp4").bits == doctest::Approx(4.5));
  // AWQ group 128 with fp16 scale and 4-bit zero: 4 + 16/128 + 4/128 = 4.15625.
  CHECK(find_format("awq-int4").bits == doctest::Approx(4.15625));
  CHECK(find_format("gptq-int4").bits == doctest::Approx(4.125));
}

TEST_CASE("math format is separate from storage") {
  CHECK(find_format("awq-int4").math == math_format::bf16);  // weight-only: dequantize
  CHECK(find_format("fp8").math == math_format::fp8);        // W8A8 on fp8 cores
  CHECK(find_format("nvfp4").math == math_format::fp4);
  CHECK(find_format("q4_k_m").math == math_format::bf16);
  CHECK(find_format("q4_k_m").mix);
  CHECK_FALSE(find_format("q4_k").mix);
}

TEST_CASE("lookup is case-insensitive and knows aliases") {
  CHECK(find_format("BF16").name == "bf16");
  CHECK(find_format("Q4_K_M").name == "q4_k_m");
  CHECK(find_format("awq").name == "awq-int4");
  CHECK(find_format("float16").name == "fp16");
}

TEST_CASE("every format has a positive size, a layout and a source") {
  for (const auto& f : formats()) {
    CAPTURE(std::string(f.name));
    CHECK(f.bits > 0);
    CHECK(f.bits <= 32);
    CHECK_FALSE(f.description.empty());
    CHECK_FALSE(f.source.empty());
    CHECK(find_format(f.name).name == f.name);
  }
}

TEST_CASE("unknown format names the closest valid ones") {
  CHECK_THROWS_WITH_AS(find_format("q4km"), "unknown format 'q4km'; closest: q4_k_m, q4_k, q4_k_s",
                       std::invalid_argument);
}

TEST_CASE("a shorthand for several formats says which one it reads as") {
  CHECK(shorthand_note("q4") == "q4 reads as q4_0 (also: q4_1, q4_k, q4_k_m, q4_k_s, iq4_xs, iq4_nl; name one to plan it)");
  CHECK(shorthand_note("INT4") == "INT4 reads as awq-int4 (also: gptq-int4, int4-g32; name one to plan it)");
  CHECK(shorthand_note("fp4") == "fp4 reads as nvfp4 (also: mxfp4; name one to plan it)");
  // A format's own name, and an alias of one format, need no note.
  for (const char* name : {"q4_k_m", "awq", "bf16", "bfloat16", "q8", "nvfp4"}) {
    CAPTURE(name);
    CHECK(shorthand_note(name).empty());
  }
  // Every format a note names exists.
  for (const char* name : {"q4_1", "q4_k", "q4_k_m", "q4_k_s", "iq4_xs", "iq4_nl", "gptq-int4", "int4-g32", "mxfp4"}) {
    CHECK_NOTHROW(find_format(name));
  }
}
