// libFuzzer target: config.json parsing, then counting and KV sizing of what
// it accepted (a file that parses must not crash the model either).
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "llmroof/model/kv_cache.hpp"
#include "llmroof/step/ops.hpp"
#include "llmroof/model/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto m = llmroof::parse_hf_config({reinterpret_cast<const char*>(data), size}, "fuzz.json");
    (void)llmroof::count_parameters(m.arch);
    (void)llmroof::kv_bytes_per_sequence(m.arch, m.pr.kv, 1000, 16);
    (void)llmroof::count_decode(m.arch, m.pr, 2, 100);
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
