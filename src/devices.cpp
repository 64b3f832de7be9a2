// The built-in device catalog (rows generated from data/accelerators*.csv).
#include <string>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/device.hpp"

namespace llmroof {

namespace {

struct device_row {
  const char* id;
  const char* name;
  const char* vendor;
  const char* family;
  device_class klass;
  const char* memory_type;
  double memory_marketed;  // "80" for an 80 GB part: read as GiB (see DESIGN.md)
  double bandwidth_gbs;
  double fp32_tflops;
  double bf16_tflops;
  double fp8_tflops;
  double int8_tops;
  double fp4_tflops;
  double tdp_w;
  const char* interconnect;
  double link_gbs;
  const char* source;
};

// clang-format off
const device_row rows[] = {
#include "catalog_devices.inc"
};
// clang-format on

std::vector<device> build() {
  std::vector<device> out;
  out.reserve(std::size(rows));
  for (const auto& r : rows) {
    device d;
    d.id = r.id;
    d.name = r.name;
    d.vendor = r.vendor;
    d.family = r.family;
    d.klass = r.klass;
    d.memory_type = r.memory_type;
    d.memory = make_bytes(r.memory_marketed * gibi);
    d.bandwidth = make_bytes_per_second(r.bandwidth_gbs * giga);
    d.peaks[static_cast<std::size_t>(math_format::fp32)] = make_flops_per_second(r.fp32_tflops * tera);
    d.peaks[static_cast<std::size_t>(math_format::bf16)] = make_flops_per_second(r.bf16_tflops * tera);
    d.peaks[static_cast<std::size_t>(math_format::fp8)] = make_flops_per_second(r.fp8_tflops * tera);
    d.peaks[static_cast<std::size_t>(math_format::int8)] = make_flops_per_second(r.int8_tops * tera);
    d.peaks[static_cast<std::size_t>(math_format::fp4)] = make_flops_per_second(r.fp4_tflops * tera);
    d.interconnect = r.interconnect;
    d.link_bandwidth = make_bytes_per_second(r.link_gbs * giga);
    d.tdp_w = r.tdp_w;
    d.source = r.source;
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

const std::vector<device>& devices() {
  static const std::vector<device> all = build();
  return all;
}

const device& find_device(std::string_view id) {
  const std::string key = detail::to_lower(id);
  const auto& all = devices();
  for (const auto& d : all) {
    if (d.id == key) return d;
  }
  std::vector<std::string> ids;
  ids.reserve(all.size());
  for (const auto& d : all) ids.push_back(d.id);
  detail::fail_unknown("device", id, ids);
}

void validate(const device& d) {
  detail::require_positive("device.memory", d.memory.value());
  detail::require_positive("device.bandwidth", d.bandwidth.value());
  for (const auto& p : d.peaks) detail::require_non_negative("device.peak", p.value());
  if (d.peak(math_format::bf16).value() <= 0) {
    detail::fail("device.peak(bf16 or fp32)", "> 0", d.peak(math_format::bf16).value());
  }
}

}  // namespace llmroof
