// Text formatting of the command's tables: units said explicitly (GB or GiB).
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/cli.hpp"

namespace llmroof::cli {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string gib(bytes b) { return fmt("%.2f GiB", in_GiB(b)); }
std::string gb(bytes b) { return fmt("%.2f GB", in_GB(b)); }
// Seconds from 10 s up: a queue of whole requests reads as "106.3 s", not "106341.57 ms".
std::string ms(seconds t) {
  return t.value() >= 10 ? fmt("%.1f s", t.value()) : fmt("%.2f ms", t.value() * 1e3);
}
std::string ctx_label(double c) {
  if (c >= 1024 && std::fmod(c, 1024) == 0) return thousands(c / 1024) + "k";
  return thousands(c);
}

std::string weights_label(const precision& pr, bool bits) {
  std::string modules;  // those stored otherwise than pr.weights
  for (const auto& [module, f] : {std::pair{"attention", &pr.attention_format()}, std::pair{"ffn", &pr.ffn_format()},
                                  std::pair{"experts", &pr.experts_format()}}) {
    if (f->name != pr.weights.name) modules += (modules.empty() ? "" : ", ") + std::string(module) + " " + std::string(f->name);
  }
  std::string inside = bits ? fmt("%.4g bits", pr.weights.bits) : "";
  if (!modules.empty()) inside += (inside.empty() ? "" : "; ") + modules;
  return std::string(pr.weights.name) + (inside.empty() ? "" : " (" + inside + ")");
}

std::string formats_note(const setup& s) {
  std::string out;
  if (s.formats_from == "name") {
    out = "weights " + weights_label(s.pr) + " as the name '" + s.checkpoint + "' says (--weights to plan another)\n";
  } else if (s.formats_from == "checkpoint") {
    out = "formats of the published checkpoint " + s.checkpoint + ": " + weights_label(s.pr) + ", embedding " +
          std::string(s.pr.embedding.name) + ", lm_head " + std::string(s.pr.lm_head.name) +
          " (--weights to plan another)\n";
  }
  // A format whose math the device lacks (NVFP4 on Hopper, FP8 on Ampere)
  // runs weight-only: dequantized onto the 16-bit roof, as vLLM's Marlin does.
  const numeric_format& bulk = s.model.is_moe() ? s.pr.experts_format() : s.pr.weights;
  if (s.has_device() && s.dev().effective_math(bulk.math) != bulk.math) {
    out += "note: " + s.dev().name + " has no " + std::string(to_string(bulk.math)) + " math: " +
           std::string(bulk.name) + " weights are read at " + fmt("%.3g", bulk.bits) + " bits and computed on its " +
           std::string(to_string(s.dev().effective_math(bulk.math))) + " roof\n";
  }
  return out;
}

std::string users_label(double n) { return thousands(n) + (n == 1 ? " user" : " users"); }

std::string history_label(const workload& w) {
  if (w.history() <= 0) return {};
  return ", each a turn of a conversation that grows to " + thousands(w.context) + " tokens (" +
         thousands(w.history()) + " of them from earlier turns)";
}

std::string device_label(const setup& s) {
  std::string out = std::to_string(s.devices()) + " x " + s.dev().name;
  const auto& p = s.parallel();
  if (s.replicas() > 1) {
    // Replicas, one per node or group: each its own layout and share of the users.
    out += " (" + std::to_string(s.replicas()) + " replicas of " + layout_name(p) +
           (p.nodes() == 1 && s.nodes() == s.replicas() ? ", one per node" : "") + ")";
    if (p.devices() > 1) out += "; collectives over " + detail::collective_link(p, s.dev()).name;
  } else if (s.devices() > 1) {
    out += p.ep > 1 || p.dp_attention_tp() ? " (" + layout_name(p) + ")"
           : p.tp == 1 && p.pp > 1 ? " (layer split, PP " + std::to_string(p.pp) + ")"
           : p.row_split           ? " (row split, TP " + std::to_string(p.tp) + ")"
                                   : " (TP " + std::to_string(p.tp) + (p.pp > 1 ? ", PP " + std::to_string(p.pp) : "") + ")";
    if (p.nodes() > 1) out += ", " + std::to_string(p.nodes()) + " nodes";
    out += "; collectives over " + detail::collective_link(p, s.dev()).name;
  }
  return out;
}

void print_ops(const phase_timing& p) {
  std::printf("  %-18s %6s %12s %12s %12s %10s %5s %10s %10s  %s\n", "op", "count", "GFLOP",
              "weights GB", "KV GB", "FLOP/B", "math", "bound", "estimate", "limit");
  for (std::size_t i = 0; i < p.counts.ops.size(); ++i) {
    const op& o = p.counts.ops[i];
    const op_time& t = p.times[i];
    std::printf("  %-18s %6.0f %12.3f %12.4f %12.4f %10.1f %5s %10s %10s  %s\n",
                std::string(o.name).c_str(), o.count, o.flop.value() / 1e9, in_GB(o.weights),
                in_GB(o.kv_read + o.kv_written), o.intensity().value(),
                std::string(to_string(t.math)).c_str(), ms(t.bound()).c_str(),
                ms(t.estimate()).c_str(), std::string(to_string(t.limit())).c_str());
  }
}

}  // namespace llmroof::cli
