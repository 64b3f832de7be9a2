// Interconnects: bandwidth per direction per device and per-hop latency.
#include <cctype>
#include <string>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/hardware/device.hpp"

namespace llmroof {

namespace {

link_spec make(const char* id, const char* name, double gbps_each_way, double latency_us, const char* source) {
  return {id, name, make_bytes_per_second(gbps_each_way * giga), make_seconds(latency_us * 1e-6), source};
}

// Latencies are per hop of a ring collective as NCCL/RCCL see them for small
// messages (order of magnitude: NVLink ~1-2 us, PCIe peer-to-peer ~3-5 us,
// InfiniBand ~3-5 us, Ethernet/RoCE ~10 us); engineering estimates, to be
// refined by calibration.
std::vector<link_spec> build() {
  return {
      make("nvlink3", "NVLink 3 (A100)", 300, 1.5, "NVIDIA A100 datasheet: 600 GB/s bidirectional per GPU"),
      make("nvlink4", "NVLink 4 (H100/H200)", 450, 1.5, "NVIDIA H100 datasheet: 900 GB/s bidirectional per GPU"),
      make("nvlink5", "NVLink 5 (B200/GB200)", 900, 1.5, "NVIDIA B200 datasheet: 1.8 TB/s bidirectional per GPU"),
      make("nvlink-bridge-ampere", "NVLink bridge, 2 GPUs (RTX A6000, A40)", 56.25, 2,
           "NVIDIA RTX A6000 datasheet: 112.5 GB/s bidirectional"),
      make("infinity-fabric-mi300", "AMD Infinity Fabric (MI300X/MI325X)", 448, 2,
           "AMD MI300X datasheet: 7 links, 896 GB/s aggregate bidirectional"),
      make("pcie3", "PCIe 3.0 x16", 15.75, 5, "PCI-SIG: 8 GT/s x 16 lanes, 128b/130b"),
      make("pcie4", "PCIe 4.0 x16", 31.5, 4, "PCI-SIG: 16 GT/s x 16 lanes, 128b/130b"),
      make("pcie5", "PCIe 5.0 x16", 63, 4, "PCI-SIG: 32 GT/s x 16 lanes, 128b/130b"),
      make("ib-hdr", "InfiniBand HDR 200 Gb/s (one NIC per GPU)", 25, 4, "IBTA HDR: 200 Gb/s per port"),
      make("ib-ndr", "InfiniBand NDR 400 Gb/s (one NIC per GPU)", 50, 4, "IBTA NDR: 400 Gb/s per port"),
      make("ib-xdr", "InfiniBand XDR 800 Gb/s (one NIC per GPU)", 100, 4, "IBTA XDR: 800 Gb/s per port"),
      make("eth-10g", "Ethernet 10 Gb/s", 1.25, 30, "IEEE 802.3: 10 Gb/s"),
      make("eth-100g", "Ethernet/RoCE 100 Gb/s", 12.5, 10, "IEEE 802.3: 100 Gb/s"),
      make("eth-400g", "Ethernet/RoCE 400 Gb/s", 50, 8, "IEEE 802.3: 400 Gb/s"),
      make("thunderbolt5", "Thunderbolt 5 (Mac clusters)", 10, 20, "Intel Thunderbolt 5: 80 Gb/s"),
  };
}

}  // namespace

const std::vector<link_spec>& links() {
  static const std::vector<link_spec> all = build();
  return all;
}

const link_spec& find_link(std::string_view id) {
  // Per parallel decode step (intra_node_link): no allocation unless it fails.
  const auto same = [&](const std::string& l) {
    if (l.size() != id.size()) return false;
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (l[i] != std::tolower(static_cast<unsigned char>(id[i]))) return false;
    }
    return true;
  };
  for (const auto& l : links()) {
    if (same(l.id)) return l;
  }
  std::vector<std::string> ids;
  for (const auto& l : links()) ids.push_back(l.id);
  detail::fail_unknown("link", id, ids);
}

namespace {

// intra_node_link's decision, made once: the catalog link, and whether its
// bandwidth is the device's own (the table's bidirectional figure, halved)
// under the catalog link's name or, for a bridge, a name of its own.
struct intra_choice {
  const link_spec* link;
  bool own_bandwidth = false;
  bool bridge = false;
};

intra_choice decide_intra(const device& d, int n) {
  // Looked up once: every parallel step of a search asks.
  static const link_spec& nvlink5 = find_link("nvlink5");
  static const link_spec& nvlink4 = find_link("nvlink4");
  static const link_spec& nvlink3 = find_link("nvlink3");
  static const link_spec& fabric = find_link("infinity-fabric-mi300");
  static const link_spec& bridge_link = find_link("nvlink-bridge-ampere");
  static const link_spec& pcie5 = find_link("pcie5");
  static const link_spec& pcie4 = find_link("pcie4");
  static const link_spec& pcie3 = find_link("pcie3");
  const std::string& ic = d.interconnect;
  const auto has = [&](const char* s) { return ic.find(s) != std::string::npos; };
  const bool bridge = has("bridge");
  if (!bridge || n <= 2) {
    if (has("NVLink 5")) return {&nvlink5};
    if (has("NVLink 4")) return {&nvlink4};
    if (has("NVLink 3")) return {&nvlink3};
    if (has("Infinity Fabric") && d.link_bandwidth.value() > 0) return {&fabric, true};
    if (bridge && d.link_bandwidth.value() > 0) return {&bridge_link, true, true};
  }
  if (has("PCIe 5.0")) return {&pcie5};
  if (has("PCIe 3.0")) return {&pcie3};
  return {&pcie4};
}

// Every collective of every parallel step asks, mostly of one device: the
// last answer per thread, kept while the device's link fields read the same.
intra_choice choose_intra(const device& d, int n) {
  struct memo {
    const device* dev = nullptr;
    std::string interconnect;
    double bandwidth = -1;
    bool wide = false;
    intra_choice choice{nullptr};
  };
  thread_local memo last;
  const bool wide = n > 2;  // a 2-way bridge joins at most two
  if (last.dev != &d || last.wide != wide || last.bandwidth != d.link_bandwidth.value() ||
      last.interconnect != d.interconnect) {
    last = {&d, d.interconnect, d.link_bandwidth.value(), wide, decide_intra(d, n)};
  }
  return last.choice;
}

}  // namespace

link_spec intra_node_link(const device& d, int n) {
  const intra_choice c = choose_intra(d, n);
  link_spec l = *c.link;
  if (c.own_bandwidth) l.bandwidth = 0.5 * d.link_bandwidth;  // the table's figure is bidirectional
  if (c.bridge) l.name = "NVLink bridge (" + d.name + ")";
  return l;
}

link_speed intra_node_speed(const device& d, int n) {
  const intra_choice c = choose_intra(d, n);
  return {c.own_bandwidth ? 0.5 * d.link_bandwidth : c.link->bandwidth, c.link->latency};
}

const link_spec& default_inter_node_link() {
  static const link_spec& ndr = find_link("ib-ndr");
  return ndr;
}

}  // namespace llmroof
