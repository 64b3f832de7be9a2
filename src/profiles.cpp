// Default efficiency profiles per device class. They are starting points for
// uncalibrated devices; calibrate() (issue 7) replaces them with fitted ones.
#include "llmroof/roofline.hpp"

namespace llmroof {

efficiency_profile default_profile(const device& d) {
  efficiency_profile e;
  e.name = std::string("default-") + std::string(to_string(d.klass));
  // eta_m 0.66: the seed scenario of DESIGN.md (Devstral-Small-2 FP8 on an
  // RTX Pro 6000: ~50 t/s measured against a 76 t/s bound at an empty context,
  // 20-30 t/s against 40 t/s at 128k) is explained by one fraction near 0.65;
  // ACCELERATORS.md reports 70-90% of peak bandwidth in microbenchmarks, and
  // a whole decode step reaches less.
  e.memory = 0.66;
  // per-step 0.3 ms: scheduling, sampling and launch gaps of one decode step
  // (engineering estimate; fitted per engine in calibrate.hpp).
  e.per_step = make_seconds(0.3e-3);
  e.compute_half_rows = 64;
  // Attention kernels: FlashAttention-2 reaches 50-73% of A100 peak in the
  // forward pass (Dao 2023, fig. 4); 0.5 is the conservative end.
  e.attention = 0.5;
  switch (d.klass) {
    case device_class::datacenter:
      // Dense BF16 GEMM efficiency: A100 87%, H100 80%, MI300X 51% (stas00
      // ml-engineering MAMF table, quoted in ACCELERATORS.md); 0.75 for NVIDIA,
      // AMD parts lower.
      e.compute = d.vendor == "AMD" ? 0.5 : 0.75;
      break;
    case device_class::workstation:
    case device_class::consumer:
      e.compute = d.vendor == "AMD" ? 0.5 : 0.7;
      break;
    case device_class::unified:
      // Apple/Strix Halo GPUs have no or small matrix units and share memory
      // with the CPU; llama.cpp Metal prefill reaches about half of peak.
      e.compute = 0.5;
      e.memory = 0.6;
      break;
    case device_class::cpu:
      e.compute = 0.4;
      e.memory = 0.6;
      break;
  }
  e.source = "class defaults of llmroof 0.1 (see src/profiles.cpp for each value's source)";
  return e;
}

}  // namespace llmroof
