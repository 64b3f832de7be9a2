// libFuzzer target: safetensors header parsing and the component inventory.
// An accepted file must hold what its header declares: tensors inside the
// data, no two sharing bytes, bytes = elements x dtype size, and an
// inventory no larger than the file; anything else aborts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "llmroof/step/ops.hpp"
#include "llmroof/model/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto tensors = llmroof::parse_safetensors({data, size}, "fuzz.safetensors");
    double total = 0;
    for (const auto& t : tensors) {
      if (!std::isfinite(t.bytes) || t.bytes < 0) std::abort();
      total += t.bytes;
    }
    if (total > double(size)) std::abort();  // overlapping or aliased offsets would exceed it
    const auto inv = llmroof::inventory(tensors);
    if (inv.total_bytes() > double(size) || inv.tensors != tensors.size()) std::abort();
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
