// Accelerators: memory capacity and bandwidth, peak dense compute per math
// format, interconnect, and where each number came from.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/detail/enum_names.hpp"
#include "llmroof/units/formats.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// Market class; selects the default efficiency profile.
enum class device_class { datacenter, workstation, consumer, unified, cpu };

inline constexpr std::array<std::string_view, 5> device_class_names{"datacenter", "workstation", "consumer", "unified",
                                                                      "cpu"};

constexpr std::string_view to_string(device_class c) { return detail::enum_name(c, device_class_names); }

/// Memory technology, from the memory type: decode efficiency follows it
/// more than the market class (an L40S behaves like a GDDR card).
enum class memory_kind : std::uint8_t { hbm, gddr, unified, ddr };

inline constexpr std::array<std::string_view, 4> memory_kind_names{"hbm", "gddr", "unified", "ddr"};

constexpr std::string_view to_string(memory_kind k) { return detail::enum_name(k, memory_kind_names); }

/// One accelerator. Peaks are dense (no 2:4 sparsity) vendor figures; a peak
/// of zero means "not published": the roof then falls back (see `peak`).
struct device {
  std::string id;            ///< lowercase, hyphenated: `rtx-pro-6000-blackwell`
  std::string name;          ///< vendor SKU name
  std::string vendor;
  std::string family;
  device_class klass = device_class::datacenter;
  std::string memory_type;   ///< HBM3, GDDR7, LPDDR5X (unified) ...
  bytes memory = make_bytes(0);                      ///< capacity, binary (an "80 GB" part = 80 GiB)
  bytes_per_second bandwidth = make_bytes_per_second(0);  ///< peak DRAM bandwidth, decimal
  std::array<flops_per_second, 5> peaks{};           ///< indexed by math_format
  std::string interconnect;  ///< main device-to-device link
  bytes_per_second link_bandwidth = make_bytes_per_second(0);  ///< bidirectional aggregate
  double tdp_w = 0;          ///< board power, W (0 = unknown)
  std::vector<std::string> aliases;  ///< other spellings (code names, SKU numbers); the
                                     ///< resolver also matches the normalised name
  std::string source;        ///< URLs and documents, then "| notes"

  [[nodiscard]] memory_kind memory_kind_of() const {
    if (klass == device_class::cpu) return memory_kind::ddr;
    if (memory_type.find("HBM") != std::string::npos) return memory_kind::hbm;
    if (memory_type.find("GDDR") != std::string::npos) return memory_kind::gddr;
    return memory_kind::unified;
  }

  /// Peak dense FLOP/s in math format m, 0 if unpublished.
  [[nodiscard]] flops_per_second published_peak(math_format m) const {
    return peaks[static_cast<std::size_t>(m)];
  }

  /// The math format that really runs when kernels ask for m: a device
  /// without fp4/fp8/int8 units runs kernels that dequantize to bf16
  /// (Marlin); a device without 16-bit matrix units runs fp32.
  [[nodiscard]] math_format effective_math(math_format m) const {
    if (published_peak(m).value() > 0) return m;
    if (m != math_format::fp32 && published_peak(math_format::bf16).value() > 0) {
      return math_format::bf16;
    }
    return math_format::fp32;
  }

  /// How much faster 16-bit tensor math runs when it accumulates in FP16: 2
  /// on NVIDIA GeForce cards, whose listed 16-bit rate (the catalog's) is the
  /// FP32-accumulate one at half speed (NVIDIA Ampere GA102, Ada AD102 and
  /// Blackwell GB202 whitepapers: "FP16 Tensor TFLOPS with FP16 Accumulate" is
  /// twice the FP32-accumulate figure); 1 on every other part.
  [[nodiscard]] double fp16_accumulate_speedup() const {
    return klass == device_class::consumer && vendor == "NVIDIA" ? 2.0 : 1.0;
  }

  /// Thread instructions an NVIDIA GPU issues per second: 4 schedulers x 32
  /// lanes per SM per clock, from the FP32 peak (2 FLOP per FMA lane per
  /// clock): 128 FP32 lanes per SM since GA10x, Ada, Hopper and Blackwell;
  /// 64 on Volta, Turing and GA100 (NVIDIA architecture whitepapers), where
  /// the issue rate is twice the FP32 lanes'. 0 off NVIDIA or without an FP32 peak.
  [[nodiscard]] double instruction_rate() const {
    const double fp32 = published_peak(math_format::fp32).value();
    if (vendor != "NVIDIA" || !(fp32 > 0)) return 0;
    const bool half_lanes = family.find("Volta") != std::string::npos || family.find("Turing") != std::string::npos ||
                            family.find("GA100") != std::string::npos;
    return fp32 / 2 * (half_lanes ? 2.0 : 1.0);
  }

  /// Peak dense FLOP/s that applies to kernels in math format m (after the
  /// fallback of `effective_math`).
  [[nodiscard]] flops_per_second peak(math_format m) const {
    return published_peak(effective_math(m));
  }
};

/// What a collective's time needs of a link: bandwidth per direction per
/// device, latency per hop.
struct link_speed {
  bytes_per_second bandwidth = make_bytes_per_second(0);
  seconds latency = make_seconds(0);
};

/// A device-to-device link: bandwidth per direction per device, and the
/// fixed cost of one hop of a collective.
struct link_spec {
  std::string id;                 ///< `nvlink4`, `pcie5`, `ib-ndr`, ...
  std::string name;
  bytes_per_second bandwidth = make_bytes_per_second(0);  ///< per direction, per device
  seconds latency = make_seconds(0);                      ///< per hop
  std::string source;
  [[nodiscard]] link_speed speed() const { return {bandwidth, latency}; }
};

/// Every built-in link kind.
const std::vector<link_spec>& links();

/// Looks a link up by id (case-insensitive); throws listing the closest ids.
const link_spec& find_link(std::string_view id);

/// The link `n` devices of this kind use among themselves in one node: the
/// device's own interconnect (NVLink, Infinity Fabric), or PCIe when it has
/// none or when a 2-way bridge cannot join n > 2 devices.
link_spec intra_node_link(const device& d, int n);

/// intra_node_link's speed without copying its names (every parallel step asks).
link_speed intra_node_speed(const device& d, int n);

/// The link between nodes a plan assumes unless told: InfiniBand NDR, one
/// NIC per GPU (looked up once).
const link_spec& default_inter_node_link();

/// Every built-in device (191, one per row of data/accelerators.csv), in
/// catalog order.
const std::vector<device>& devices();

/// Looks a device up by id or by a vendor spelling: "GeForce RTX 4090 24GB",
/// "H100 80GB HBM3", "M3 Max 40-core", "Radeon RX 7900 XTX", "Core
/// i5-1135G7". Names are normalised (case, punctuation, vendor and brand
/// words; "40-core" = "40c"; "mobile" = "laptop"); a memory size ("24GB") or
/// type ("HBM3") in the name only chooses among variants. Throws
/// std::invalid_argument listing the candidates when the name is ambiguous,
/// the closest ids when nothing matches; every word of the name must match
/// ("h100-sxmx" is refused, not read as an H100 SXM).
const device& find_device(std::string_view name);

/// The catalog device `name` resolves to (find_device), in the memory
/// configuration the name states: a unified-memory row (Apple, Jetson, Strix
/// Halo: the largest configuration) takes a smaller size the name gives
/// ("MacBook Pro M4 Max 48GB": 48 GiB, Apple's GB), named with it. Throws
/// as find_device.
device configured_device(std::string_view name);

/// Ids of the catalog devices `name` matches: one when it resolves, several
/// when it is ambiguous, none when nothing matches. Lenient as a dataset's
/// names need: words no catalog name uses ("Server Edition") are dropped
/// when nothing matches with them.
std::vector<std::string> match_devices(std::string_view name);

/// A device from the inline form `custom:memory=24GiB,bandwidth=936GB/s,
/// bf16=71TF,int8=284TOPS` (keys: memory, bandwidth, fp32, bf16 (or fp16),
/// fp8, int8, fp4, tdp, link, class, vendor, memory_type, name, id). Every
/// number needs its unit; memory and bandwidth and one of fp32/bf16 are
/// required. Rates not given fall back to the bf16 rate, then fp32 (see
/// `device::effective_math`); `source` says which. Throws
/// std::invalid_argument naming the field.
device parse_custom_device(std::string_view spec);

/// A device from JSON text with the fields `llmroof list devices --json`
/// prints for one device (numbers in bytes, B/s, FLOP/s; a string with a unit
/// such as "24GiB" is accepted too). `where` names the file in messages.
device parse_device_json(std::string_view text, std::string_view where);

/// Reads a device JSON file (see `parse_device_json`).
device read_device_json(const std::string& path);

/// The JSON object of one device (the fields `parse_device_json` reads).
std::string device_json(const device& d);

/// Any device string: `custom:...`, a path to a `.json` file, or a catalog
/// id or name (`find_device`).
device device_from_spec(std::string_view spec);

/// Checks a user-built device: positive memory and bandwidth, a positive
/// peak for bf16 or fp32. Throws std::invalid_argument naming the field.
void validate(const device& d);

}  // namespace llmroof
