// libFuzzer target: GGUF header parsing and model extraction. An accepted
// file must hold what its header declares: every tensor's bytes inside the
// data section, no two tensors sharing bytes, and finite, non-negative
// counts; anything else aborts (the fuzzer reports it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include "llmroof/step/ops.hpp"
#include "llmroof/model/readers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto h = llmroof::parse_gguf({data, size}, "fuzz.gguf");
    if (h.header_bytes > size) std::abort();
    const std::uint64_t data_bytes = size - h.header_bytes;  // the aligned start is later still
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    double total = 0;
    for (const auto& t : h.tensors) {
      if (!std::isfinite(t.bytes) || t.bytes < 0 || t.offset > data_bytes || t.bytes > double(data_bytes - t.offset)) std::abort();
      if (t.bytes > 0) spans.emplace_back(t.offset, t.offset + static_cast<std::uint64_t>(t.bytes));
      total += t.bytes;
    }
    if (total > double(size)) std::abort();
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) {
      if (spans[i].first < spans[i - 1].second) std::abort();
    }
    const auto m = llmroof::model_from_gguf(h, "fuzz.gguf");
    if (m.tensors) {
      const double b = m.tensors->total_bytes();
      if (!std::isfinite(b) || b < 0 || b > double(size)) std::abort();
    }
  } catch (const std::invalid_argument&) {
    // Rejections are the expected outcome for malformed input.
  }
  return 0;
}
