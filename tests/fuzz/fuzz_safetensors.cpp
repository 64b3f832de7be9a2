// libFuzzer target: safetensors header parsing and the component inventory.
#include <cstdint>
#include <stdexcept>

#include "llmroof/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)llmroof::inventory(llmroof::parse_safetensors({data, size}, "fuzz.safetensors"));
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
