// libFuzzer target: GGUF header parsing and model extraction.
#include <cstdint>
#include <stdexcept>

#include "llmroof/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto h = llmroof::parse_gguf({data, size}, "fuzz.gguf");
    (void)llmroof::model_from_gguf(h, "fuzz.gguf");
  } catch (const std::invalid_argument&) {
    // Rejections are the expected outcome for malformed input.
  }
  return 0;
}
