// One device's kernel-family fit for one engine class, as a row of
// src/engine/kernel_fits.inc (written by scripts/fit_kernels.py from the kernel
// database of data release 4): what each family's physics sets on an
// efficiency profile.
#pragma once

#include <string_view>

namespace llmroof::detail {

struct kernel_fit_row {
  const char* device;  // catalog id
  const char* engine;  // kernel class key: vllm, sglang, tensorrt-llm
  double compute, compute_sd, compute_half_rows, memory, memory_sd, gemm_fixed, gemm_fixed_sd, low_precision, low_precision_memory;
  double attention, kv_stream, attention_floor, expert_floor, link, link_latency;
  int rows;
  double median_ape;
};

/// Calls visit(value) for each number column of `r` that a device without a
/// fit takes as its class's median (every family parameter; not the counts).
template <class Row, class Visit>
void for_each_parameter(Row& r, Visit&& visit) {
  for (auto* v : {&r.compute, &r.compute_sd, &r.compute_half_rows, &r.memory, &r.memory_sd, &r.gemm_fixed,
                  &r.gemm_fixed_sd, &r.low_precision, &r.low_precision_memory, &r.attention, &r.kv_stream, &r.attention_floor,
                  &r.expert_floor, &r.link, &r.link_latency}) {
    visit(*v);
  }
}

}  // namespace llmroof::detail
