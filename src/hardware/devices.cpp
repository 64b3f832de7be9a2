// The built-in device catalog (rows generated from data/accelerators.csv)
// and the name resolver.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/hardware/device.hpp"

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
  const char* aliases;  // '|'-separated
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
    for (std::string_view a = r.aliases; !a.empty();) {
      const auto bar = a.find('|');
      d.aliases.emplace_back(a.substr(0, bar));
      a = bar == std::string_view::npos ? std::string_view{} : a.substr(bar + 1);
    }
    d.source = r.source;
    out.push_back(std::move(d));
  }
  return out;
}

// ---- name resolver ----------------------------------------------------------

/// Words that carry no identity: vendor and brand names, "GPU", "edition".
bool stop_word(const std::string& w) {
  static const std::set<std::string> words = {
      "nvidia", "geforce", "amd", "radeon", "intel", "apple", "tesla", "instinct", "google", "cloud",
      "gpu", "gpus", "graphics", "generation", "edition", "unified", "the", "with", "and", "per"};
  return words.count(w) > 0;
}

bool memory_type_word(const std::string& w) {
  static const std::set<std::string> words = {"hbm",    "hbm2",   "hbm2e",   "hbm3",    "hbm3e",  "gddr5",
                                              "gddr5x", "gddr6",  "gddr6x",  "gddr7",   "lpddr4x", "lpddr5",
                                              "lpddr5x", "ddr4",  "ddr5"};
  return words.count(w) > 0;
}

/// A name split into what it says: identity words, a memory size in GB (the
/// marketed number) and a memory type.
struct parsed_name {
  std::set<std::string> words;
  std::optional<double> memory_gb;
  std::optional<std::string> memory_type;
};

parsed_name parse_name(std::string_view text) {
  // Lowercase alphanumeric runs; '.' kept inside numbers ("3.1").
  std::vector<std::string> raw;
  std::string cur;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    const bool dot_in_number = c == '.' && !cur.empty() && std::isdigit(static_cast<unsigned char>(cur.back())) &&
                               i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]));
    if (std::isalnum(static_cast<unsigned char>(c)) || dot_in_number) {
      cur.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      raw.push_back(cur);
      cur.clear();
    }
  }
  parsed_name out;
  const auto is_number = [](const std::string& w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
  };
  for (std::size_t i = 0; i < raw.size(); ++i) {
    std::string w = raw[i];
    const std::string next = i + 1 < raw.size() ? raw[i + 1] : "";
    // "40-core", "40 core", "40c" -> "40c"
    if (is_number(w) && (next == "core" || next == "cores")) {
      out.words.insert(w + "c");
      ++i;
      continue;
    }
    // "24GB", "24 GB", "24GiB" -> memory size
    if (is_number(w) && (next == "gb" || next == "gib")) {
      out.memory_gb = std::stod(w);
      ++i;
      continue;
    }
    if (w.size() > 2 && (w.ends_with("gb") || w.ends_with("gib"))) {
      const std::string num = w.substr(0, w.size() - (w.ends_with("gib") ? 3 : 2));
      if (is_number(num)) {
        out.memory_gb = std::stod(num);
        continue;
      }
    }
    if (memory_type_word(w)) {
      out.memory_type = w;
      continue;
    }
    // The computer around an Apple chip ("MacBook Pro M4 Max", "Mac Studio
    // M3 Ultra", "Mac mini M4 Pro") and its screen size say nothing of it;
    // "pro" after "macbook" or "mac" is the computer's, not the chip's.
    if (w == "macbook" || w == "mac" || w == "imac") {
      if (next == "pro" || next == "air" || next == "studio" || next == "mini") ++i;
      continue;
    }
    if (is_number(w) && (next == "inch" || next == "in")) {
      ++i;
      continue;
    }
    // A lone "core" (not Intel's "Core i7" / "Core Ultra") says nothing.
    if (w == "core" && !(next.size() == 2 && next[0] == 'i') && next != "ultra") continue;
    if (w == "mobile") w = "laptop";
    if (stop_word(w)) continue;
    out.words.insert(w);
    // "sxm5" also answers to "sxm"
    if (w.size() > 3 && w.rfind("sxm", 0) == 0) out.words.insert("sxm");
  }
  return out;
}

struct device_names {
  const device* dev;
  std::vector<parsed_name> names;  // the name, the id, each alias
  parsed_name memory;              // the memory type's words
};

const std::vector<device_names>& name_index() {
  static const std::vector<device_names> index = [] {
    std::vector<device_names> out;
    for (const auto& d : devices()) {
      device_names n{&d, {parse_name(d.name), parse_name(d.id)}, parse_name(d.memory_type)};
      for (const auto& a : d.aliases) n.names.push_back(parse_name(a));
      out.push_back(std::move(n));
    }
    return out;
  }();
  return index;
}

bool subset(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::includes(b.begin(), b.end(), a.begin(), a.end());
}

/// Narrows candidates by the memory size and type a name gives, when that
/// leaves any (a size or type only chooses among variants). Apple, Jetson and
/// other unified-memory rows give the largest configuration: a smaller size
/// fits them.
std::vector<const device_names*> narrow(std::vector<const device_names*> c, const parsed_name& q) {
  const auto keep = [&](auto pred) {
    std::vector<const device_names*> k;
    std::copy_if(c.begin(), c.end(), std::back_inserter(k), pred);
    if (!k.empty()) c = std::move(k);
  };
  if (q.memory_gb && c.size() > 1) {
    keep([&](const device_names* n) {
      const double marketed = in_GiB(n->dev->memory);
      if (n->dev->klass == device_class::unified) return *q.memory_gb <= marketed + 0.5;
      return std::fabs(marketed - *q.memory_gb) < 0.5;
    });
  }
  if (q.memory_type && c.size() > 1) {
    keep([&](const device_names* n) { return n->memory.memory_type == q.memory_type; });
  }
  return c;
}

// `lenient`: a dataset's name may carry words no catalog name uses ("Server
// Edition", "not stated"), dropped as a last pass; a user's name must match
// with every word ("h100-sxmx" is no H100 SXM).
std::vector<const device_names*> resolve(std::string_view text, bool lenient) {
  const auto& index = name_index();
  const std::string key = detail::to_lower(text);
  for (const auto& n : index) {
    if (n.dev->id == key || detail::to_lower(n.dev->name) == key) return {&n};
  }
  parsed_name q = parse_name(text);
  if (q.words.empty()) return {};
  const auto pass = [&](auto match) {
    std::vector<const device_names*> c;
    for (const auto& n : index) {
      if (std::any_of(n.names.begin(), n.names.end(), match)) c.push_back(&n);
    }
    return narrow(std::move(c), q);
  };
  // 1. the same words as a name or alias; 2. words a name contains.
  auto c = pass([&](const parsed_name& p) { return p.words == q.words; });
  if (c.empty()) {
    c = pass([&](const parsed_name& p) { return subset(q.words, p.words); });
    // "4070 Ti" is the RTX 4070 Ti, not the 4070 Ti SUPER: one candidate that
    // adds only a product-line word wins.
    static const std::set<std::string> line = {"rtx", "gtx", "rx", "quadro", "arc", "ryzen", "core", "xeon", "epyc", "jetson"};
    std::vector<const device_names*> plain;
    for (const auto* n : c) {
      const auto& w = n->names.front().words;
      if (std::all_of(w.begin(), w.end(), [&](const std::string& x) { return q.words.count(x) > 0 || line.count(x) > 0; })) {
        plain.push_back(n);
      }
    }
    if (plain.size() == 1) c = plain;
  }
  if (c.empty() && lenient) {
    // 3. without words no catalog name uses ("Server Edition", "not stated").
    std::set<std::string> known;
    for (const auto& n : index) {
      for (const auto& p : n.names) known.insert(p.words.begin(), p.words.end());
    }
    // Only plain words go: an unknown model number ("3090x") stays and fails.
    const auto digit = [](const std::string& w) { return std::any_of(w.begin(), w.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; }); };
    std::set<std::string> kept;
    for (const auto& w : q.words) {
      if (known.count(w) > 0 || digit(w)) kept.insert(w);
    }
    if (std::any_of(kept.begin(), kept.end(), digit) && kept != q.words) {
      q.words = std::move(kept);
      c = pass([&](const parsed_name& p) { return subset(q.words, p.words); });
    }
  }
  return c;
}

}  // namespace

const std::vector<device>& devices() {
  static const std::vector<device> all = build();
  return all;
}

std::vector<std::string> match_devices(std::string_view name) {
  std::vector<std::string> ids;
  for (const auto* n : resolve(name, true)) ids.push_back(n->dev->id);
  return ids;
}

const device& find_device(std::string_view name) {
  const auto c = resolve(name, false);
  if (c.size() == 1) return *c.front()->dev;
  if (c.size() > 1) {
    std::string msg = "device '" + std::string(name) + "' is ambiguous: it matches " + std::to_string(c.size()) +
                      " devices: ";
    for (std::size_t i = 0; i < c.size() && i < 12; ++i) {
      msg += (i ? "; " : "") + c[i]->dev->id + " (" + c[i]->dev->name + ")";
    }
    if (c.size() > 12) msg += "; ...";
    throw std::invalid_argument(msg + ". Give an id or a more specific name");
  }
  const auto& all = devices();
  std::vector<std::string> ids;
  ids.reserve(all.size());
  for (const auto& d : all) ids.push_back(d.id);
  detail::fail_unknown("device", name, ids);
}

device configured_device(std::string_view name) {
  device d = find_device(name);
  const parsed_name q = parse_name(name);
  // A unified-memory row is its largest configuration (narrow); a smaller
  // size in the name is the machine asked about: "M4 Max 48GB" has 48 GiB.
  if (q.memory_gb && d.klass == device_class::unified && *q.memory_gb + 0.5 < in_GiB(d.memory)) {
    if (!(*q.memory_gb >= 1)) detail::fail("device", "a memory size of at least 1 GB", *q.memory_gb);
    d.memory = make_bytes(*q.memory_gb * 1024.0 * 1024.0 * 1024.0);
    d.name += " with " + detail::show(*q.memory_gb) + " GB";
  }
  return d;
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
