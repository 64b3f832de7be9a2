// Devices a user brings: the inline `custom:` form, JSON files with the fields
// of `llmroof list devices --json`, and the one entry point for device strings.
#include <cctype>
#include <cstdint>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/hardware/device.hpp"
#include "model/readers/common.hpp"

namespace llmroof {

namespace {

using nlohmann::json;

/// What a number measures, with the units it may carry (unit -> factor to
/// the base unit: B, B/s, FLOP/s or W).
enum class measure { memory, bandwidth, rate, power };

struct unit {
  const char* name;
  double factor;
};

const std::vector<unit>& units_of(measure q) {
  static const std::vector<unit> memory = {{"B", 1},           {"KB", 1e3},         {"MB", 1e6},
                                           {"GB", 1e9},        {"TB", 1e12},        {"KiB", 1024.0},
                                           {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
  // Bytes are B, bits b (8 to a byte): links are sold in Gb/s (400 Gb/s
  // InfiniBand NDR is 50 GB/s).
  static const std::vector<unit> bandwidth = {
      {"B/s", 1},           {"KB/s", 1e3},       {"MB/s", 1e6},     {"GB/s", 1e9},     {"TB/s", 1e12},
      {"KiB/s", 1024.0},    {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0}, {"TiB/s", 1099511627776.0},
      {"b/s", 0.125},       {"Kb/s", 125.0},     {"Mb/s", 1.25e5},  {"Gb/s", 1.25e8},  {"Tb/s", 1.25e11},
      {"bps", 0.125},       {"Kbps", 125.0},     {"Mbps", 1.25e5},  {"Gbps", 1.25e8},  {"Tbps", 1.25e11}};
  static const std::vector<unit> rate = {
      {"FLOPS", 1},   {"FLOP/s", 1},   {"GF", 1e9},      {"GFLOPS", 1e9},  {"GFLOP/s", 1e9}, {"TF", 1e12},
      {"TFLOPS", 1e12}, {"TFLOP/s", 1e12}, {"PF", 1e15}, {"PFLOPS", 1e15}, {"PFLOP/s", 1e15}, {"OPS", 1},
      {"GOPS", 1e9},  {"TOPS", 1e12},  {"POPS", 1e15}};
  static const std::vector<unit> power = {{"W", 1}, {"kW", 1e3}};
  switch (q) {
    case measure::memory: return memory;
    case measure::bandwidth: return bandwidth;
    case measure::rate: return rate;
    case measure::power: return power;
  }
  return memory;
}

const char* example_of(measure q) {
  switch (q) {
    case measure::memory: return "GiB";
    case measure::bandwidth: return "GB/s";
    case measure::rate: return "TF or TOPS";
    case measure::power: return "W";
  }
  return "";
}

/// Physical range of each measure (base units), said in the message: wide
/// enough for any accelerator or CPU of the catalog and of the next decade,
/// narrow enough that a slip of units (1e-9 GiB, 1e30 B/s) is refused rather
/// than planned into "-0 users" or "inf ms".
struct range {
  double lo, hi;
  const char* said;
};

range range_of(measure q) {
  switch (q) {
    case measure::memory: return {64.0 * 1048576.0, 64.0 * 1099511627776.0, "[64 MiB, 64 TiB]"};
    case measure::bandwidth: return {1e8, 1e15, "[0.1 GB/s, 1 PB/s]"};
    case measure::rate: return {1e8, 1e19, "[0.1 GFLOP/s, 10 EFLOP/s]"};
    case measure::power: return {0, 1e5, "[0, 100 kW]"};
  }
  return {0, 0, ""};
}

void require_physical(const std::string& where, const std::string& field, double v, measure q, const std::string& got) {
  const range r = range_of(q);
  if (!(v >= r.lo && v <= r.hi)) {
    throw std::invalid_argument(where + ": " + field + " must be in " + r.said + " (got '" + got + "')");
  }
}

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

/// "936GB/s" -> 9.36e11 (B/s). `where` prefixes messages ("custom device").
double parse_quantity(const std::string& where, const std::string& field, std::string_view text, measure q) {
  const std::string t = trim(text);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(where + ": " + field + " must be a number with a unit like " + example_of(q) +
                                " (got '" + t + "')");
  }
  const std::string u = trim(std::string_view(t).substr(used));
  if (u.empty()) {
    throw std::invalid_argument(where + ": " + field + " must have a unit like " + example_of(q) + " (got '" + t +
                                "')");
  }
  // The prefix's case is free (gb/s, GB/s); B (bytes) and b (bits) are not.
  const auto same_unit = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const bool byte_or_bit = b[i] == 'B' || b[i] == 'b';
      if (byte_or_bit ? a[i] != b[i] : std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
        return false;
      }
    }
    return true;
  };
  for (const auto& x : units_of(q)) {
    if (same_unit(u, x.name)) {
      const double out = v * x.factor;
      if (!std::isfinite(out) || out < 0 || (out == 0 && q != measure::power)) {
        throw std::invalid_argument(where + ": " + field + " must be > 0 (got '" + t + "')");
      }
      require_physical(where, field, out, q, t);
      return out;
    }
  }
  std::string known;
  for (const auto& x : units_of(q)) known += (known.empty() ? "" : ", ") + std::string(x.name);
  for (const auto& x : units_of(q)) {
    if (detail::to_lower(u) == detail::to_lower(x.name)) {
      // Only B/b differs: say which is which.
      throw std::invalid_argument(where + ": " + field + " has unit '" + u + "': B is bytes, b is bits (did you mean '" +
                                  x.name + "'?)");
    }
  }
  throw std::invalid_argument(where + ": " + field + " has unit '" + u + "', which is not one of " + known);
}

device_class parse_class(const std::string& where, const std::string& s) {
  if (const auto c = detail::enum_from_name<device_class>(detail::to_lower(s), device_class_names)) return *c;
  throw std::invalid_argument(where + ": class must be " + detail::enum_choices(device_class_names) + " (got '" + s +
                              "')");
}

constexpr std::size_t idx(math_format m) { return static_cast<std::size_t>(m); }

/// Checks a user device and says in `source` which rates fall back.
device finish(device d, const std::string& where) {
  if (d.memory.value() <= 0) throw std::invalid_argument(where + ": memory is required (e.g. memory=24GiB)");
  if (d.bandwidth.value() <= 0) {
    throw std::invalid_argument(where + ": bandwidth is required (e.g. bandwidth=936GB/s)");
  }
  if (d.published_peak(math_format::fp32).value() <= 0 && d.published_peak(math_format::bf16).value() <= 0) {
    throw std::invalid_argument(where + ": a compute rate is required: fp32 or bf16 (e.g. bf16=71TF)");
  }
  std::vector<std::string> missing;
  for (auto m : {math_format::fp32, math_format::bf16, math_format::fp8, math_format::int8, math_format::fp4}) {
    if (d.published_peak(m).value() <= 0) missing.emplace_back(to_string(m));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    const bool has_bf16 = d.published_peak(math_format::bf16).value() > 0;
    d.source += std::string(d.source.empty() ? "" : " | ") + "not given: " + list + " (kernels in those formats run at the " +
                (has_bf16 ? "bf16 rate" : "fp32 rate") + ")";
  }
  if (d.name.empty()) d.name = d.id;
  validate(d);
  return d;
}

}  // namespace

device parse_custom_device(std::string_view spec) {
  const std::string where = "custom device";
  std::string_view body = spec;
  if (body.rfind("custom:", 0) == 0) body.remove_prefix(7);
  device d;
  d.id = "custom";
  d.klass = device_class::workstation;
  d.source = "user-defined (--device custom:...)";
  std::vector<std::string> given;
  while (!body.empty()) {
    const auto comma = body.find(',');
    const std::string item = trim(body.substr(0, comma));
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument(where + ": '" + item + "' must be KEY=VALUE (e.g. memory=24GiB)");
    }
    std::string key = detail::to_lower(trim(item.substr(0, eq)));
    for (auto& c : key) {
      if (c == '-') c = '_';
    }
    const std::string value = trim(item.substr(eq + 1));
    if (std::find(given.begin(), given.end(), key) != given.end()) {
      throw std::invalid_argument(where + ": " + key + " is given twice");
    }
    // fp16 and bf16 name the one 16-bit rate.
    const std::string other = key == "fp16" ? "bf16" : key == "bf16" ? "fp16" : "";
    if (!other.empty() && std::find(given.begin(), given.end(), other) != given.end()) {
      throw std::invalid_argument(where + ": bf16 and fp16 both set the 16-bit rate: give one");
    }
    given.push_back(key);
    const auto rate = [&](math_format m) {
      d.peaks[idx(m)] = make_flops_per_second(parse_quantity(where, key, value, measure::rate));
    };
    if (key == "memory") d.memory = make_bytes(parse_quantity(where, key, value, measure::memory));
    else if (key == "bandwidth") d.bandwidth = make_bytes_per_second(parse_quantity(where, key, value, measure::bandwidth));
    else if (key == "fp32") rate(math_format::fp32);
    else if (key == "bf16" || key == "fp16") rate(math_format::bf16);
    else if (key == "fp8") rate(math_format::fp8);
    else if (key == "int8") rate(math_format::int8);
    else if (key == "fp4") rate(math_format::fp4);
    else if (key == "tdp") {
      d.tdp_w = parse_quantity(where, key, value, measure::power);
      // 0 is a device file's "unknown"; a spec that names its TDP gives one.
      if (d.tdp_w == 0) throw std::invalid_argument(where + ": tdp must be > 0 (leave it out when unknown)");
    }
    else if (key == "link") d.link_bandwidth = make_bytes_per_second(parse_quantity(where, key, value, measure::bandwidth));
    else if (key == "class") d.klass = parse_class(where, value);
    else if (key == "vendor") d.vendor = value;
    else if (key == "memory_type") d.memory_type = value;
    else if (key == "name") d.name = value;
    else if (key == "id") d.id = value;
    else if (key == "interconnect") d.interconnect = value;
    else {
      throw std::invalid_argument(where + ": unknown field '" + key +
                                  "' (known: memory, bandwidth, fp32, bf16, fp8, int8, fp4, tdp, link, class, vendor, "
                                  "memory_type, name, id, interconnect)");
    }
  }
  return finish(std::move(d), where);
}

device parse_device_json(std::string_view text, std::string_view where_) {
  const std::string where = "device file " + std::string(where_);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(where + ": not valid JSON (" + e.what() + ")");
  }
  if (j.is_array() && j.size() == 1) j = j.front();
  if (!j.is_object()) throw std::invalid_argument(where + ": must hold one JSON object (one device)");
  device d;
  d.id = "custom";
  d.klass = device_class::workstation;
  const auto text_of = [&](const char* k) -> std::string {
    const auto& v = j.at(k);
    if (!v.is_string()) throw std::invalid_argument(where + ": " + k + " must be a string");
    return v.get<std::string>();
  };
  const auto number = [&](const char* k, measure q) -> double {
    const auto& v = j.at(k);
    if (v.is_number()) {
      const double x = v.get<double>();
      if (!std::isfinite(x) || x < 0) throw std::invalid_argument(where + ": " + k + " must be >= 0 (got " + detail::show(x) + ")");
      // 0 is how `list devices --json` prints a rate or link the device lacks.
      if (x > 0) require_physical(where, k, x, q, detail::show(x));
      return x;
    }
    if (v.is_string()) return parse_quantity(where, k, v.get<std::string>(), q);
    throw std::invalid_argument(where + ": " + k + " must be a number (or a string with a unit)");
  };
  static const std::vector<std::string> known = {
      "id", "name", "vendor", "family", "device_class", "class", "memory_type", "memory_bytes",
      "bandwidth_bytes_per_s", "fp32_flops_per_s", "bf16_flops_per_s", "fp8_flops_per_s", "int8_ops_per_s",
      "fp4_flops_per_s", "interconnect", "link_bandwidth_bytes_per_s", "tdp_w", "aliases", "source"};
  for (const auto& [k, v] : j.items()) {
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      throw std::invalid_argument(where + ": unknown field '" + k + "'");
    }
    if (v.is_null()) continue;
    if (k == "id") d.id = text_of("id");
    else if (k == "name") d.name = text_of("name");
    else if (k == "vendor") d.vendor = text_of("vendor");
    else if (k == "family") d.family = text_of("family");
    else if (k == "device_class" || k == "class") d.klass = parse_class(where, text_of(k.c_str()));
    else if (k == "memory_type") d.memory_type = text_of("memory_type");
    else if (k == "memory_bytes") d.memory = make_bytes(number("memory_bytes", measure::memory));
    else if (k == "bandwidth_bytes_per_s") d.bandwidth = make_bytes_per_second(number("bandwidth_bytes_per_s", measure::bandwidth));
    else if (k == "fp32_flops_per_s") d.peaks[idx(math_format::fp32)] = make_flops_per_second(number("fp32_flops_per_s", measure::rate));
    else if (k == "bf16_flops_per_s") d.peaks[idx(math_format::bf16)] = make_flops_per_second(number("bf16_flops_per_s", measure::rate));
    else if (k == "fp8_flops_per_s") d.peaks[idx(math_format::fp8)] = make_flops_per_second(number("fp8_flops_per_s", measure::rate));
    else if (k == "int8_ops_per_s") d.peaks[idx(math_format::int8)] = make_flops_per_second(number("int8_ops_per_s", measure::rate));
    else if (k == "fp4_flops_per_s") d.peaks[idx(math_format::fp4)] = make_flops_per_second(number("fp4_flops_per_s", measure::rate));
    else if (k == "interconnect") d.interconnect = text_of("interconnect");
    else if (k == "link_bandwidth_bytes_per_s") d.link_bandwidth = make_bytes_per_second(number("link_bandwidth_bytes_per_s", measure::bandwidth));
    else if (k == "tdp_w") d.tdp_w = number("tdp_w", measure::power);
    else if (k == "source") d.source = text_of("source");
    else if (k == "aliases") {
      if (!v.is_array()) throw std::invalid_argument(where + ": aliases must be a list of strings");
      for (const auto& a : v) {
        if (!a.is_string()) throw std::invalid_argument(where + ": aliases must be a list of strings");
        d.aliases.push_back(a.get<std::string>());
      }
    }
  }
  if (!j.contains("memory_bytes")) throw std::invalid_argument(where + ": memory_bytes is required");
  if (!j.contains("bandwidth_bytes_per_s")) throw std::invalid_argument(where + ": bandwidth_bytes_per_s is required");
  if (!j.contains("fp32_flops_per_s") && !j.contains("bf16_flops_per_s")) {
    throw std::invalid_argument(where + ": fp32_flops_per_s or bf16_flops_per_s is required");
  }
  if (d.source.empty()) d.source = "user-defined (" + std::string(where_) + ")";
  return finish(std::move(d), where);
}

device read_device_json(const std::string& path) {
  // The readers' guard: a regular file (never a FIFO or /dev/zero) of at most
  // max_device_file_bytes: one device's fields are a few hundred bytes.
  constexpr std::uint64_t max_device_file_bytes = 1ull << 20;
  std::uint64_t size = 0;
  const auto raw = readers::read_prefix(path, max_device_file_bytes + 1, &size);
  if (size > max_device_file_bytes) {
    throw std::invalid_argument(path + ": larger than 1 MiB (limit for a device file)");
  }
  return parse_device_json(std::string(raw.begin(), raw.end()), path);
}

std::string device_json(const device& d) {
  json aliases = json::array();
  for (const auto& a : d.aliases) aliases.push_back(a);
  const json j = {{"id", d.id},
                  {"name", d.name},
                  {"vendor", d.vendor},
                  {"family", d.family},
                  {"class", std::string(to_string(d.klass))},
                  {"memory_type", d.memory_type},
                  {"memory_bytes", d.memory.value()},
                  {"bandwidth_bytes_per_s", d.bandwidth.value()},
                  {"fp32_flops_per_s", d.published_peak(math_format::fp32).value()},
                  {"bf16_flops_per_s", d.published_peak(math_format::bf16).value()},
                  {"fp8_flops_per_s", d.published_peak(math_format::fp8).value()},
                  {"int8_ops_per_s", d.published_peak(math_format::int8).value()},
                  {"fp4_flops_per_s", d.published_peak(math_format::fp4).value()},
                  {"interconnect", d.interconnect},
                  {"link_bandwidth_bytes_per_s", d.link_bandwidth.value()},
                  {"tdp_w", d.tdp_w},
                  {"aliases", aliases},
                  {"source", d.source}};
  return j.dump(2);
}

device device_from_spec(std::string_view spec) {
  const std::string s = trim(spec);
  if (s.rfind("custom:", 0) == 0) return parse_custom_device(s);
  if (s.size() > 5 && s.ends_with(".json")) return read_device_json(s);
  return configured_device(s);
}

}  // namespace llmroof
