// Reading calibration.csv-format files and mapping each row onto a model,
// device, formats, parallel plan and workload.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>

#include "llmroof/calibration/calibrate.hpp"
#include "model/readers/common.hpp"

namespace llmroof {

namespace {

// How far above the bandwidth bound a single-stream row may be before it is
// refused: the bound counts bytes exactly for uniform formats, and mixes
// (q4_k_m: 4.89 bits averaged over Llama-3-8B) are within a few percent of it.
constexpr double roof_tolerance = 1.10;

// The memory share a served row that does not fit at its engine's default is
// predicted at (vLLM's and SGLang's --gpu-memory-utilization /
// --mem-fraction-static as people raise them for a model that barely fits).
constexpr double raised_memory_share = 0.95;

[[noreturn]] void fail_at(const std::string& file, std::size_t line, const std::string& what) {
  throw std::invalid_argument(file + ": line " + std::to_string(line) + ": " + what);
}

/// RFC 4180 records (quoted fields may hold commas, quotes and newlines).
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& file) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rec.push_back(field);
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rec.push_back(field);
      field.clear();
      if (!(rec.size() == 1 && rec[0].empty())) out.push_back(rec);
      rec.clear();
      ++line;
    } else {
      field.push_back(c);
    }
  }
  if (quoted) fail_at(file, line, "a quoted field never ends");
  if (!field.empty() || !rec.empty()) {
    rec.push_back(field);
    out.push_back(rec);
  }
  return out;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool has(const std::string& s, const char* p) { return s.find(p) != std::string::npos; }

// The whole number written just before the first `word` in `text` that has
// one ("1000" in "all prompts ... 1000 prompts"; "1,500" with thousands
// separators); 0 when none has.
double count_before(const std::string& text, const char* word) {
  const auto digit = [&](std::size_t i) { return std::isdigit(static_cast<unsigned char>(text[i])) != 0; };
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    std::size_t from = at;
    while (from > 0 && (digit(from - 1) || (text[from - 1] == ',' && from >= 2 && digit(from - 2)))) --from;
    std::string n;
    for (std::size_t i = from; i < at; ++i) {
      if (text[i] != ',') n += text[i];
    }
    if (!n.empty() && n.size() < 10) return std::stod(n);
  }
  return 0;
}

// The whole number written just after the first `word` in `text` that has
// one ("8192" in "batch sizes up to 8192)"); 0 when none has.
double count_after(const std::string& text, const char* word) {
  const std::size_t length = std::char_traits<char>::length(word);
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    std::size_t end = at + length;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) ++end;
    if (end > at + length && end - at - length < 10) return std::stod(text.substr(at + length, end - at - length));
  }
  return 0;
}

// The number of users one text says a serving benchmark kept in flight:
// "concurrency 64", "max_concurrency=64", "Concurrency: 64", "conc=64" (any
// case), "64 concurrent requests" (not "concurrently"); 0 when it says none
// ("no concurrency cap").
double said_concurrency(const std::string& text) {
  const std::string t = detail::to_lower(text);
  const auto digit = [&](std::size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
  const auto alpha = [&](std::size_t i) { return i < t.size() && std::isalpha(static_cast<unsigned char>(t[i])) != 0; };
  for (std::size_t at = t.find("conc"); at != std::string::npos; at = t.find("conc", at + 1)) {
    std::size_t i = at + 4;
    while (alpha(i)) ++i;
    const bool word = t.compare(at, i - at, "conc") == 0 || t.compare(at, i - at, "concurrency") == 0;
    while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == ':')) ++i;
    std::size_t end = i;
    while (digit(end)) ++end;
    if (word && end > i && end - i < 7) return std::stod(t.substr(i, end - i));
  }
  for (std::size_t at = t.find(" concurrent"); at != std::string::npos; at = t.find(" concurrent", at + 1)) {
    if (alpha(at + 11)) continue;  // "concurrently"
    std::size_t from = at;
    while (from > 0 && digit(from - 1)) --from;
    if (from < at && at - from < 7) return std::stod(t.substr(from, at - from));
  }
  return 0;
}

// A row's users: its source detail (a table's own column) before its notes,
// which may quote another row ("at concurrency 1 it matches ...").
double said_concurrency(const std::string& detail, const std::string& notes) {
  const double users = said_concurrency(detail);
  return users >= 1 ? users : said_concurrency(notes);
}

// The whole number after `key` written as a word of its own ("tp" in "TP8",
// "prefill_tp=4", "tp: 16"; not in "http" or "step"), past spaces, "=" and
// ":"; 0 when none follows.
double keyed_count(const std::string& t, const char* key) {
  const std::size_t length = std::char_traits<char>::length(key);
  const auto alpha = [&](std::size_t i) { return std::isalpha(static_cast<unsigned char>(t[i])) != 0; };
  for (std::size_t at = t.find(key); at != std::string::npos; at = t.find(key, at + 1)) {
    if (at > 0 && alpha(at - 1)) continue;
    std::size_t i = at + length;
    while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == ':')) ++i;
    std::size_t end = i;
    while (end < t.size() && std::isdigit(static_cast<unsigned char>(t[end])) != 0) ++end;
    if (end > i && end - i < 7) return std::stod(t.substr(i, end - i));
  }
  return 0;
}

// Whether lower-case `t` says `word` (a prefix: "disagg", "mtp") without
// negating it before ("not disaggregated", "non-disagg", "without MTP", "no
// mtp") or after ("disagg: false", "disaggregated=no", "mtp off", "mtp=0",
// "MTP disabled", "dp_attention=false").
bool said_unnegated(const std::string& t, const char* word) {
  for (std::size_t at = t.find(word); at != std::string::npos; at = t.find(word, at + 1)) {
    const std::string before = t.substr(at >= 9 ? at - 9 : 0, at >= 9 ? 9 : at);
    bool negated = has(before, "no ") || has(before, "not ") || has(before, "non-") || has(before, "non ") ||
                   has(before, "without ");
    std::size_t i = at;
    while (i < t.size() && (std::isalpha(static_cast<unsigned char>(t[i])) != 0 || t[i] == '_' || t[i] == '-')) ++i;
    while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == ':' || t[i] == '"')) ++i;
    negated = negated || t.compare(i, 5, "false") == 0 || t.compare(i, 3, "off") == 0 || t.compare(i, 4, "none") == 0 ||
              t.compare(i, 8, "disabled") == 0 ||
              (t.compare(i, 2, "no") == 0 && (i + 2 >= t.size() || std::isalpha(static_cast<unsigned char>(t[i + 2])) == 0)) ||
              (t.compare(i, 1, "0") == 0 && (i + 1 >= t.size() || std::isdigit(static_cast<unsigned char>(t[i + 1])) == 0));
    if (!negated) return true;
  }
  return false;
}

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
  const bool expert_parallel = said_unnegated(t, "expert parallel") || said_unnegated(t, "expert-parallel") ||
                               said_unnegated(t, "expert_parallel");
  const bool ep = moe && ((ep_word && ep_count != 1) || dep > 1 || tep > 1 || expert_parallel);
  // vLLM's data parallel beside expert parallel ("DP8", "--data-parallel-size
  // 8" with EP) is data-parallel attention.
  const double dp = std::max({keyed_count(t, "dp"), keyed_count(t, "data-parallel-size"),
                              keyed_count(t, "data_parallel_size")});
  const bool dp_attention = dep > 1 || (ep && dp > 1) || said_unnegated(t, "dp attention") || said_unnegated(t, "attention dp") ||
                            said_unnegated(t, "dp-attention") || said_unnegated(t, "dp_attention") ||
                            said_unnegated(t, "attention-dp") || said_unnegated(t, "attention_dp");
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

// "1P2D", "2p1d" as a word: {prefill instances, decode instances}, or {0, 0}.
std::pair<int, int> said_xpyd(const std::string& t) {
  const auto digit = [&](std::size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
  const auto alnum = [&](std::size_t i) { return i < t.size() && std::isalnum(static_cast<unsigned char>(t[i])) != 0; };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!digit(i) || (i > 0 && alnum(i - 1))) continue;
    std::size_t j = i;
    while (digit(j)) ++j;
    if (j >= t.size() || t[j] != 'p' || !digit(j + 1)) continue;
    std::size_t k = j + 1;
    while (digit(k)) ++k;
    if (k < t.size() && t[k] == 'd' && !alnum(k + 1) && j - i < 4 && k - j < 5) {
      return {std::stoi(t.substr(i, j - i)), std::stoi(t.substr(j + 1, k - j - 1))};
    }
  }
  return {0, 0};
}

// Whether a row's text (its backend and notes, lower case) says its prefill
// and decode ran on separate instances.
bool said_disaggregated(const std::string& t) {
  // A row that calls itself aggregated ("aggregated baseline, compare with
  // the disaggregated run") is one deployment.
  for (std::size_t at = t.find("aggregated"); at != std::string::npos; at = t.find("aggregated", at + 1)) {
    if (at < 3 || t.compare(at - 3, 3, "dis") != 0) return false;
  }
  return said_unnegated(t, "disagg") || said_xpyd(t).first > 0 || has(t, "prefill_workers") ||
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

// The count a device name starts with ("8x NVIDIA H200", "8 x H100",
// "4× MI300X"), 0 when it starts with none; `rest` is the name after it.
int device_count_prefix(const std::string& d, std::string& rest) {
  std::size_t i = 0;
  while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i])) != 0) ++i;
  if (i == 0 || i > 4) return 0;
  std::size_t j = i;
  while (j < d.size() && d[j] == ' ') ++j;
  if (d.compare(j, 1, "x") == 0 || d.compare(j, 1, "X") == 0 || d.compare(j, 1, "*") == 0) {
    ++j;
  } else if (d.compare(j, 2, "\u00d7") == 0) {  // the multiplication sign in UTF-8
    j += 2;
  } else {
    return 0;
  }
  if (j >= d.size() || d[j] != ' ') return 0;
  rest = d.substr(j + 1);
  return std::stoi(d.substr(0, i));
}

/// The names a dataset's device may be read as, most specific first: as
/// written; without its remarks in parentheses (but a "76-core GPU" said
/// there: "Apple M2 Ultra (76-core GPU per ggerganov setup)"); then only what
/// comes before the first comma or " / " ("AMD Ryzen AI Max+ 395 / Radeon
/// 8060S (gfx1151), Framework Desktop 128GB"; "NVIDIA RTX 3090 24GB (EVGA
/// FTW3, 450 W cap)"). A power cap or an overclock leaves the part's
/// bandwidth, what decode reads at; prefill rows of capped parts carry it.
std::vector<std::string> device_names(const std::string& written) {
  std::string counted;
  const std::string d = device_count_prefix(written, counted) > 0 ? counted : written;
  std::vector<std::string> out{d};
  std::string plain;
  std::string cores;
  int depth = 0;
  std::string inner;
  for (char c : d) {
    if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      if (--depth == 0) {
        const auto at = inner.find("-core GPU");
        if (at != std::string::npos) {
          auto from = inner.find_last_not_of("0123456789", at - 1);
          from = from == std::string::npos ? 0 : from + 1;
          cores = " " + inner.substr(from, at - from) + "-core GPU";
        }
        inner.clear();
      }
    } else if (depth > 0) {
      inner.push_back(c);
    } else {
      plain.push_back(c);
    }
  }
  plain += cores;
  out.push_back(plain);
  for (const char* cut : {",", " / "}) {
    const auto at = plain.find(cut);
    if (at != std::string::npos) out.push_back(plain.substr(0, at) + cores);
  }
  return out;
}

/// Apple's GPU-core variants of one chip, where the name gives no count:
/// the memory a row states picks the variant when the variants differ in
/// bandwidth (M3 Max and M4 Max: 36 and 96 GB are the smaller GPU's
/// configurations, 48, 64 and 128 GB the larger's, Apple's MacBook Pro tech
/// specs, Nov 2023 / Nov 2024); when they share it (M1/M2 Pro, Max, Ultra),
/// the base configuration, fewer GPU cores: decode reads at the same
/// bandwidth, prefill may be up to the core ratio slower than that variant's.
std::optional<std::string> apple_variant(const std::vector<std::string>& ids, const std::string& name) {
  if (ids.size() < 2) return std::nullopt;
  std::vector<const device*> ds;
  for (const auto& id : ids) {
    const device& d = find_device(id);
    if (d.vendor != "Apple") return std::nullopt;
    ds.push_back(&d);
  }
  const auto fewest = *std::min_element(ds.begin(), ds.end(), [](const device* a, const device* b) {
    return a->peak(math_format::bf16) < b->peak(math_format::bf16);
  });
  const bool one_bandwidth = std::all_of(ds.begin(), ds.end(), [&](const device* d) { return d->bandwidth == ds[0]->bandwidth; });
  if (one_bandwidth) return fewest->id;
  if (ds.size() != 2) return std::nullopt;
  const auto most = *std::max_element(ds.begin(), ds.end(), [](const device* a, const device* b) {
    return a->peak(math_format::bf16) < b->peak(math_format::bf16);
  });
  for (const char* gb : {"36GB", "96GB"}) {
    if (has(name, gb)) return fewest->id;
  }
  for (const char* gb : {"48GB", "64GB", "128GB"}) {
    if (has(name, gb)) return most->id;
  }
  return std::nullopt;
}

/// The catalog device a dataset's device name means (the general resolver:
/// "NVIDIA RTX 4090 24GB", "Apple M3 Max 40-Core GPU 64GB"); none when the
/// name is unknown or ambiguous. A datacenter name without its form factor
/// ("NVIDIA H100 80GB", "NVIDIA A100 80GB": NIM's tables, the llama.cpp
/// scoreboard) means the SXM module when exactly one candidate is one: the
/// part of NVIDIA's DGX/HGX benchmark systems and of most cloud offerings.
std::optional<std::string> device_id(const std::string& d) {
  for (const std::string& name : device_names(d)) {
    const auto ids = match_devices(name);
    if (ids.size() == 1) return ids.front();
    if (const auto apple = apple_variant(ids, name)) return apple;
    std::optional<std::string> sxm;
    bool several = false;
    for (const auto& id : ids) {
      if (id.find("-sxm") == std::string::npos) continue;
      several = several || sxm.has_value();
      sxm = id;
    }
    const bool form_factor_given = has(name, "PCIe") || has(name, "NVL") || has(name, "SXM");
    if (sxm && !several && !form_factor_given) return sxm;
    if (!ids.empty()) return std::nullopt;  // ambiguous: a shorter name is no better
  }
  return std::nullopt;
}

/// The catalog model a dataset's model name means (the general resolver:
/// "Llama-3.3-70B-Instruct", "gemma-3-4b-it-qat", "DeepSeek-R1 (671B MoE)").
std::optional<std::string> model_id(const std::string& m) {
  auto ids = match_models(m);
  if (ids.empty() && m.find('(') != std::string::npos) {
    // Then without its remarks: "LLaMA-7B (v1/v2 7B)".
    ids = match_models(m.substr(0, m.find('(')));
  }
  if (ids.size() != 1) return std::nullopt;
  return ids.front();
}

std::optional<precision> formats(const std::string& weights, const std::string& kv_text, const architecture& a,
                                 bool gguf) {
  // Any case: "FP8", "fp8", "NVFP4", "nvfp4".
  std::string w = weights;
  std::string kv = kv_text;
  for (std::string* t : {&w, &kv}) {
    for (char& c : *t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  // The KV cache as written ("F16", "FP8 e4m3", llama.cpp's -ctk "Q8_0",
  // TensorRT-LLM's "INT8" and "NVFP4"); anything else, "not stated" or
  // "auto", is the engines' default, 16-bit.
  const auto kv_fmt = [&]() -> numeric_format {
    if (starts(kv, "F16") || starts(kv, "FP16")) return find_format("fp16");
    if (starts(kv, "FP8")) return find_format("fp8-e4m3");
    if (starts(kv, "Q8_0")) return find_format("q8_0");
    if (starts(kv, "Q4_0")) return find_format("q4_0");
    if (starts(kv, "INT8")) return find_format("int8");
    if (starts(kv, "NVFP4") || starts(kv, "FP4")) return find_format("nvfp4");
    return find_format("bf16");
  }();
  std::optional<numeric_format> wf;
  if (starts(w, "Q4_K_M")) wf = find_format("q4_k_m");
  else if (starts(w, "Q8_0")) wf = find_format("q8_0");
  else if (starts(w, "Q4_0")) wf = find_format("q4_0");
  else if (starts(w, "F16") || starts(w, "FP16")) wf = find_format("fp16");
  else if (starts(w, "BF16")) wf = find_format("bf16");
  else if (starts(w, "FP8") || (starts(w, "W8A8") && has(w, "FP8"))) wf = find_format("fp8");
  else if (starts(w, "FP4") || starts(w, "NVFP4")) wf = find_format("nvfp4");
  // Integer formats by their packers' names: AWQ (int4 with a zero point),
  // 8-bit weight-only (GPTQ-Int8, W8A16), W8A8 int8 (SmoothQuant-style),
  // GPTQ and compressed-tensors W4A16 (symmetric int4); a bare INT4 is AWQ's,
  // as the format table's alias has it.
  else if (has(w, "AWQ")) wf = find_format("awq-int4");
  else if (has(w, "W8A16") || (has(w, "GPTQ") && (has(w, "INT8") || has(w, "8-BIT") || has(w, "8BIT"))))
    wf = find_format("int8-wo");
  else if (starts(w, "INT8") || starts(w, "W8A8")) wf = find_format("int8");
  else if (starts(w, "GPTQ") || starts(w, "W4A16")) wf = find_format("gptq-int4");
  else if (starts(w, "INT4")) wf = find_format("awq-int4");
  else if (starts(w, "MXFP4")) {
    // gpt-oss: MXFP4 experts. In the GGUF files (llama.cpp) the other weights
    // are Q8_0 (11.27 GiB for gpt-oss-20b is 4.6 bits per parameter on
    // average) and llama.cpp's kernel path decides how MXFP4 is multiplied
    // (roofline.hpp kernel_path); elsewhere attention and embeddings stay
    // 16-bit and MXFP4 runs on FP4 units.
    if (gguf) {
      precision p = precision::of(find_format("q8_0"), kv_fmt);
      p.experts = make_format("mxfp4-ggml", 4.25, math_format::bf16, "MXFP4 blocks in a GGUF file (llama.cpp)");
      return p;
    }
    precision p = precision::of(find_format("bf16"), kv_fmt);
    p.experts = find_format("mxfp4");
    return p;
  } else if (starts(w, "MLX")) {
    // MLX affine quantization: an fp16 scale and bias per group: k + 32/group bits.
    int bits = 0;
    int group = 64;
    const std::string lower = detail::to_lower(weights);
    for (int b : {8, 6, 5, 4, 3}) {
      if (has(lower, (std::to_string(b) + "-bit").c_str())) bits = b;
    }
    if (has(lower, "group 32")) group = 32;
    if (bits == 0) return std::nullopt;
    wf = make_format("mlx-q" + std::to_string(bits) + "-g" + std::to_string(group), bits + 32.0 / group,
                     math_format::bf16, "MLX affine quantization, fp16 scale and bias per group");
  }
  if (!wf) {
    // Another GGUF type by its own name ("Q4_1 (3.95 GiB)", "Q6_K", "Q5_K_M"):
    // the format table's, when it has it (q5_k_s is not there).
    std::string word = w.substr(0, w.find_first_of(" (,"));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (word.size() >= 3 && word[0] == 'q' && std::isdigit(static_cast<unsigned char>(word[1]))) {
      for (const auto& f : llmroof::formats()) {
        if (f.name == word) wf = f;
      }
    }
  }
  if (!wf) return std::nullopt;
  (void)a;
  return precision::of(*wf, kv_fmt);
}

/// Whether `s` is written as a number that is not a finite double ("inf",
/// "nan", "1e999"): a broken row, refused, where a word ("not stated") is a
/// missing value, skipped.
bool non_finite(const std::string& s) {
  try {
    std::size_t used = 0;
    const double v = std::stod(s, &used);
    return used == s.size() && !std::isfinite(v);
  } catch (const std::out_of_range&) {
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

double number(const std::string& s) {
  if (s.empty()) return 0;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return -1;
  }
  return used == s.size() ? v : -1;
}

// Tokens LM Studio's MLX engine drafts per step: mlx-lm's
// speculative_generate_step default, num_draft_tokens=2 (mlx_lm/generate.py,
// early 2025) [recalled, not re-checked here; the rows do not say].
constexpr int mlx_draft_tokens = 2;

// Sets one conditional acceptance a for every position such that the drafts
// kept per verify step, a + a^2 + ... + a^k (accepted_tokens - 1), are `kept`
// (0 < kept < k).
void with_kept_drafts(speculation& s, double kept) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    s.acceptance = {(lo + hi) / 2};
    (accepted_tokens(s) - 1 < kept ? lo : hi) = (lo + hi) / 2;
  }
  s.acceptance = {(lo + hi) / 2};
}

// A row's draft model and acceptance, or why it cannot be modelled: the
// draft's size in the backend ("+ 1.5B draft model": the target's family at
// that size) and the share of drafted tokens accepted in the notes
// ("accepted draft tokens 55.1%"), as one conditional rate a per position
// with a + a^2 + ... + a^k = k x share (the accepted drafts per step).
std::optional<speculation> drafted(const std::string& backend, const std::string& notes, const architecture& target,
                                   std::string& why) {
  const std::size_t b = backend.find("B draft");
  std::size_t start = b;
  while (start != std::string::npos && start > 0 &&
         ((backend[start - 1] >= '0' && backend[start - 1] <= '9') || backend[start - 1] == '.')) {
    --start;
  }
  if (b == std::string::npos || start == b) {
    why = "a draft model's speculative decoding, the draft not named";
    return std::nullopt;
  }
  const std::string size = backend.substr(start, b - start);
  const std::string family = target.id.substr(0, target.id.rfind('-'));
  const auto draft = model_id(family + "-" + size + "b");
  const std::size_t at = notes.find("accepted draft tokens ");
  if (!draft || at == std::string::npos) {
    why = draft ? "a draft model's speculative decoding without its acceptance"
                : "draft model '" + family + "-" + size + "b' is not in the catalog";
    return std::nullopt;
  }
  // The digits after the phrase, as a share: "55.1%" -> 0.551.
  std::size_t end = at + 22;
  while (end < notes.size() && ((notes[end] >= '0' && notes[end] <= '9') || notes[end] == '.')) ++end;
  const double share = end > at + 22 && end - at - 22 < 8 ? number(notes.substr(at + 22, end - at - 22)) / 100 : 0;
  if (!(share > 0 && share < 1)) {
    why = "a draft model's acceptance is not a share";
    return std::nullopt;
  }
  speculation s;
  s.method = spec_method::draft;
  s.draft_tokens = mlx_draft_tokens;
  s.draft = find_model(*draft);
  with_kept_drafts(s, s.draft_tokens * share);
  return s;
}

// The first number after any of `words` in `t` (lower case), past spaces,
// "=", ":", "-" and quotes ("mtp=3", "num_speculative_tokens\": 3", "accept
// length 2.18"); 0 when none follows. `ends`: where the number ends.
double number_after(const std::string& t, std::initializer_list<const char*> words, std::size_t* ends = nullptr) {
  for (const char* w : words) {
    const std::size_t length = std::char_traits<char>::length(w);
    for (std::size_t at = t.find(w); at != std::string::npos; at = t.find(w, at + 1)) {
      std::size_t i = at + length;
      while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == ':' || t[i] == '-' || t[i] == '"')) ++i;
      std::size_t end = i;
      while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) != 0 || t[end] == '.')) ++end;
      if (end > i && end - i < 10) {
        const double v = number(t.substr(i, end - i));
        if (v > 0) {
          if (ends != nullptr) *ends = end;
          return v;
        }
      }
    }
  }
  return 0;
}

// Whether `backend` names one of `releases` ("0.6") of an engine right after
// one of its `names`, in any case, past spaces, "=", "@", ":", "(" and a "v"
// ("vLLM v0.6.3", "vllm==0.6.3", "vllm-openai:v0.6.3", "SGLang (v0.4.3)");
// "0.6" is not "0.60", "--gpu-memory-utilization 0.7" no release, nor
// Dynamo's own "v0.5.1" an engine's.
bool said_release(const std::string& backend, std::initializer_list<const char*> names,
                  std::initializer_list<const char*> releases) {
  const std::string t = detail::to_lower(backend);
  const auto digit = [&](std::size_t i) { return i < t.size() && std::isdigit(static_cast<unsigned char>(t[i])) != 0; };
  for (const char* name : names) {
    const std::size_t n = std::char_traits<char>::length(name);
    for (std::size_t at = t.find(name); at != std::string::npos; at = t.find(name, at + 1)) {
      std::size_t i = at + n;
      while (i < t.size() && (t[i] == ' ' || t[i] == '=' || t[i] == '@' || t[i] == ':' || t[i] == '(' || t[i] == 'v')) {
        ++i;
      }
      for (const char* r : releases) {
        const std::size_t k = std::char_traits<char>::length(r);
        if (t.compare(i, k, r) == 0 && !digit(i + k)) return true;
      }
    }
  }
  return false;
}

// A row's multi-token-prediction, EAGLE or n-gram setup from its text (backend
// and notes, lower case), or why it cannot be modelled. Its draft tokens as written ("MTP=3", "mtp-3",
// "num_nextn_predict_layers 3", "--speculative-num-steps 3",
// "num_speculative_tokens 3", "3 draft tokens"), else 1 (the library's
// default); its acceptance when the text gives one, as one conditional rate
// per position: an accept length (tokens kept per verify step, SGLang's
// "accept length 2.18": 1 + a + ... + a^k) or the share of drafted tokens
// accepted ("accept_rate 0.797", "acceptance rate 79.7%": a + ... + a^k =
// k x share); else the method's published default (speculative_setup.hpp).
std::optional<speculation> self_drafted(const std::string& t, const architecture& target, std::string& why) {
  speculation s;
  // SGLang launches DeepSeek's MTP layers as "--speculative-algorithm EAGLE".
  if (has(t, "mtp") || has(t, "nextn") || (has(t, "eagle") && target.moe.mtp_layers > 0 && !has(t, "eagle3") &&
                                           !has(t, "eagle-3"))) {
    s.method = spec_method::mtp;
  } else if (has(t, "eagle")) {
    s.method = spec_method::eagle;
  } else if (has(t, "ngram") || has(t, "n-gram") || has(t, "prompt lookup")) {
    s.method = spec_method::ngram;
  } else {
    why = "speculative decoding by a method the row does not name";
    return std::nullopt;
  }
  // The engines' own keys first: the checkpoint's layer count is not the draft length they run.
  double k = number_after(t, {"speculative-num-steps", "speculative_num_steps", "num_speculative_tokens",
                              "num-speculative-tokens", "mtp", "num_nextn_predict_layers"});
  if (k <= 0) k = count_before(t, " draft tokens");
  if (k <= 0) k = 1;
  if (k != std::round(k) || k > 16) {
    why = "a speculative row whose draft length (" + detail::show(k) + ") is not a whole number up to 16";
    return std::nullopt;
  }
  s.draft_tokens = static_cast<int>(k);
  if (const double length = number_after(t, {"accept length", "acceptance length", "accept_length",
                                             "mean acceptance length", "acceptance_length"});
      length > 0) {
    if (!(length > 1 && length < k + 1)) {
      why = "an accept length of " + detail::show(length) + " with " + detail::show(k) +
            " draft tokens (it lies between 1 and " + detail::show(k + 1) + ")";
      return std::nullopt;
    }
    with_kept_drafts(s, length - 1);
  } else if (std::size_t end = 0;
             double share = number_after(t, {"accept_rate", "acceptance rate", "accept rate", "acceptance_rate"}, &end)) {
    // A share, or a percentage when "%" follows it ("79.7%"); "1.7" is neither.
    while (end < t.size() && t[end] == ' ') ++end;
    if (end < t.size() && t[end] == '%') share /= 100;
    if (!(share < 1)) {
      why = "an acceptance rate of " + detail::show(share) + " (a share below 1, or a percentage with its % sign)";
      return std::nullopt;
    }
    with_kept_drafts(s, k * share);
  }
  return s;
}

// The micro-batch a llama.cpp row says it ran with (`-ub 8`, `n_ubatch 2048`,
// "ubatch 512"), or 0: the first such phrase followed by a count.
double said_ubatch(const std::string& text) {
  for (const char* how : {"-ub ", "n_ubatch ", "ubatch "}) {
    if (const double n = count_after(text, how); n > 0) return n;
  }
  return 0;
}

// Requests of TensorRT-LLM's performance-overview datasets (synthetic, every
// request ISL in / OSL out): the page's table of `--num-requests` per length
// pair, more for short requests "to guarantee that the system hit a steady
// state" (docs/source/performance/perf-overview.md, "Preparing a Dataset";
// recalled, the stored rows do not copy it); 0 for a pair it does not list.
double trtllm_bench_requests(double isl, double osl) {
  struct pair {
    double isl, osl, requests;
  };
  static constexpr pair table[] = {{128, 128, 30000},   {128, 2048, 3000},  {128, 4096, 1500},
                                   {1000, 2000, 1500},  {2048, 128, 3000},  {2048, 2048, 1500},
                                   {5000, 500, 1500},   {1000, 1000, 3000}, {500, 2000, 3000},
                                   {20000, 2000, 1000}};
  for (const pair& p : table) {
    if (p.isl == isl && p.osl == osl) return p.requests;
  }
  return 0;
}

}  // namespace

// AIConfigurator's silicon rows (its silicon_sample.csv; data release 4,
// data/measured/release4/README.md) as rows of the calibration layout: each
// row's measured mean TTFT and TPOT, its layout in the words read_layout and
// read_split take, its fixed lengths and concurrency in a closed loop whose
// users run in lockstep (N identical requests, fixed lengths, all started
// together). The source is the model, so that leave-one-source-out over these
// rows leaves each model out. Rows whose layout the plans cannot hold are
// skipped with the reason.
std::vector<std::vector<std::string>> aic_records(const std::vector<std::vector<std::string>>& recs,
                                                  const std::string& path, std::vector<skipped_row>& skipped) {
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < recs[0].size(); ++i) col[recs[0][i]] = i;
  for (const char* need : {"id", "backend", "backend_version", "model_path", "system", "mode", "isl", "osl",
                           "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size",
                           "attention_dp_size", "moe_tp_size", "moe_ep_size", "silicon_ttft_ms", "silicon_tpot_ms"}) {
    if (!col.count(need)) throw std::invalid_argument(path + ": line 1: missing column '" + std::string(need) + "'");
  }
  std::vector<std::vector<std::string>> out{{"id", "source", "source_detail", "device", "n_devices", "backend", "model",
                                             "weight_format", "kv_format", "batch", "prompt_tokens", "context_depth",
                                             "gen_tokens", "metric", "value", "unit", "notes"}};
  const auto count = [](const std::string& v) { return v.empty() ? 1.0 : number(v); };
  for (std::size_t r = 1; r < recs.size(); ++r) {
    const auto& rec = recs[r];
    if (rec.size() != recs[0].size()) {
      fail_at(path, r + 1, std::to_string(rec.size()) + " fields, the header has " + std::to_string(recs[0].size()));
    }
    const auto get = [&](const char* k) { return rec[col.at(k)]; };
    const std::string id = get("id");
    const std::string engine = get("backend") == "trtllm" ? "TensorRT-LLM" : get("backend") == "sglang" ? "SGLang"
                                                                                                        : "vLLM";
    const std::string system = get("system");
    const std::string device = system == "h100_sxm" ? "NVIDIA H100 SXM5" : system == "h200_sxm" ? "NVIDIA H200 SXM"
                                                                                                : system;
    // One pool's layout: attention TP x DP, the experts' TP x EP.
    std::string why;
    const auto layout = [&](const std::string& prefix, double& devices) {
      const auto at = [&](const char* k) { return count(get((prefix + k).c_str())); };
      const double tp = at("tp_size"), dp = at("attention_dp_size"), ep = at("moe_ep_size"), pp = at("pp_size");
      devices = tp * dp * pp;
      if (pp > 1) why = "a pipeline of " + detail::show(pp) + " stages (AIConfigurator's pp_size) is not read";
      if (tp > 1 && dp > 1) {
        why = "attention TP" + detail::show(tp) + " x DP" + detail::show(dp) +
              " (a plan holds attention TP or DP over the instance, not both)";
      }
      const double n = tp * dp;
      std::string t = "TP" + detail::show(n);
      if (ep > 1) t += " EP" + detail::show(ep);
      if (dp > 1) t += " DP attention";
      return t;
    };
    std::string backend = engine + " " + get("backend_version");
    double n = 0;
    if (get("mode") == "disagg") {
      double pn = 0, dn = 0;
      const std::string pre = layout("prefill_", pn), dec = layout("decode_", dn);
      const double pw = count(get("prefill_num_workers")), dw = count(get("decode_num_workers"));
      // 248 of the 291 disaggregated rows leave both counts blank: their
      // concurrency (up to 3,584 users) ran over an unknown number of decode
      // workers, which sets each worker's batch, so they are not predicted.
      if (get("prefill_num_workers").empty() || get("decode_num_workers").empty()) {
        why = "a disaggregated row that does not say its worker counts (prefill_num_workers, decode_num_workers): "
              "its users ran over an unknown number of decode workers";
      }
      n = pw * pn + dw * dn;
      backend += ", disaggregated " + detail::show(pw) + "P" + detail::show(dw) + "D; prefill " + pre + "; decode " + dec;
    } else {
      backend += ", " + layout("", n);
    }
    if (!why.empty()) {
      skipped.push_back({id + "/ttft", why});
      skipped.push_back({id + "/tpot", why});
      continue;
    }
    // The weights the row's model runs on: the experts' format for MoE
    // checkpoints (gpt-oss, Kimi), the GEMMs' otherwise; block-scaled FP8 is FP8.
    const auto written = [](const std::string& q) {
      const std::string t = detail::to_lower(q);
      if (starts(t, "fp8")) return std::string("FP8");
      if (t == "nvfp4") return std::string("NVFP4");
      if (t == "int4_wo") return std::string("W4A16");
      if (t == "bfloat16" || t == "float16") return std::string("BF16");
      return q;
    };
    // Dense rows leave the quant modes empty and give `precision` (fp8, fp4,
    // int4); rows with neither ran the checkpoint as published (Qwen3-32B's
    // and Llama-3.1-8B-Instruct's BF16).
    const std::string precision_text = col.count("precision") ? rec[col.at("precision")] : "";
    const std::string weights = written(!get("moe_quant_mode").empty()    ? get("moe_quant_mode")
                                        : !get("gemm_quant_mode").empty() ? get("gemm_quant_mode")
                                        : precision_text == "fp4"         ? "nvfp4"
                                        : precision_text == "int4"        ? "int4_wo"
                                        : precision_text.empty()          ? "bfloat16"
                                                                          : precision_text);
    // The benchmark's users: silicon_concurrency= in the source column (a
    // disaggregated row's decode pool holds them all), else batch_size per
    // attention-DP rank.
    const std::string source_text = col.count("silicon_data_source") ? rec[col.at("silicon_data_source")] : "";
    const double said = number_after(source_text, {"silicon_concurrency="});
    const double users = said >= 1 ? said : count(get("batch_size")) * count(get("attention_dp_size"));
    const std::string detail_text = "AIConfigurator 0.12.0 silicon_sample.csv; " + source_text;
    const std::string notes = "fixed-length benchmark in lockstep, --max-concurrency " + detail::show(users);
    for (const auto& [metric_name, column] :
         {std::pair<const char*, const char*>{"ttft_ms", "silicon_ttft_ms"}, {"tpot_ms", "silicon_tpot_ms"}}) {
      out.push_back({id + (std::string(metric_name) == "ttft_ms" ? "/ttft" : "/tpot"), "aiconfigurator:" + get("model_path"),
                     detail_text, device, detail::show(n), backend, get("model_path"), weights, "not stated",
                     detail::show(users), get("isl"), "0", get("osl"), metric_name, get(column), "ms", notes});
    }
  }
  return out;
}

measurement_set read_measurements(const std::string& path) {
  // A regular file (never /dev/zero or a FIFO, whose reads do not end) of at
  // most max_csv_bytes: a measurement table is kilobytes (the shipped data and
  // the third release together are 0.8 MiB), and the work grows with its rows
  // (benchmarks/validate_limits.sh times the largest file admitted).
  constexpr std::uint64_t max_csv_bytes = 2ull << 20;
  std::uint64_t size = 0;
  const auto raw = readers::read_prefix(path, max_csv_bytes + 1, &size);
  if (size > max_csv_bytes) {
    throw std::invalid_argument(path + ": larger than " + std::to_string(max_csv_bytes >> 20) + " MiB (limit for a CSV of measurements)");
  }
  auto recs = parse_csv(std::string(raw.begin(), raw.end()), path);
  if (recs.empty()) throw std::invalid_argument(path + ": empty file");
  measurement_set out;
  if (std::find(recs[0].begin(), recs[0].end(), "silicon_ttft_ms") != recs[0].end()) {
    recs = aic_records(recs, path, out.skipped);
  }
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < recs[0].size(); ++i) col[recs[0][i]] = i;
  for (const char* need : {"id", "source", "device", "n_devices", "backend", "model", "weight_format", "kv_format",
                           "batch", "prompt_tokens", "context_depth", "gen_tokens", "metric", "value", "unit", "notes"}) {
    if (!col.count(need)) throw std::invalid_argument(path + ": line 1: missing column '" + std::string(need) + "'");
  }
  if (recs.size() == 1 && out.skipped.empty()) throw std::invalid_argument(path + ": no measurements: only the header line");
  for (std::size_t r = 1; r < recs.size(); ++r) {
    const auto& rec = recs[r];
    if (rec.size() != recs[0].size()) {
      fail_at(path, r + 1, std::to_string(rec.size()) + " fields, the header has " + std::to_string(recs[0].size()));
    }
    const auto get = [&](const char* k) { return rec[col[k]]; };
    for (const char* k : {"n_devices", "batch", "prompt_tokens", "context_depth", "gen_tokens", "value"}) {
      if (non_finite(get(k))) fail_at(path, r + 1, std::string(k) + " '" + get(k) + "' is not a finite number");
    }
    const std::string id = get("id");
    const auto skip = [&](const std::string& why) { out.skipped.push_back({id, why}); };
    const std::string notes = get("notes");
    const std::string backend = get("backend");
    if (has(notes, "SUSPECT")) {
      skip("flagged SUSPECT by the source notes");
      continue;
    }
    // Argonne's LLM-Inference-Bench ran its A100 rows on ALCF's Polaris, whose
    // nodes hold four A100-SXM4-40GB (ALCF's Polaris documentation, recalled,
    // not shipped here); the rows do not say which A100. Their end-to-end
    // latencies agree with the 40 GB part's 1,555 GB/s (MdAPE 2.3% over the
    // 21 rows, median -1.1%) and not with the 80 GB part's 2,039 (18.5%,
    // every one too fast): docs/calibration.md, session 23.
    const bool polaris = has(get("source"), "argonne-lcf/LLM-Inference-Bench") &&
                         starts(get("device"), "NVIDIA A100 (SXM/PCIe and 40/80GB variant not stated)");
    const auto dev = polaris ? std::optional<std::string>("a100-40gb-sxm") : device_id(get("device"));
    if (!dev) {
      skip("device '" + get("device") + "' is not in the catalog" +
           (match_devices(get("device")).size() > 1 ? " (ambiguous)" : ""));
      continue;
    }
    const auto mid = model_id(get("model"));
    if (!mid) {
      skip("model '" + get("model") + "' is not in the catalog");
      continue;
    }
    // The row's words in lower case, read once for the phrases below
    // (drafting, disaggregation, a stated memory share). Drafting by the
    // model's own MTP layers or an EAGLE head (a draft model is its own case
    // below); "no speculative decoding" is a baseline row.
    const std::string text = detail::to_lower(backend + " " + notes);
    const bool self_drafting = !has(text, "no speculative") && !has(backend, "draft model") &&
                               (said_unnegated(text, "mtp") || has(text, "nextn") || has(text, "eagle") ||
                                has(text, "speculative-config") || has(text, "speculative_config") || has(text, "ngram") ||
                                has(text, "n-gram") || has(text, "prompt lookup"));
    measurement m;
    m.id = id;
    m.source = get("source");
    m.arch = find_model(*mid);
    m.dev = find_device(*dev);
    m.notes = notes;
    const bool ggml = engine_spelled(backend, engine_id::llama_cpp);
    const auto pr = formats(get("weight_format"), get("kv_format"), m.arch, ggml);
    if (!pr) {
      skip("weight format '" + get("weight_format") + "' is not mapped");
      continue;
    }
    m.pr = *pr;
    // A serving benchmark's aggregate output tokens/s is decode_tps_total;
    // its total (input + output) tokens/s and requests/s are that times a
    // ratio of the lengths (`scale`, set once they are read), its mean ITL
    // the mean TPOT (vllm bench serve: one token per streamed chunk).
    // A statistic before the name ("median_tpot_ms", "mean_ttft_ms") is the
    // metric: the load model predicts means, and the rows' medians of steady
    // TPOT and ITL sit on them.
    std::string met = detail::to_lower(get("metric"));
    bool with_statistic = false;
    for (const char* stat : {"mean_", "median_", "avg_", "average_", "p50_"}) {
      if (!starts(met, stat)) continue;
      met = met.substr(std::char_traits<char>::length(stat));
      with_statistic = true;
    }
    const std::string reported = met == "total_tps_total" || met == "requests_per_s" || met == "itl_ms" ? met : "";
    if (met == "output_tps_total" || met == "total_tps_total" || met == "requests_per_s") met = "decode_tps_total";
    if (met == "itl_ms") met = "tpot_ms";
    const auto what = detail::enum_from_name<metric>(met, metric_names);
    if (!what) {
      skip("metric '" + met + "' is not known");
      continue;
    }
    m.what = *what;
    // `vllm bench serve --request-rate inf` with no concurrency cap: every
    // request released at once, the engine saturated (its own slots decide
    // how many run), as GPUStack's ShareGPT and fixed-length bursts ran.
    // trtllm-bench throughput (TensorRT-LLM's performance overview) queues a
    // whole dataset at once and lets the runtime choose its batch
    // ("max (runtime-chosen ...)"): a burst too.
    const bool bench_burst = has(backend, "trtllm-bench throughput") && starts(get("batch"), "max");
    // A serving engine's users said in the text ("concurrency 64",
    // "max_concurrency=64"): a closed loop of that many, never a burst.
    const bool serving = engine_spelled(backend, engine_id::vllm) || engine_spelled(backend, engine_id::sglang) ||
                         engine_spelled(backend, engine_id::tensorrt_llm);
    const double said_users = serving ? said_concurrency(get("source_detail"), notes) : 0;
    const bool burst = bench_burst || (get("batch").empty() &&
                                       (has(notes, "request rate inf") || has(notes, "request_rate=inf")) &&
                                       !has(notes, "max-concurrency") && said_users < 1);
    // The row's own name when it is another ("itl_ms", "median_tpot_ms").
    m.reported_metric = with_statistic ? get("metric") : reported;
    if (burst && m.what == metric::prefill_tps) {
      skip("a burst's prefill_tps is not predicted (its TPOT, TTFT, ITL, latency and throughputs are)");
      continue;
    }
    // A serving benchmark that gives its users in the text, not the batch column.
    const double batch = burst                                    ? 1.0
                         : get("batch").empty() && said_users >= 1 ? said_users
                                                                    : number(get("batch"));
    if (batch < 1) {
      skip("batch '" + get("batch").substr(0, 40) + "' is not a number (runtime-chosen batches cannot be replayed)");
      continue;
    }
    m.batch = batch;
    // Users the text gives (and the batch column agrees with) keep a closed loop.
    const bool said_loop = said_users >= 1 && said_users == batch;
    m.prompt = number(get("prompt_tokens"));
    m.depth = number(get("context_depth"));
    m.gen = number(get("gen_tokens"));
    m.value = number(get("value"));
    if (m.prompt < 0 || m.depth < 0 || m.gen < 0 || !(m.value > 0)) {
      skip("a token count or the value is not a number");
      continue;
    }
    if (m.what == metric::prefill_tps && m.prompt < 1) {
      skip("prefill_tps without a prompt length");
      continue;
    }
    if (reported == "total_tps_total" || reported == "requests_per_s") {
      if (!(m.gen >= 1)) {
        skip(reported + " without gen_tokens (the output per request it is converted by)");
        continue;
      }
    }
    // Devices as the column gives them; else the count before the device's
    // name ("8x H200"), else the instance the backend names ("TP8"), else one.
    std::string unused;
    const std::string tl = detail::to_lower(backend);
    const double instance = instance_size(tl) * std::max(1.0, keyed_count(tl, "dp"));
    const double given = number(get("n_devices"));
    const double prefixed = device_count_prefix(get("device"), unused);
    const int n = static_cast<int>(given >= 1 ? given : prefixed >= 1 ? prefixed : std::max(1.0, instance));
    // TensorRT-LLM v0.6.1's A100 table does not say per GPU; its H100 table,
    // of the same benchmark and page, does, and read per system its TP > 1
    // rows would run 5-14x under the bandwidth roof (Falcon-180B on 8 x A100:
    // 180 tokens/s at batch 128, M0581): per GPU too.
    const std::string unit = detail::to_lower(get("unit"));
    m.per_device = has(unit, "/gpu") || has(unit, "per gpu") || has(unit, "per-gpu") ||
                   (has(get("notes"), "unclear whether this is per GPU") && n > 1);
    // The engine and its kernel class (engine.hpp, src/engine/engines.cpp), the first
    // engine the backend names in this order.
    const auto key = [](engine_id e, std::string_view version, std::string_view backend_kind) {
      return std::string(find_kernel_class(e, version, backend_kind)->key);
    };
    // Of the serving engines, the one the backend names first ("SGLang v0.5,
    // TP8, flashinfer_trtllm MoE" is SGLang).
    const std::size_t at_trt = engine_position(backend, engine_id::tensorrt_llm),
                      at_vllm = engine_position(backend, engine_id::vllm),
                      at_sglang = engine_position(backend, engine_id::sglang);
    if (ggml) {
      // Builds of 2024 (and older) dequantized to FP16 for cuBLAS and had
      // flash attention opt-in (-fa): rows that do not say it ran materialize
      // the score matrix. Current builds (build numbers, 2025-26 dates, "MMQ")
      // take the int8 quantized-matmul path and turn -fa on by themselves
      // (-fa auto) unless the row says "FA off".
      const bool old_build = (has(backend, "2024") || has(backend, "2023")) && !has(backend, "MMQ");
      const std::string_view version = old_build ? "2024" : "current";
      // The backend the row names: Metal, HIP (ROCm), Vulkan, SYCL (IPEX-LLM's
      // builds too), CUDA; a row that names none ran the device's own build.
      const std::string_view kind = has(backend, "Metal")                         ? "metal"
                                    : has(backend, "ROCm") || has(backend, "HIP") ? "hip"
                                    : has(backend, "Vulkan")                      ? "vulkan"
                                    : has(backend, "SYCL")                        ? "sycl"
                                    : has(backend, "CUDA")                        ? "cuda"
                                                                                  : native_backend(m.dev);
      if (kind.empty() || !backend_runs_on(kind, m.dev)) {
        skip(kind.empty() ? "llama.cpp on " + m.dev.id + " (no GPU backend: its CPU backend is not modelled)"
                          : "llama.cpp's " + std::string(kind) + " backend does not run on " + m.dev.id +
                                " (device or backend misattributed)");
        continue;
      }
      m.engine = key(engine_id::llama_cpp, version, kind);
      m.plan.pp = n;  // llama.cpp splits layers across GPUs (a pipeline)
      const auto said = [&](const char* state) {
        for (const char* how : {"flash-attn ", "FA ", "-fa "}) {
          const std::string phrase = std::string(how) + state;
          if (has(backend, phrase.c_str()) || has(notes, phrase.c_str())) return true;
        }
        return false;
      };
      const bool said_on = said("on");
      const bool said_off = said("off");
      m.fused_attention = said_on || (!old_build && !said_off && find_kernel_class(m.engine)->fused_attention);
      // llama-bench -ub sweeps (PR #15131, #24216) and the DGX Spark table
      // (n_ubatch 2048) run prompts in passes of their own size.
      m.prefill_chunk = said_ubatch(backend);
      if (m.prefill_chunk == 0) m.prefill_chunk = said_ubatch(notes);
    } else if (at_trt != std::string::npos && at_trt < std::min(at_vllm, at_sglang)) {
      // NIM picks a TensorRT-LLM profile for FP8 on H100 unless told otherwise.
      // The 2023 releases (v0.5-v0.7: TensorRT engines, static or early
      // in-flight batching, kernels launched one by one without CUDA graphs)
      // are their own version, as llama.cpp's 2024 builds are.
      const bool early = said_release(backend, {"tensorrt-llm", "tensorrt_llm", "trt-llm", "trtllm", "tensorrt llm"}, {"0.5", "0.6", "0.7"});
      m.engine = key(engine_id::tensorrt_llm, early ? "2023" : "current", "");
      // "TP8 EP8, attention DP", "TP8 with expert parallel", attention DP
      // beside the TP MoE (enable_attention_dp).
      m.replicas = read_layout(backend, n, m.arch.is_moe(), m.plan);
      // NIM's AIPerf runs keep `batch` users in flight, each sending its next
      // request when the last completes (a closed loop, not a static batch).
      m.closed_loop = has(backend, "AIPerf") || said_loop;
      m.includes_prefill = m.what == metric::decode_tps_total && !m.closed_loop;
      // NVIDIA's FP8 checkpoints behind NIM quantize the KV cache too
      // (ModelOpt hf_quant_config kv_cache_quant_algo FP8) when the row does not say.
      // So do the FP8 and NVFP4 checkpoints of the performance overview.
      const math_format math = m.pr.weights.math;
      const bool kv_fp8 = math == math_format::fp8 || (bench_burst && math == math_format::fp4);
      if ((m.closed_loop || bench_burst) && starts(get("kv_format"), "not stated") && kv_fp8) {
        m.pr.kv = find_format("fp8-e4m3");
      }
    } else if (std::min(at_vllm, at_sglang) != std::string::npos) {
      const bool sglang = at_sglang < at_vllm;
      // SGLang v0.4.x ran DeepSeek-style models with 2024 kernels (engines.cpp: sglang@2024).
      const bool sglang_2024 = sglang && said_release(backend, {"sglang"}, {"0.4"});
      // vLLM of 2024 (0.5-0.7, whatever the row names) ran the V0 engine.
      const bool vllm_v0 =
          !sglang && (has(backend, "2024") || said_release(backend, {"vllm", "vllm-openai"}, {"0.5", "0.6", "0.7"}));
      m.engine = sglang ? key(engine_id::sglang, sglang_2024 ? "2024" : "current", "")
                        : key(engine_id::vllm, vllm_v0 ? "0.6" : "current", "");
      // "TP2 EP2" (SGLang --ep = tp, vLLM's EP group), "TP8 + DP attention"
      // (SGLang --enable-dp-attention).
      m.replicas = read_layout(backend, n, m.arch.is_moe(), m.plan);
      if (m.plan.dp_attention && !sglang) {
        skip("vLLM runs data-parallel attention only beside expert parallelism; the row names no EP");
        continue;
      }
    } else if (engine_spelled(backend, engine_id::mlx)) {
      m.engine = key(engine_id::mlx, "current", "");
    } else {
      skip("engine '" + backend.substr(0, 40) + "' is not mapped");
      continue;
    }
    if (!kv_format_supported(find_kernel_class(m.engine)->engine, m.pr.kv)) {
      skip("a " + std::string(m.pr.kv.name) + " KV cache is not one " + m.engine + " offers");
      continue;
    }
    // `--max-concurrency N` (vllm bench serve), or a serving table's
    // Concurrency column (SGLang PR 31044's "Concurrency=16"), keeps N users
    // in a closed loop; a burst saturates the engine.
    if (has(notes, "(closed loop)") || has(notes, "--max-concurrency") || has(get("source_detail"), "Concurrency=") ||
        said_loop)
      m.closed_loop = true;
    // Identical requests started together (a fixed-length benchmark): the
    // users step in lockstep (arrival_pattern::lockstep).
    m.lockstep = m.closed_loop && has(text, "lockstep");
    if (reported == "total_tps_total" || reported == "requests_per_s") {
      // Over a run: each request's prompt and answer (vllm bench serve's total
      // token and request throughput), from the output tokens/s predicted the
      // same way as the row's output_tps_total would be. A loop or burst runs
      // whole answers (predict rounds them), so its output is per rounded answer.
      const double answer = m.closed_loop || burst ? std::max(1.0, std::round(m.gen)) : m.gen;
      m.scale = reported == "requests_per_s" ? 1 / answer : (m.prompt + m.gen) / answer;
    }
    // A time in another unit than its metric's name says ("ttft_ms" in s,
    // "e2e_latency_s" in ms).
    const bool in_seconds = unit == "s" || unit == "sec" || unit == "seconds";
    const bool in_ms = unit == "ms" || unit == "milliseconds";
    if ((m.what == metric::ttft_ms || m.what == metric::tpot_ms) && in_seconds) m.scale *= 1e-3;
    if (m.what == metric::e2e_latency_s && in_ms) m.scale *= 1e3;
    if (burst) {
      m.closed_loop = m.burst = true;
      // GPUStack's notes give the block's totals "over N requests" and the
      // benchmark's "N prompts"; trtllm-bench's come from its dataset table.
      // trtllm-bench tunes its batch to the KV cache, at most the largest
      // CUDA graph the row names ("batch sizes up to 8192").
      if (bench_burst) {
        m.requests = trtllm_bench_requests(m.prompt, m.gen);
        const double graphs = count_after(get("batch"), "up to ");
        if (graphs >= 1) m.overrides.max_sequences = graphs;
      } else {
        m.requests = count_before(notes, " requests");
        if (m.requests < 1) m.requests = count_before(notes, " prompts");
      }
      if (m.requests < 1) {
        skip(bench_burst ? "a trtllm-bench run of ISL/OSL " + detail::show(m.prompt) + "/" + detail::show(m.gen) +
                               ": its dataset's request count is not in the performance overview's table"
                         : "a burst whose notes do not say how many requests it sent");
        continue;
      }
      if (m.requests > max_burst_requests) {
        skip("a burst of more than " + detail::show(max_burst_requests) +
             " requests (serve_burst simulates at most that many)");
        continue;
      }
      m.mixed_lengths = has(notes, "ShareGPT");
    }
    if (serving && said_disaggregated(text)) {
      // Prefill and decode on instances apart (Dynamo, SGLang's PD, "2P1D"):
      // the decode instance is the row's plan, the split predicts it.
      std::string why;
      m.split = read_split(text, n, m.arch.is_moe(), why);
      if (m.split && (!m.closed_loop || m.burst)) {
        why = "a disaggregated row outside a fixed-concurrency loop is not predicted (serve_disaggregated_loop)";
      }
      if (!why.empty()) {
        skip(why);
        continue;
      }
      // Nodes of 8 (HGX, OAM boards), or one NVLink domain of 72 (GB200 and
      // GB300 NVL72): instances beyond a node and hand-overs between nodes
      // cross the inter-node link.
      const int node = starts(m.dev.id, "gb200") || starts(m.dev.id, "gb300") ? 72 : 8;
      m.split->prefill.devices_per_node = m.split->decode.devices_per_node = node;
      m.plan = m.split->decode;
      m.replicas = 1;
    } else {
      m.plan.devices_per_node = std::max(8, n);
    }
    if (m.replicas > 1 && !m.closed_loop) {
      skip("data-parallel replicas (" + std::to_string(m.replicas) + " x " + std::to_string(m.plan.devices()) +
           " devices) are predicted for serving benchmarks only");
      continue;
    }
    if (m.plan.pp > m.arch.num_layers) m.plan.pp = m.arch.num_layers;
    try {
      validate(m.plan, m.arch);
      if (m.split) validate(m.split->prefill, m.arch);
    } catch (const std::invalid_argument& e) {
      skip(std::string("parallel plan: ") + e.what());
      continue;
    }
    if (m.closed_loop || (m.what == metric::e2e_latency_s && m.batch > 1)) {
      // What runs at once: the sequences the KV cache holds, at most the
      // engine's max_num_seqs (serving.hpp counts slots the same way).
      // A share the row states (vLLM's --gpu-memory-utilization, SGLang's
      // --mem-fraction-static, TensorRT-LLM's free_gpu_memory_fraction).
      const double stated = number_after(text, {"gpu-memory-utilization", "gpu_memory_utilization",
                                                     "mem-fraction-static", "mem_fraction_static",
                                                     "free_gpu_memory_fraction", "free-gpu-memory-fraction"});
      if (stated > 0 && stated <= 1) m.overrides.memory_utilization = stated;
      engine_settings es = engine_of(m);
      const double held = m.depth + m.prompt + m.gen;
      memory_plan mp = plan_memory_parallel(m.arch, m.pr, m.dev, m.plan, 1, held, es);
      if (mp.max_sequences < 1 && m.closed_loop && !(stated > 0) && es.memory_utilization < raised_memory_share) {
        // The source ran it, so its server started: people launch a model
        // that barely fits at a higher share (llm-d's gpt-oss-120b on one
        // H100, engine_memory.csv ML-013: 64.38 GiB weights, 7.38 activation
        // peak, 0.13 non-torch and 3.33 GiB of KV add up only at 0.95 of
        // 79.18 GiB). Predicted at that share; still skipped if it fails.
        m.overrides.memory_utilization = raised_memory_share;
        es = engine_of(m);
        mp = plan_memory_parallel(m.arch, m.pr, m.dev, m.plan, 1, held, es);
      }
      if (mp.max_sequences < 1) {
        skip("the engine cannot hold one sequence of " + std::to_string(int(held)) + " tokens beside the weights " +
             (stated > 0                        ? "at the memory share the row states (" + detail::show(stated) + ")"
              : m.overrides.memory_utilization ? "even at a memory share of " + detail::show(raised_memory_share)
                                               : std::string("at its memory share")) +
             " (the source ran it: launch flags or the memory model differ)");
        continue;
      }
      if (m.split && plan_memory_parallel(m.arch, m.pr, m.dev, m.split->prefill, 1, m.depth + m.prompt + 1, es)
                             .max_sequences < 1) {
        skip("a prefill instance of " + std::to_string(m.split->prefill.devices()) +
             " devices cannot hold one prompt beside the weights");
        continue;
      }
      m.max_concurrent = std::min(mp.max_sequences, es.max_sequences);
      // A burst too long to simulate is said, not thrown when predicted (a
      // ShareGPT row's answers run to the pair limit, as in predict).
      const double longest = m.mixed_lengths ? std::max(sharegpt_pair_tokens, m.prompt + m.gen) - m.prompt : m.gen;
      const length_spread spread = m.mixed_lengths ? length_spread::exponential : length_spread::fixed;
      if (m.burst && burst_cohort_steps(m.requests, m.prompt, es.max_batched_tokens, longest, m.max_concurrent,
                                        spread) > max_burst_cohort_steps) {
        skip("a burst too long to simulate (more than " + detail::show(max_burst_cohort_steps) +
             " cohort-steps: serve_burst)");
        continue;
      }
    }
    if (has(backend, "draft model") || self_drafting) {
      std::string why;
      m.spec = self_drafting ? self_drafted(text, m.arch, why) : drafted(backend, notes, m.arch, why);
      if (m.spec && m.spec->method != spec_method::draft) {
        try {
          detail::check_speculation(*m.spec, m.arch, m.plan, false, engine_of(m));
        } catch (const std::invalid_argument& e) {
          m.spec.reset();
          why = e.what();
        }
      }
      // One stream's decode, or (self-drafting) a serving benchmark, whose
      // loop or burst steps the drafts; a static batch's figures are not modelled.
      const bool single = m.what == metric::decode_tps_per_seq && m.batch == 1;
      if (!m.spec || !(single || (m.closed_loop && m.spec->method != spec_method::draft))) {
        skip(!m.spec ? why
                     : m.spec->method == spec_method::draft
                         ? "a draft model's " + met + " is not predicted (single-stream decode only)"
                         : "a speculative row's " + met +
                               " outside a serving benchmark is not predicted (single-stream decode or a loop or burst)");
        continue;
      }
    }
    if (m.what == metric::decode_tps_per_seq && !m.spec) {
      // One sequence's tokens/s at the row's batch. No kernel reads the
      // weights faster than the device's peak bandwidth:
      // a row above the bound names the wrong device or format, and no
      // profile can reach it (fitting one would only bend the others).
      const double bound =
          measured_decode_step(m, default_profile(m.dev), m.batch, m.mean_decode_context()).bound.value();
      if (m.value * bound > roof_tolerance) {
        skip("measured " + detail::show(m.value) + " tokens/s is above the bandwidth bound of " +
             detail::show(1 / bound) + " on " + m.dev.id + " (device or format misattributed)");
        continue;
      }
    }
    // Whatever the row says, it is predicted or skipped with a reason, never
    // stops a run: a layout or setup the engine refuses throws here, and a
    // deployment that serves nothing (its drafter's memory leaves no slot)
    // predicts zero or infinity.
    try {
      const double p = predict(m, default_profile(m.dev, engine_of_class(m.engine)));
      if (!(std::isfinite(p) && p > 0)) {
        skip("nothing is served: the deployment holds no request of " +
             detail::show(m.depth + m.prompt + m.gen) + " tokens (predicted " + detail::show(p) + ")");
        continue;
      }
    } catch (const std::invalid_argument& e) {
      skip(std::string("cannot be predicted: ") + e.what());
      continue;
    }
    out.rows.push_back(std::move(m));
  }
  return out;
}

measurement_set read_measurements(const std::vector<std::string>& paths) {
  if (paths.empty()) throw std::invalid_argument("points files: none given");
  measurement_set set = read_measurements(paths.front());
  for (std::size_t i = 1; i < paths.size(); ++i) {
    measurement_set more = read_measurements(paths[i]);
    set.rows.insert(set.rows.end(), std::make_move_iterator(more.rows.begin()), std::make_move_iterator(more.rows.end()));
    set.skipped.insert(set.skipped.end(), more.skipped.begin(), more.skipped.end());
  }
  return set;
}

}  // namespace llmroof
