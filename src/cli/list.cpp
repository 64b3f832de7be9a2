// list: the catalogs.
#include <cctype>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace llmroof::cli {

namespace {

// Every word of the filter begins a word of some field: "m4" finds the
// M4 Max and m4-max-40c, not an A100 SXM4; "m3 ultra" not HBM3e's B300.
bool matches_filter(const std::string& filter, const std::vector<std::string>& fields) {
  std::string hay;
  for (const auto& f : fields) hay += detail::to_lower(f) + "\n";
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::istringstream words(detail::to_lower(filter));
  for (std::string w; words >> w;) {
    bool found = false;
    for (std::size_t at = hay.find(w); at != std::string::npos && !found; at = hay.find(w, at + 1)) {
      found = at == 0 || !alnum(hay[at - 1]) || !alnum(w.front());
    }
    if (!found) return false;
  }
  return true;
}

// A rate the device's sources do not give: "-", never 0.0.
std::string rate_cell(double tflops) {
  char b[32];
  if (!(tflops > 0)) return "-";
  std::snprintf(b, sizeof b, "%.1f", tflops);
  return b;
}


/// The first document a source names, shortened for a table column.
std::string short_source(const std::string& src) {
  std::string s = src.substr(0, src.find_first_of(";|"));
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}


void print_count(std::size_t shown, std::size_t all, const char* what, const std::optional<std::string>& filter) {
  if (filter) {
    std::printf("%zu of %zu %s match '%s'\n", shown, all, what, filter->c_str());
  } else {
    std::printf("%zu %s\n", all, what);
  }
}

}  // namespace

int cmd_list(const options& o) {
  const auto filter = o.get("filter");
  if (filter && o.sub != "devices" && o.sub != "models") {
    throw usage_error("--filter applies to 'list devices' and 'list models'");
  }
  if (o.sub == "devices") {
    std::vector<const device*> shown;
    for (const auto& d : devices()) {
      std::vector<std::string> fields = {d.id, d.name, d.vendor, d.family, std::string(to_string(d.klass)), d.memory_type};
      fields.insert(fields.end(), d.aliases.begin(), d.aliases.end());
      if (!filter || matches_filter(*filter, fields)) shown.push_back(&d);
    }
    if (o.json) {
      json j = json::array();
      for (const auto* d : shown) j.push_back(json::parse(device_json(*d)));
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-28s %-11s %7s %8s %8s %8s %8s  %-48s  %s\n", "id", "class", "GiB", "GB/s", "fp32 TF", "bf16 TF",
                "int8 TOP", "name", "source (first document; all in --json)");
    for (const auto* d : shown) {
      // bf16 is what 16-bit kernels run at: the fp32 rate, starred, on a device without 16-bit matrix units.
      const bool fp32_only = !(d->published_peak(math_format::bf16).value() > 0) && d->peak(math_format::bf16).value() > 0;
      std::printf("%-28s %-11s %7.0f %8.0f %8s %8s %8s  %-48s  %s\n", d->id.c_str(),
                  std::string(to_string(d->klass)).c_str(), in_GiB(d->memory), in_GBps(d->bandwidth),
                  rate_cell(in_TFLOPS(d->published_peak(math_format::fp32))).c_str(),
                  (rate_cell(in_TFLOPS(d->peak(math_format::bf16))) + (fp32_only ? "*" : "")).c_str(),
                  rate_cell(in_TFLOPS(d->published_peak(math_format::int8))).c_str(), d->name.c_str(),
                  short_source(d->source).c_str());
    }
    std::printf("(-: a rate the device's sources do not give; *: no 16-bit matrix units, 16-bit kernels run at fp32)\n");
    print_count(shown.size(), devices().size(), "devices", filter);
    return 0;
  }
  if (o.sub == "models") {
    std::vector<const architecture*> shown;
    for (const auto& a : models()) {
      std::vector<std::string> fields = {a.id, a.name, a.family};
      fields.insert(fields.end(), a.aliases.begin(), a.aliases.end());
      if (!filter || matches_filter(*filter, fields)) shown.push_back(&a);
    }
    if (o.json) {
      json j = json::array();
      for (const auto* a : shown) {
        const auto p = count_parameters(*a);
        j.push_back({{"id", a->id}, {"name", a->name}, {"family", a->family}, {"layers", a->num_layers},
                     {"params_total", p.total()}, {"params_active", p.active()},
                     {"moe", a->is_moe()}, {"aliases", a->aliases}, {"source", a->source}});
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-30s %-14s %6s %10s %10s %8s  %s\n", "id", "family", "layers", "total B", "active B", "active", "attention");
    for (const auto* a : shown) {
      const auto p = count_parameters(*a);
      std::printf("%-30s %-14s %6d %10.2f %10.2f %7.1f%%  %s%s\n", a->id.c_str(), a->family.c_str(), a->num_layers,
                  p.total() / 1e9, p.active() / 1e9, 100 * p.active() / p.total(),
                  a->attention == attention_kind::mla ? "MLA" : "GQA",
                  a->count_layers(layer_kind::sliding) > 0  ? " + sliding"
                  : a->count_layers(layer_kind::linear) > 0 ? " + linear"
                                                            : "");
    }
    print_count(shown.size(), models().size(), "models", filter);
    return 0;
  }
  if (o.sub == "formats") {
    if (o.json) {
      json j = json::array();
      for (const auto& f : formats()) {
        j.push_back({{"name", f.name}, {"bits", f.bits}, {"math", to_string(f.math)}, {"mix", f.mix},
                     {"description", f.description}, {"source", f.source}});
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-10s %8s %6s  %s\n", "name", "bits", "math", "layout");
    for (const auto& f : formats()) {
      std::printf("%-10s %8.4f %6s  %s\n", std::string(f.name).c_str(), f.bits,
                  std::string(to_string(f.math)).c_str(), std::string(f.description).c_str());
    }
    return 0;
  }
  if (o.sub == "links") {
    if (o.json) {
      json j = json::array();
      for (const auto& l : links()) {
        j.push_back({{"id", l.id}, {"name", l.name}, {"bandwidth_bytes_per_s", l.bandwidth.value()},
                     {"latency_s", l.latency.value()}, {"source", l.source}});
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-22s %14s %10s  %s\n", "id", "GB/s each way", "latency", "name");
    for (const auto& l : links()) {
      std::printf("%-22s %14.2f %8.1f us  %s\n", l.id.c_str(), in_GBps(l.bandwidth), l.latency.value() * 1e6, l.name.c_str());
    }
    return 0;
  }
  if (o.sub == "engines") {
    if (o.json) {
      json j = json::array();
      for (const auto& n : engine_names()) {
        const engine_settings e = find_engine(n);
        j.push_back(report::engine_json(e));
        // The backends it can be asked for by name (`llama.cpp-vulkan`).
        json backends = json::array();
        for (std::string_view b : engine_row_of(e.id).backends) backends.push_back(std::string(b));
        j.back()["backends"] = backends;
      }
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-14s %6s %7s %10s %9s %9s  %s\n", "engine", "util", "block", "batched", "seqs", "reserve", "source");
    for (const auto& n : engine_names()) {
      const engine_settings e = find_engine(n);
      std::printf("%-14s %6.2f %7d %10.0f %9.0f %5.2f GiB  %s\n", std::string(e.name()).c_str(), e.memory_utilization, e.block_tokens,
                  e.max_batched_tokens, e.max_sequences, in_GiB(e.runtime_reserve), e.source.c_str());
    }
    std::printf("\nvLLM sizes max_num_batched_tokens and max_num_seqs by GPU (8192 and 1024 on GPUs of >= 70 GiB\n"
                "other than the A100, else 2048 and 256); older releases: --engine vllm@0.10.\n");
    for (const engine_row& r : engine_table()) {
      if (r.backends.empty()) continue;
      std::string names;
      for (std::string_view b : r.backends) names += (names.empty() ? "" : ", ") + std::string(r.defaults.name()) + "-" + std::string(b);
      std::printf("%s backends: %s (default: the device's own).\n", std::string(r.defaults.name()).c_str(), names.c_str());
    }
    return 0;
  }
  throw usage_error("list needs one of: devices, models, formats, links, engines (got '" + o.sub + "')");
}

}  // namespace llmroof::cli
