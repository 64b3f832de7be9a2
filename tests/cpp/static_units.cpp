// Compile-time checks: compiling this file is the test (mp-units style).
#include "llmroof/llmroof.hpp"

namespace {

using namespace llmroof;
using namespace llmroof::literals;

// Prefixes: decimal for rates, binary for capacities.
static_assert(1_GB == make_bytes(1e9));
static_assert(24_GiB == make_bytes(24.0 * 1073741824.0));
static_assert(936_GBps == make_bytes_per_second(936e9));
static_assert(in_GiB(80_GiB) == 80.0);

// Dimensional algebra: bytes / (bytes/s) = s; FLOP / (FLOP/s) = s.
static_assert((1_GB / 1_GBps) == 1_s);
static_assert((989.5_TFLOPS / 3350_GBps).value() > 295.0 && (989.5_TFLOPS / 3350_GBps).value() < 296.0);
static_assert(std::is_same_v<decltype(1_GB / 1_GBps), seconds>);
static_assert(std::is_same_v<decltype(1_TFLOP / 1_GB), flops_per_byte>);
static_assert(std::is_same_v<decltype(1_tok / 1_s), tokens_per_second>);
static_assert(!std::is_convertible_v<bytes, seconds>);
static_assert(!std::is_convertible_v<flops_per_second, tokens_per_second>);
static_assert(!std::is_convertible_v<double, bytes>);

// Formats: block layouts, bits per element (scales included).
static_assert(detail::format_table[14].name == "q4_0" && detail::format_table[14].bits == 4.5);
static_assert(detail::format_table[11].name == "mxfp4" && detail::format_table[11].bits == 4.25);
static_assert(detail::format_table[12].name == "nvfp4" && detail::format_table[12].bits == 4.5);
static_assert(detail::format_table[1].bytes_of(1e9) == 2_GB);

// Attention pairs: P(P+1)/2 for a fresh prompt, c + 1 for a decode step.
static_assert(detail::attention_pairs(4, 0, 0) == 10);      // 1+2+3+4
static_assert(detail::attention_pairs(1, 1000, 0) == 1001);  // c + 1
static_assert(detail::attention_pairs(4, 0, 3) == 9);        // 1+2+3+3 with window 3
static_assert(detail::attention_pairs(2, 5, 3) == 6);        // 3+3: window full

// Paged engines round each sequence up to whole blocks.
static_assert(round_to_blocks(1000, 16) == 1008);  // 63 blocks of 16
static_assert(round_to_blocks(1024, 16) == 1024);
static_assert(round_to_blocks(7, 1) == 7);

// Parameter counts are constexpr: Llama-3.1-8B, worked by hand:
// embedding and lm_head 128,256 x 4,096 = 525,336,576 each;
// per layer q 4096^2 + k,v 2 x 4096 x 1024 + o 4096^2 = 41,943,040,
// FFN 3 x 4096 x 14336 = 176,160,768, norms 2 x 4096 = 8,192 -> 218,112,000;
// 32 layers = 6,979,584,000; + final norm 4,096 + 2 x 525,336,576
// = 8,030,261,248.
constexpr architecture llama_3_1_8b() {
  architecture a;
  a.num_layers = 32;
  a.hidden_size = 4096;
  a.num_heads = 32;
  a.num_kv_heads = 8;
  a.head_dim = 128;
  a.ffn_size = 14336;
  a.vocab_size = 128256;
  return a;
}
static_assert(count_parameters(llama_3_1_8b()).total() == 8030261248.0);
// bf16 KV: 2 x 8 x 128 x 2 B x 32 layers = 131,072 B per token.
static_assert(kv_bytes_per_token(llama_3_1_8b(), detail::format_table[1]) == 131072_B);

// Enum names: one table per enum, indexed by the enumerator; a name parses
// back to its enumerator; a value outside the table reads "?".
static_assert(to_string(device_class::cpu) == "cpu" && to_string(math_format::int8) == "int8");
static_assert(to_string(kernel_path::int8_dot) == "int8_dot" && to_string(metric::e2e_latency_s) == "e2e_latency_s");
static_assert(detail::enum_from_name<device_class>("unified", device_class_names) == device_class::unified);
static_assert(!detail::enum_from_name<layer_kind>("Global", layer_kind_names).has_value());
static_assert(to_string(static_cast<bottleneck>(7)) == "?");
template <class E, std::size_t N>
constexpr bool round_trips(const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i) {
    const auto e = detail::enum_from_name<E>(names[i], names);
    if (!e || static_cast<std::size_t>(*e) != i) return false;
  }
  return true;
}
static_assert(round_trips<math_format>(math_format_names) && round_trips<memory_kind>(memory_kind_names) &&
              round_trips<host_overlap>(host_overlap_names) && round_trips<phase>(phase_names));

}  // namespace
