// A measured row's parallel layout from its words: the instance a backend
// names, TP/EP/DP attention, and a disaggregated row's split.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/phrases.hpp"
#include "calibration/rows.hpp"
#include "model/readers/common.hpp"

namespace llmroof::rows {


// The devices of the instance a backend names: its TP, EP or TensorRT-LLM's
// DEP/TEP count, the larger, times its PP; 0 when it names none.
double instance_size(const std::string& t) {
  const double size = std::max({keyed_count(t, "tp"), keyed_count(t, "ep"), keyed_count(t, "dep"), keyed_count(t, "tep")});
  return size * std::max(1.0, keyed_count(t, "pp"));
}

/// The layout a datacenter engine's backend string names on its n devices
/// (tensor parallel unless it says more), in any case. "TP2 EP2", "ep=8",
/// "with expert parallel", "--enable-expert-parallel": TP attention, the
/// experts expert-parallel over the same devices. "DP attention",
/// "attention DP", "dp-attention", "enable_attention_dp":
/// data-parallel attention, beside EP experts when both are said (the
/// ep-alone layout), else beside the tensor-parallel FFN. Returns the
/// data-parallel replicas: n over the instance a "TP4" or "EP8" smaller than
/// n names (1 when it names none, or n).
int read_layout(const std::string& backend, int n, bool moe, parallel_plan& p) {
  const std::string t = detail::to_lower(backend);
  const auto alpha = [&](std::size_t i) { return i < t.size() && std::isalpha(static_cast<unsigned char>(t[i])) != 0; };
  // EP: "EP8", "ep=8", "--ep 8", "TP8,EP8" as a word of its own (not "deep",
  // "step"; "ep=1" is none), "expert parallel", TensorRT-LLM's "DEP8"
  // (attention DP with EP) and "TEP8" (TP attention with EP).
  bool ep_word = false;
  for (std::size_t at = t.find("ep"); at != std::string::npos && !ep_word; at = t.find("ep", at + 1)) {
    ep_word = (at == 0 || !alpha(at - 1)) && !alpha(at + 2);
  }
  const double ep_count = keyed_count(t, "ep"), dep = keyed_count(t, "dep"), tep = keyed_count(t, "tep");
  const bool expert_parallel = said(t, "expert parallel") || said(t, "expert-parallel") ||
                               said(t, "expert_parallel");
  const bool ep = moe && ((ep_word && ep_count != 1) || dep > 1 || tep > 1 || expert_parallel);
  // vLLM's data parallel beside expert parallel ("DP8", "--data-parallel-size
  // 8" with EP) is data-parallel attention.
  const double dp = std::max({keyed_count(t, "dp"), keyed_count(t, "data-parallel-size"),
                              keyed_count(t, "data_parallel_size")});
  const bool dp_attention = dep > 1 || (ep && dp > 1) || said(t, "dp attention") || said(t, "attention dp") ||
                            said(t, "dp-attention") || said(t, "dp_attention") ||
                            said(t, "attention-dp") || said(t, "attention_dp");
  // An instance smaller than the row's devices ("TP4" on 8, "TP8 EP8" on 16):
  // data-parallel replicas of it, each serving its share of the users. Not
  // where EP is said without a count (vLLM's "DP8 with expert parallel":
  // the experts span every rank) or a pipeline is.
  const double size = instance_size(t);
  const bool spans_all = ep && ep_count == 0 && dep == 0 && tep == 0;
  const int replicas = size >= 1 && size < n && std::fmod(n, size) == 0 && !spans_all && keyed_count(t, "pp") <= 1
                           ? static_cast<int>(n / size) : 1;
  n /= replicas;
  p.tp = n;
  if (ep && dp_attention) {
    p.tp = 1;
    p.ep = n;
  } else if (ep) {
    p.ep = n;
  } else if (dp_attention && n > 1) {
    p.dp_attention = true;
  }
  return replicas;
}

// Whether a row's text (its backend and notes, lower case) says its prefill
// and decode ran on separate instances.
bool said_disaggregated(const std::string& t) {
  // A row that calls itself aggregated ("aggregated baseline, compare with
  // the disaggregated run") is one deployment.
  for (std::size_t at = t.find("aggregated"); at != std::string::npos; at = t.find("aggregated", at + 1)) {
    if (at < 3 || t.compare(at - 3, 3, "dis") != 0) return false;
  }
  return said(t, "disagg") || said_xpyd(t).first > 0 || has(t, "prefill_workers") ||
         has(t, "prefill worker") || has(t, "num_prefill");
}

// A disaggregated row's split on its n devices from its text (backend and notes,
// lower case), or why it cannot be read.
// Each pool's instances ("2P1D", "4 prefill workers", "decode_workers=1";
// else one) and instance size (its own "TP4"/"EP4" after the pool's name,
// the larger; else a TP said for both; else n over the instances), its
// layout as read_layout reads the pool's words ("TP16 EP16 DP attention").
std::optional<disaggregated_split> read_split(const std::string& t, int n, bool moe, std::string& why) {
  // The words about one pool: from each mention of it to the next mention of
  // the other ("chunked prefill", "decode-heavy" name no pool).
  const auto mentions = [&](const char* pool) {
    std::vector<std::size_t> out;
    const std::size_t length = std::char_traits<char>::length(pool);
    for (std::size_t at = t.find(pool); at != std::string::npos; at = t.find(pool, at + 1)) {
      const std::size_t after = at + length;
      if ((at >= 8 && t.compare(at - 8, 8, "chunked ") == 0) || t.compare(after, 6, "-heavy") == 0 ||
          t.compare(after, 6, " heavy") == 0 || t.compare(after, 6, "-bound") == 0) {
        continue;
      }
      out.push_back(at);
    }
    return out;
  };
  const std::vector<std::size_t> at_prefill = mentions("prefill"), at_decode = mentions("decode");
  const auto words_of = [&](const std::vector<std::size_t>& own, const std::vector<std::size_t>& other) {
    std::string out;
    for (std::size_t at : own) {
      const auto next = std::upper_bound(other.begin(), other.end(), at);
      out += t.substr(at, next == other.end() ? std::string::npos : *next - at) + " | ";
    }
    return out;
  };
  const std::string pre = words_of(at_prefill, at_decode), dec = words_of(at_decode, at_prefill);
  // What comes before either pool is said of both ("SGLang 1P1D, TP8 EP8 attention DP; prefill ...").
  std::size_t first = t.size();
  if (!at_prefill.empty()) first = std::min(first, at_prefill.front());
  if (!at_decode.empty()) first = std::min(first, at_decode.front());
  const std::string shared = t.substr(0, first);
  const auto [px, dy] = said_xpyd(t);
  // A pool's instances: "2P1D"; "4 prefill workers"; "prefill_workers=2";
  // "prefill: 2 workers"; "4x prefill"; else one.
  const auto instances = [&](const std::string& words, const std::string& pool, int said) {
    if (said > 0) return double(said);
    for (const char* what : {" worker", " instance", " server", " node"}) {
      if (const double c = count_before(t, (" " + pool + what).c_str()); c > 0) return c;
    }
    for (const char* key : {"workers", "worker", "instances", "instance", "replicas"}) {
      if (const double c = keyed_count(words, key); c > 0) return c;
    }
    for (const char* what : {" worker", " instance"}) {
      if (const double c = count_before(words, what); c > 0) return c;
    }
    for (const std::string& before : {"x " + pool, " x " + pool}) {
      if (const double c = count_before(t, before.c_str()); c > 0) return c;
    }
    return 1.0;
  };
  const double x = instances(pre, "prefill", px), y = instances(dec, "decode", dy);
  double ps = instance_size(pre), ds = instance_size(dec);
  const double both = instance_size(shared);
  if (ps <= 0) ps = both;
  if (ds <= 0) ds = both;
  if (ps <= 0 && ds <= 0 && std::fmod(n, x + y) == 0) ps = ds = n / (x + y);
  if (ps <= 0 || ds <= 0) {
    why = "a disaggregated row whose prefill and decode instance sizes are not said";
    return std::nullopt;
  }
  if (x * ps + y * ds != n || x > 1024 || y > 1024) {
    why = "a disaggregated split of " + detail::show(x) + " x " + detail::show(ps) + " prefill and " + detail::show(y) +
          " x " + detail::show(ds) + " decode devices, not the row's " + std::to_string(n);
    return std::nullopt;
  }
  disaggregated_split s;
  s.prefill_instances = static_cast<int>(x);
  s.decode_instances = static_cast<int>(y);
  // Each pool's layout from its own words and those said of both.
  read_layout(shared + " | " + pre, static_cast<int>(ps), moe, s.prefill);
  read_layout(shared + " | " + dec, static_cast<int>(ds), moe, s.decode);
  return s;
}

}  // namespace llmroof::rows
