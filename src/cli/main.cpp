// The llmroof command: plan, decode, prefill, kv, list.
//
// Exit codes: 0 success, 2 bad input (one line on stderr), 1 internal error.
// `--json` prints a stable schema (docs/cli-json.md); human output is a table
// that says GB (1e9 B) or GiB (2^30 B) explicitly.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llmroof/llmroof.hpp"
#include "report/json.hpp"

namespace {

using namespace llmroof;
using report::json;
using report::setup;

struct usage_error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// One option of the command line: its name, the value it takes, what it means.
struct option_doc {
  const char* name;
  const char* value;
  const char* text;
};

constexpr option_doc option_docs[] = {
    {"model", "ID|PATH", "catalog id (llmroof list models), or a config.json, folder, .gguf or .safetensors"},
    {"device", "ID[:N]", "catalog id or vendor name (\"GeForce RTX 4090 24GB\"), a device JSON file (fields of "
                         "'list devices --json'), or custom:memory=24GiB,bandwidth=936GB/s,bf16=71TF[,fp32=,fp8=,int8=TOPS,"
                         "fp4=,class=,vendor=,memory_type=]; N devices in tensor parallel (default 1)"},
    {"weights", "FMT", "weight format (default bf16): bf16, fp8, awq-int4, nvfp4, q4_k_m, ..."},
    {"kv", "FMT", "KV-cache format (default bf16)"},
    {"lm-head", "FMT", "format of lm_head and embeddings (default: bf16 for quantized checkpoints)"},
    {"users", "N", "concurrent users (default 1)"},
    {"batch", "N", "sequences decoded together (default 1)"},
    {"context", "C", "tokens per user: 4096, 128k (= 131072), 1m (default 4096; prefill: cached tokens, default 0)"},
    {"prompt", "P", "prompt tokens (default 2048, or the context if smaller)"},
    {"memory-utilization", "F", "share of device memory the engine uses (default: the engine's, vLLM 0.9)"},
    {"block-tokens", "N", "KV block size of the paged engine (default: the engine's, vLLM 16)"},
    {"max-num-seqs", "N", "sequences the engine schedules and profiles its sampler with (vLLM: 1024 on GPUs of >= 70 GiB but A100, else 256)"},
    {"max-num-batched-tokens", "N", "tokens of the largest forward pass (vLLM: 8192 on GPUs of >= 70 GiB but A100, else 2048)"},
    {"max-model-len", "N", "longest sequence the engine admits; it refuses to start if one cannot fit (default: --context)"},
    {"max-batch", "N", "largest batch of the table (default 1024)"},
    {"tp", "N", "tensor parallel degree (default: TP over all devices)"},
    {"pp", "N", "pipeline parallel degree (default 1)"},
    {"ep", "N", "expert parallel degree (default 1)"},
    {"nodes", "K", "K nodes of N devices each (--device ID:N); cross-node link: --inter-link"},
    {"link", "ID", "override the intra-node link (nvlink4, pcie4, ...; llmroof list links)"},
    {"inter-link", "ID", "cross-node link (default ib-ndr)"},
    {"engine", "NAME[@VER]",
     "vllm (default), sglang, tensorrt-llm, llama.cpp, ollama, mlx; vllm@0.10, llama.cpp@2024 for older releases"},
    {"offload", "F|experts", "share F of the layers, or the routed experts, in host RAM (llama.cpp)"},
    {"host", "ID", "the host CPU for --offload (default ryzen-9-7950x; llmroof list devices)"},
    {"rate", "R", "open loop: arrivals in requests/s; reports TTFT, TPOT, utilisation (with --output O)"},
    {"concurrency", "N", "closed loop: N users, each sending its next request when the last completes (with --output O)"},
    {"output", "O", "output tokens per request with --rate, --concurrency and the closed loop of --users (default 512)"},
    {"tps", "T", "per-user tokens/s target (default 10)"},
    {"ttft", "S", "time-to-first-token target: 1, 0.5s, 500ms"},
    {"scope", "S", "profiles per: global, engine or engine-kind (default engine-kind)"},
    {"write-profiles", "FILE", "write the fitted profiles as C++ rows (src/profiles_fitted.inc)"},
    {"report", "DIR", "write report.md and predictions.csv to DIR"},
    {"no-refit", "", "score the shipped profiles on the points: no fitting, no cross-validation"},
    {"write-bands", "FILE", "write the chosen scope's conformal band widths as C++ rows (src/band_widths.inc)"},
    {"filter", "TEXT", "list devices|models: only entries whose id, name, vendor, family or aliases hold every word"},
};

/// A command: what it is for, how it is called, and the only options it takes.
struct command_spec {
  const char* name;
  const char* synopsis;
  const char* summary;
  std::vector<std::string> options;
};

// Option groups that several commands share.
const std::vector<std::string> model_opts = {"model", "weights", "kv", "lm-head", "engine"};
const std::vector<std::string> layout_opts = {"device", "tp", "pp", "ep", "nodes", "link", "inter-link"};
const std::vector<std::string> memory_opts = {"memory-utilization", "block-tokens", "max-num-seqs",
                                              "max-num-batched-tokens", "max-model-len"};

std::vector<std::string> join(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const std::vector<command_spec>& commands() {
  static const std::vector<command_spec> table = {
      {"plan", "--model ID --device ID[:N] [--users N] [--context C] [--prompt P] [--rate R | --concurrency N] [--output O] ...",
       "memory plan, users that fit, decode speed against context, TTFT; its users in a closed loop (or --rate, --concurrency)",
       join({model_opts, layout_opts, memory_opts,
             {"users", "context", "prompt", "offload", "host", "rate", "concurrency", "output", "ttft"}})},
      {"decode", "--model ID --device ID[:N] [--batch N] [--context C]", "one decode step, per op",
       join({model_opts, layout_opts, {"batch", "context"}})},
      {"prefill", "--model ID --device ID[:N] [--batch N] [--prompt P] [--context C]", "one prefill, per op",
       join({model_opts, layout_opts, {"batch", "prompt", "context"}})},
      {"kv", "--model ID [--kv FMT] [--context C] [--users N]", "KV cache per token, per sequence and per user count",
       {"model", "weights", "kv", "lm-head", "engine", "block-tokens", "context", "users"}},
      {"moe", "[--model ID --device ID[:N] [--context C] [--max-batch N]]",
       "the MoE table, or one model's expert reads and step time against batch",
       join({model_opts, layout_opts, {"context", "max-batch"}})},
      {"compare", "--model A --model B --device ID[:N] [--context C] [--max-batch N]",
       "two models side by side against batch", join({model_opts, layout_opts, {"context", "max-batch"}})},
      {"users", "--model ID --device ID[:N] --tps T [--ttft S] [--context C] [--prompt P] [--output O]",
       "most users that meet a tokens/s (and TTFT) target",
       join({model_opts, layout_opts, memory_opts, {"context", "prompt", "output", "tps", "ttft"}})},
      {"calibrate", "POINTS.csv [--scope global|engine|engine-kind] [--write-profiles FILE]",
       "fit efficiency profiles to measured points", {"scope", "write-profiles"}},
      {"validate", "POINTS.csv [--no-refit] [--report DIR] [--write-bands FILE]",
       "leave-one-source-out errors of the fitted profiles, or (--no-refit) of the shipped ones",
       {"report", "no-refit", "write-bands"}},
      {"list", "devices|models|formats|links|engines [--filter TEXT]", "the catalogs (with counts)", {"filter"}},
  };
  return table;
}

const command_spec* find_command(const std::string& name) {
  for (const auto& c : commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

const option_doc* find_option(const std::string& name) {
  for (const auto& d : option_docs) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string command_names() {
  std::string out;
  for (const auto& c : commands()) out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out;
}

std::string usage_text() {
  std::string out = "llmroof — roofline estimates for LLM inference\n\nusage:\n";
  for (const auto& c : commands()) {
    char line[512];
    std::snprintf(line, sizeof line, "  llmroof %-9s %s\n", c.name, c.synopsis);
    out += line;
  }
  out += "\nEvery command takes --json (machine-readable output, schema \"llmroof.<command>/1\").\n"
         "'llmroof help COMMAND' or 'llmroof COMMAND --help' lists the options a command takes.\n";
  return out;
}

std::string command_help(const command_spec& c) {
  std::string out = "usage: llmroof " + std::string(c.name) + " " + c.synopsis + "\n\n" + c.summary + "\n\noptions:\n";
  for (const auto& name : c.options) {
    const option_doc* d = find_option(name);
    char line[512];
    std::snprintf(line, sizeof line, "  --%-28s %s\n", (name + " " + d->value).c_str(), d->text);
    out += line;
  }
  out += "  --json                         machine-readable output (schema \"llmroof." + std::string(c.name) + "/1\")\n";
  out += "  --help                         this text\n";
  return out;
}

struct options {
  std::string command;
  std::string sub;
  std::map<std::string, std::string> values;
  std::vector<std::string> models;  ///< every --model, in order (compare takes two)
  bool json = false;
  bool help = false;

  [[nodiscard]] std::optional<std::string> get(const std::string& k) const {
    auto it = values.find(k);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  /// Whether a flag option (one that takes no value) was given.
  [[nodiscard]] bool flag(const std::string& k) const { return values.count(k) > 0; }
  [[nodiscard]] std::string require(const std::string& k) const {
    auto v = get(k);
    if (!v) throw usage_error("--" + k + " is required for '" + command + "'");
    return *v;
  }
};

/// Reads the command line against the command's option schema: an option the
/// command does not take, a missing value or a stray word is a usage error.
options parse(int argc, char** argv) {
  options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) throw usage_error("missing command; run 'llmroof --help'");
  o.command = args[0];
  const command_spec* spec = find_command(o.command);
  if (spec == nullptr) throw usage_error("unknown command '" + o.command + "'; commands: " + command_names());
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    }
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      o.json = true;
    } else if (a.rfind("--", 0) == 0) {
      std::string key = a.substr(2);
      std::string value;
      const auto eq = key.find('=');
      if (eq != std::string::npos) {
        value = key.substr(eq + 1);
        key = key.substr(0, eq);
      }
      if (key == "json") throw usage_error("--json takes no value (got '" + a + "')");
      if (find_option(key) == nullptr) throw usage_error("unknown option --" + key + "; run 'llmroof " + o.command + " --help'");
      if (std::find(spec->options.begin(), spec->options.end(), key) == spec->options.end()) {
        throw usage_error("'" + o.command + "' does not take --" + key + "; run 'llmroof " + o.command + " --help'");
      }
      const bool is_flag = std::string_view(find_option(key)->value).empty();
      if (is_flag && eq != std::string::npos) throw usage_error("--" + key + " takes no value (got '" + a + "')");
      if (is_flag) {
        value = "1";
      } else if (eq == std::string::npos) {
        if (i + 1 >= args.size()) throw usage_error("--" + key + " needs a value");
        value = args[++i];
      }
      o.values[key] = value;
      if (key == "model") o.models.push_back(value);
    } else if (o.sub.empty() && (o.command == "list" || o.command == "calibrate" || o.command == "validate")) {
      o.sub = a;
    } else {
      throw usage_error("unexpected argument '" + a + "' for '" + o.command + "'");
    }
  }
  return o;
}

/// The finite number `s` spells in full ("2.5", "1e3"), or none: trailing
/// text, an empty string, inf and nan are not numbers.
std::optional<double> full_number(const std::string& s) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// "131072", "128k" (x1024), "1m" (x1048576), "1.5k".
double parse_tokens(const std::string& field, const std::string& s) {
  const auto bad = [&] {
    return usage_error("--" + field + " must be a token count like 4096 or 128k (got '" + s + "')");
  };
  if (s.empty()) throw bad();
  double mult = 1;
  std::string num = s;
  const char last = static_cast<char>(std::tolower(static_cast<unsigned char>(s.back())));
  if (last == 'k') mult = 1024;
  if (last == 'm') mult = 1024.0 * 1024.0;
  if (mult > 1) num = s.substr(0, s.size() - 1);
  const auto n = full_number(num);
  if (!n) throw bad();
  const double v = *n * mult;
  detail::require_tokens(field, v);
  return std::round(v);
}

/// "1", "0.5", "500ms", "2s" -> seconds.
double parse_seconds(const std::string& field, const std::string& s) {
  std::string num = s;
  double mult = 1;
  if (num.size() > 2 && num.substr(num.size() - 2) == "ms") {
    mult = 1e-3;
    num = num.substr(0, num.size() - 2);
  } else if (!num.empty() && num.back() == 's') {
    num.pop_back();
  }
  const auto v = full_number(num);
  if (!v) throw usage_error("--" + field + " must be a time like 1, 0.5s or 500ms (got '" + s + "')");
  detail::require_non_negative(field, *v);
  return *v * mult;
}

/// A whole count in [1, hi]: "4", "2k"; "1.5" is refused, not rounded.
double parse_count(const std::string& field, const std::string& s, double hi = 1e9) {
  std::string num = s;
  double mult = 1;
  if (!num.empty() && (num.back() == 'k' || num.back() == 'K' || num.back() == 'm' || num.back() == 'M')) {
    mult = (num.back() == 'k' || num.back() == 'K') ? 1024 : 1024.0 * 1024.0;
    num.pop_back();
  }
  const auto n = full_number(num);
  if (!n) throw usage_error("--" + field + " must be a whole number like 4 or 2k (got '" + s + "')");
  const double v = *n * mult;
  if (v != std::floor(v)) throw usage_error("--" + field + " must be a whole number (got '" + s + "')");
  if (v < 1 || v > hi) throw usage_error("--" + field + " must be in [1, " + detail::show(hi) + "] (got " + detail::show(v) + ")");
  return v;
}

/// A finite number in [lo, hi], named by its option in the message.
double parse_number(const std::string& field, const std::string& s, double lo = -1e300, double hi = 1e300,
                    bool open_low = false) {
  const auto n = full_number(s);
  if (!n) throw usage_error("--" + field + " must be a number (got '" + s + "')");
  const double v = *n;
  if ((open_low ? v <= lo : v < lo) || v > hi) {
    throw usage_error("--" + field + " must be " + (open_low ? "> " : ">= ") + detail::show(lo) +
                      (hi < 1e300 ? " and <= " + detail::show(hi) : std::string()) + " (got " + s + ")");
  }
  return v;
}

bool looks_like_path(const std::string& m) {
  std::error_code ec;
  if (std::filesystem::exists(m, ec)) return true;
  if (m.find(".json") != std::string::npos || m.find(".gguf") != std::string::npos ||
      m.find(".safetensors") != std::string::npos) {
    return true;
  }
  // "org/Model-Name" that names a catalog model is not a path.
  return m.find('/') != std::string::npos && match_models(m).empty();
}

/// Models read from files live here for the whole run (compare reads two).
std::vector<std::unique_ptr<model_source>> file_models;
/// Devices the user brings (`custom:...`, a JSON file), for the whole run.
std::vector<std::unique_ptr<device>> user_devices;

/// A catalog device, or one the user brings; a note on stderr says which
/// rates a user device lacks.
const device& device_of(const std::string& spec) {
  if (spec.rfind("custom:", 0) == 0 || spec.ends_with(".json")) {
    user_devices.push_back(std::make_unique<device>(device_from_spec(spec)));
    const device& d = *user_devices.back();
    if (const auto at = d.source.find("not given: "); at != std::string::npos) {
      std::fprintf(stderr, "note: %s: %s\n", d.id.c_str(), d.source.substr(at).c_str());
    }
    return d;
  }
  return find_device(spec);
}

setup make_setup(const options& o, bool need_device, std::optional<std::string> which = std::nullopt) {
  request q;
  const std::string model = which ? *which : o.require("model");
  if (looks_like_path(model) && !model.empty()) {
    file_models.push_back(std::make_unique<model_source>(read_model(model)));
    q.source = file_models.back().get();
    q.model = &q.source->arch;
  } else {
    q.model = &find_model(model);
  }
  if (need_device) {
    std::string dev = o.require("device");
    // ID:N, NAME:N, FILE.json:N, custom:K=V,...:N
    const bool custom = dev.rfind("custom:", 0) == 0;
    if (const auto colon = dev.rfind(':'); colon != std::string::npos && (!custom || colon > 6) &&
                                           dev.find_first_of(",=", colon) == std::string::npos) {
      const std::string count = dev.substr(colon + 1);
      const auto n = full_number(count);
      if (!n || *n != std::floor(*n) || *n < 1 || *n > 1024) {
        throw usage_error("--device ID:N needs a whole device count N in [1, 1024] per node (got '" + count + "')");
      }
      q.layout.devices_per_node = static_cast<int>(*n);
      dev = dev.substr(0, colon);
    }
    q.dev = &device_of(dev);
    q.layout.nodes = static_cast<int>(parse_count("nodes", o.get("nodes").value_or("1"), 65536));
    const auto degree = [&](const char* k) -> std::optional<int> {
      if (auto v = o.get(k)) return static_cast<int>(parse_count(k, *v, 65536));
      return std::nullopt;
    };
    q.layout.tp = degree("tp");
    q.layout.pp = degree("pp");
    q.layout.ep = degree("ep");
    if (auto l = o.get("link")) q.layout.intra = find_link(*l);
    if (auto l = o.get("inter-link")) q.layout.inter = find_link(*l);
  }
  if (auto w = o.get("weights")) q.weights = find_format(*w);
  if (auto k = o.get("kv")) q.kv = find_format(*k);
  if (auto h = o.get("lm-head")) q.lm_head = find_format(*h);
  engine_overrides& eo = q.engine_options;
  if (auto u = o.get("memory-utilization")) eo.memory_utilization = parse_number("memory-utilization", *u, 0, 1, true);
  if (auto b = o.get("block-tokens")) eo.block_tokens = static_cast<int>(parse_count("block-tokens", *b));
  if (auto t = o.get("max-num-batched-tokens")) eo.max_batched_tokens = parse_count("max-num-batched-tokens", *t);
  if (auto n = o.get("max-num-seqs")) eo.max_sequences = parse_count("max-num-seqs", *n);
  if (auto l = o.get("max-model-len")) eo.max_model_len = parse_count("max-model-len", *l);
  q.engine = o.get("engine").value_or("vllm");
  return resolve(q);
}

// ---- formatting --------------------------------------------------------------

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string thousands(double v) {
  const auto n = static_cast<long long>(std::llround(v));
  std::string s = std::to_string(n < 0 ? -n : n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<std::size_t>(i), ",");
  return (n < 0 ? "-" : "") + s;
}

std::string gib(bytes b) { return fmt("%.2f GiB", in_GiB(b)); }
std::string gb(bytes b) { return fmt("%.2f GB", in_GB(b)); }
std::string ms(seconds t) { return fmt("%.2f ms", t.value() * 1e3); }
std::string ctx_label(double c) {
  if (c >= 1024 && std::fmod(c, 1024) == 0) return thousands(c / 1024) + "k";
  return thousands(c);
}

std::string device_label(const setup& s) {
  std::string out = std::to_string(s.devices) + " x " + s.dev->name;
  const auto& p = s.parallel;
  if (s.devices > 1) {
    out += p.ep > 1 ? " (EP " + std::to_string(p.ep) + ")"
                    : " (TP " + std::to_string(p.tp) + (p.pp > 1 ? ", PP " + std::to_string(p.pp) : "") + ")";
    if (p.nodes() > 1) out += ", " + std::to_string(p.nodes()) + " nodes";
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

// ---- commands ----------------------------------------------------------------

int cmd_plan(const options& o) {
  const setup s = make_setup(o, true);
  scenario sc;
  sc.users = parse_count("users", o.get("users").value_or("1"));
  sc.context = parse_tokens("context", o.get("context").value_or("4096"));
  if (auto p = o.get("prompt")) sc.prompt = parse_count("prompt", *p);
  sc.engine = s.engine;
  sc.parallel = s.parallel;
  if (s.source != nullptr && (!o.get("weights") || !s.source->tensors)) {
    sc.stored_weights = loaded_weight_bytes(*s.source, s.pr);
  }
  if (auto off = o.get("offload")) {
    offload_plan op;
    if (*off == "experts") {
      op.experts = true;
    } else {
      op.layers = parse_number("offload", *off, 0, 1);
    }
    if (auto h = o.get("host")) op.host = device_of(*h);
    validate(op, *s.model);
    sc.offload = op;
  }
  const roofline r = s.roof();
  const plan_result res = plan(*s.model, s.pr, r, sc);
  const memory_plan& m = res.memory;

  if (auto out = o.get("output")) sc.output = parse_count("output", *out);
  const auto rate = o.get("rate") ? std::optional<double>(parse_number("rate", *o.get("rate"), 0, 1e9)) : std::nullopt;
  const auto concurrency =
      o.get("concurrency") ? std::optional<double>(parse_count("concurrency", *o.get("concurrency"))) : std::nullopt;
  const double ttft_target = o.get("ttft") ? parse_seconds("ttft", *o.get("ttft")) : 1.0;
  const served_load load = serve_load(*s.model, s.pr, r, sc, rate, concurrency, make_seconds(ttft_target));
  if (o.json) {
    std::cout << report::plan_json(s, r, res, load, sc.output).dump(2) << "\n";
    return 0;
  }

  const double users = sc.users;
  std::printf("llmroof plan: %s on %s\n", s.model->name.c_str(), device_label(s).c_str());
  std::printf("weights %s (%.4g bits), KV %s (%.4g bits), lm_head %s; engine %s, memory utilisation %.2f, KV blocks of %d tokens\n\n",
              std::string(s.pr.weights.name).c_str(), s.pr.weights.bits,
              std::string(s.pr.kv.name).c_str(), s.pr.kv.bits,
              std::string(s.pr.lm_head.name).c_str(), sc.engine.name.c_str(),
              sc.engine.memory_utilization, sc.engine.block_tokens);
  if (sc.offload) {
    std::printf("offload: %s on the host %s (%.0f GB/s): %s of weights in host RAM\n",
                sc.offload->experts ? "routed experts" : (fmt("%.0f%%", 100 * sc.offload->layers) + " of the layers").c_str(),
                sc.offload->host.name.c_str(), in_GBps(sc.offload->host.bandwidth),
                gib(host_weight_bytes(*s.model, s.pr, *sc.offload)).c_str());
  }
  if (s.source != nullptr) {
    std::printf("model read from %s (%s)%s\n", s.source->path.c_str(), s.source->arch.family.c_str(),
                s.source->vision_params > 0
                    ? (", vision tower " + fmt("%.2f", s.source->vision_params / 1e9) + "B params counted apart").c_str()
                    : "");
    for (const auto& w : s.source->warnings) std::printf("note: %s\n", w.c_str());
    std::printf("\n");
  }
  std::printf("Memory%s (1 GiB = 2^30 B, 1 GB = 1e9 B)\n", s.devices > 1 ? " per device" : "");
  std::printf("  %-34s %12s\n", "capacity", gib(m.capacity).c_str());
  std::printf("  %-34s %12s\n", ("usable (x " + fmt("%.2f", sc.engine.memory_utilization) + ")").c_str(), gib(m.usable).c_str());
  std::printf("  %-34s %12s  (%s)\n", "weights", gib(m.weights).c_str(), gb(m.weights).c_str());
  std::printf("  %-34s %12s\n", sc.engine.name == "vllm" ? "non-torch memory" : "runtime reserve", gib(m.reserve).c_str());
  std::printf("  %-34s %12s  (%s tokens, %s sequences profiled)\n", "activation peak", gib(m.activations).c_str(),
              thousands(sc.engine.max_batched_tokens).c_str(), thousands(sc.engine.max_sequences).c_str());
  std::printf("  %-34s %12s  (%s tokens in %s blocks of %d)\n", "KV budget", gib(m.kv_budget).c_str(),
              thousands(m.kv_tokens).c_str(), thousands(m.kv_blocks).c_str(), sc.engine.block_tokens);
  std::printf("  %-34s %12s B  (%.1f KiB)\n", "KV cache per token", thousands(m.kv_per_token.value()).c_str(), m.kv_per_token.value() / 1024);
  std::printf("  %-34s %12s\n", ("KV per user at " + thousands(sc.context) + " tokens").c_str(), gib(m.kv_per_sequence).c_str());
  std::printf("  %-34s %12s\n", ("KV for " + thousands(users) + " users").c_str(), gib(m.kv_needed).c_str());
  if (!m.weights_fit) {
    std::printf("\n  The weights alone do NOT fit: short by %s (%s); %s would refuse to start.\n",
                gib(make_bytes(-m.kv_budget.value())).c_str(), gb(make_bytes(-m.kv_budget.value())).c_str(),
                sc.engine.name.c_str());
  } else if (!m.starts) {
    std::printf("\n  %s would refuse to start: one sequence of %s tokens needs %s of KV, %s available; "
                "longest max_model_len that starts: %s tokens.\n",
                sc.engine.name.c_str(), thousands(m.max_model_len).c_str(),
                gib(make_bytes(m.kv_per_token.value() * m.max_model_len)).c_str(), gib(m.kv_budget).c_str(),
                thousands(m.longest_start).c_str());
  } else if (sc.context > m.max_model_len) {
    std::printf("\n  A context of %s tokens exceeds max_model_len %s: the engine rejects such requests.\n",
                thousands(sc.context).c_str(), thousands(m.max_model_len).c_str());
  } else if (m.fits) {
    std::printf("\n  %s users at %s tokens fit, with %s to spare.\n", thousands(users).c_str(),
                thousands(sc.context).c_str(), gib(m.headroom()).c_str());
  } else {
    std::printf("\n  %s users at %s tokens do NOT fit: short by %s.\n", thousands(users).c_str(),
                thousands(sc.context).c_str(), gib(m.shortfall()).c_str());
  }
  if (m.weights_fit) {
    std::printf("  Most users that fit at %s tokens: %s\n", thousands(sc.context).c_str(),
                thousands(m.max_sequences).c_str());
    if (m.starts) {
      std::printf("  Maximum concurrency for %s tokens per request (as vLLM prints it): %.2fx\n",
                  thousands(m.max_model_len).c_str(), m.max_concurrency);
    }
    std::printf("  Longest context that fits %s users: %s tokens", thousands(users).c_str(),
                thousands(m.max_context).c_str());
    if (s.model->max_context > 0 && m.max_context > s.model->max_context) {
      std::printf(" (the model supports %s)", thousands(s.model->max_context).c_str());
    }
    std::printf("\n");
  }

  std::printf("\nTime to first token, prompt of %s tokens: estimate %s, bound %s (%s-bound, %.0f tokens/s)\n",
              thousands(res.prompt).c_str(), ms(res.ttft.estimate).c_str(), ms(res.ttft.bound).c_str(),
              std::string(to_string(res.ttft.limit())).c_str(), res.ttft.tokens_per_s_estimate().value());

  std::printf("\nDecode tokens/s against context (bound = peak roofs; estimate = profile %s, eta_m %.2f)\n",
              r.efficiency().name.c_str(), r.efficiency().memory);
  std::printf("  (estimate band for one user: %.1f-%.1f t/s on an empty context, %.1f-%.1f at %s tokens; profile: %s)\n",
              res.curve.front().single_band.low, res.curve.front().single_band.high, res.curve.back().single_band.low,
              res.curve.back().single_band.high, thousands(sc.context).c_str(),
              r.efficiency().source.c_str());
  std::printf("  %9s  %-9s %11s %11s   %-28s %11s  %s\n", "context", "fits all", "1 user est", "1 user bnd",
              (thousands(users) + " users: per user est / bnd").c_str(), "total est", "limit");
  for (const auto& pt : res.curve) {
    std::printf("  %9s  %-9s %11.1f %11.1f   %13.1f / %-12.1f %11.1f  %s\n", ctx_label(pt.context).c_str(),
                pt.fits ? "yes" : "no", pt.single.tokens_per_s_estimate().value(),
                pt.single.tokens_per_s_bound().value(), pt.per_user_estimate().value(),
                pt.per_user_bound().value(), pt.total_estimate().value(),
                std::string(to_string(pt.all.limit())).c_str());
  }
  if (!res.alternatives.empty()) {
    std::printf("\nWhat would make it fit (each change alone):\n");
    std::printf("  %-26s %-5s %7s %9s %8s %14s %11s\n", "change", "fits", "users", "context", "devices",
                "t/s/user est", "total est");
    for (const alternative& alt : res.alternatives) {
      std::printf("  %-26s %-5s %7s %9s %8d %14.1f %11.1f\n", alt.change.c_str(), alt.fits ? "yes" : "no",
                  thousands(alt.users).c_str(), thousands(alt.context).c_str(), alt.devices,
                  alt.per_user_tokens_per_s(), alt.total_tokens_per_s());
    }
  }
  if (load.closed) {
    const closed_loop_result& c = *load.closed;
    std::printf("\nClosed loop: %s users, each sending its next request (%s prompt + %s output tokens) when the last "
                "completes\n", thousands(c.concurrency).c_str(), thousands(sc.prompt_tokens()).c_str(),
                thousands(sc.output).c_str());
    std::printf("  %s in the engine (%s slots: KV for %s tokens each, max_num_seqs %s), limit: %s\n",
                fmt("%.1f", c.active).c_str(), thousands(c.slots).c_str(), thousands(sc.prompt_tokens() + sc.output).c_str(),
                thousands(sc.engine.max_sequences).c_str(), c.limit.c_str());
    std::printf("  TTFT %s (waiting for a slot %s), TPOT %s = %.1f tokens/s per user; %.3g requests/s, %.0f output "
                "tokens/s total\n", ms(c.ttft).c_str(), ms(c.queue_wait).c_str(), ms(c.tpot).c_str(),
                c.tokens_per_s_per_user().value(), c.requests_per_s, c.output_tokens_per_s(sc.output));
  }
  if (const auto& open = load.open) {
    std::printf("\nLoad: %.3g requests/s, each %s prompt + %s output tokens (M/D/1 prefill queue, Little's law)\n",
                open->rate, thousands(sc.prompt_tokens()).c_str(), thousands(sc.output).c_str());
    if (open->stable) {
      std::printf("  steady state: %.1f concurrent users, utilisation %.0f%% of the %.3g requests/s capacity, "
                  "prefill share %.0f%%\n", open->users, load.max_rate > 0 ? 100 * open->rate / load.max_rate : 100.0, load.max_rate,
                  100 * open->prefill_share);
      std::printf("  TTFT %s (queueing %s), TPOT %s = %.1f tokens/s per user, %.0f tokens/s total\n",
                  ms(open->ttft).c_str(), ms(open->ttft_wait).c_str(), ms(open->tpot).c_str(),
                  open->tokens_per_s_per_user().value(), open->tokens_per_s_total().value());
    } else {
      std::printf("  NOT sustainable: the queue grows without bound (or the users it needs do not fit in memory)\n");
    }
    std::printf("  most requests/s with a mean TTFT under %s: %.3g\n", ms(load.ttft_target).c_str(), load.max_rate_at_target);
  }
  if (const auto& most = load.most) {
    std::printf("  saturation: %.3g requests/s, %.0f output tokens/s with %s requests in the engine; limit: %s\n",
                most->requests_per_s, most->output_tokens_per_s, fmt("%.1f", most->users).c_str(), most->limit.c_str());
  }
  const phase_timing& empty = res.curve.front().single;
  std::printf("\nAn empty-context decode step reads %s per token (weights %s); at %s tokens the KV cache adds %s.\n",
              gb(empty.counts.total_bytes()).c_str(), gb(empty.counts.weight_bytes()).c_str(),
              thousands(sc.context).c_str(), gb(res.curve.back().single.counts.kv_read_bytes()).c_str());
  return 0;
}

int cmd_decode(const options& o) {
  const setup s = make_setup(o, true);
  const double batch = parse_count("batch", o.get("batch").value_or("1"));
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const roofline r = s.roof();
  const phase_timing p = scenario_decode(*s.model, s.pr, r, s.parallel, batch, context);
  if (o.json) {
    std::cout << report::decode_json(s, r, batch, context, p).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof decode: %s on %s, batch %s at %s cached tokens, weights %s, KV %s\n\n",
              s.model->name.c_str(), device_label(s).c_str(), thousands(batch).c_str(),
              thousands(context).c_str(), std::string(s.pr.weights.name).c_str(),
              std::string(s.pr.kv.name).c_str());
  print_ops(p);
  std::printf("\n  step: estimate %s, bound %s (%s-bound); reads %s per step\n", ms(p.estimate).c_str(),
              ms(p.bound).c_str(), std::string(to_string(p.limit())).c_str(), gb(p.counts.total_bytes()).c_str());
  std::printf("  per user: %.1f tokens/s estimate, %.1f bound; total %.1f tokens/s estimate\n",
              1.0 / p.estimate.value(), 1.0 / p.bound.value(), p.tokens_per_s_estimate().value());
  std::printf("  ridge point (%s): %.1f FLOP/B\n", std::string(to_string(s.dev->effective_math(s.pr.weights.math))).c_str(),
              r.ridge(s.pr.weights.math).value());
  return 0;
}

int cmd_prefill(const options& o) {
  const setup s = make_setup(o, true);
  const double batch = parse_count("batch", o.get("batch").value_or("1"));
  const double prompt = parse_count("prompt", o.get("prompt").value_or("2048"));
  const double cached = parse_tokens("context", o.get("context").value_or("0"));
  const roofline r = s.roof();
  const phase_timing p = s.devices > 1 ? prefill_parallel(*s.model, s.pr, *s.dev, r.efficiency(), s.parallel, prompt, cached,
                                                                          512, batch)
                                       : prefill(*s.model, s.pr, r, prompt, cached, batch);
  if (o.json) {
    std::cout << report::prefill_json(s, batch, prompt, cached, p).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof prefill: %s on %s, %s x %s prompt tokens after %s cached, weights %s\n\n",
              s.model->name.c_str(), device_label(s).c_str(), thousands(batch).c_str(),
              thousands(prompt).c_str(), thousands(cached).c_str(), std::string(s.pr.weights.name).c_str());
  print_ops(p);
  std::printf("\n  time to first token: estimate %s, bound %s (%s-bound)\n", ms(p.estimate).c_str(),
              ms(p.bound).c_str(), std::string(to_string(p.limit())).c_str());
  std::printf("  prefill speed: %.0f tokens/s estimate, %.0f bound\n", p.tokens_per_s_estimate().value(),
              p.tokens_per_s_bound().value());
  return 0;
}

int cmd_kv(const options& o) {
  const setup s = make_setup(o, false);
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double users = parse_count("users", o.get("users").value_or("1"));
  const architecture& a = *s.model;
  const kv_breakdown kv = break_down_kv(a, s.pr.kv, context, s.engine.block_tokens);
  if (o.json) {
    std::cout << report::kv_json(s, context, users, kv).dump(2) << "\n";
    return 0;
  }
  const bytes per_seq = kv.per_sequence;
  std::printf("llmroof kv: %s, KV %s (%.4g bits)\n", a.name.c_str(), std::string(s.pr.kv.name).c_str(), s.pr.kv.bits);
  std::printf("  per token (all layers, below any window): %s B (%.1f KiB)\n",
              thousands(kv.per_token.value()).c_str(), kv.per_token.value() / 1024);
  for (const kv_layer_share& l : kv.layers) {
    if (l.kind == layer_kind::linear) {
      std::printf("  %2d linear-attention layers: constant state %s B per sequence each\n", l.layers,
                  thousands(l.state.value()).c_str());
    } else {
      std::printf("  %2d %s layers: %s B per token each, holding %s tokens at context %s\n", l.layers,
                  std::string(to_string(l.kind)).c_str(), thousands(l.per_token.value()).c_str(),
                  thousands(l.tokens_held).c_str(), thousands(context).c_str());
    }
  }
  std::printf("  one sequence at %s tokens (blocks of %d): %s (%s)\n", thousands(context).c_str(),
              s.engine.block_tokens, gib(per_seq).c_str(), gb(per_seq).c_str());
  std::printf("  %s users: %s\n", thousands(users).c_str(), gib(users * per_seq).c_str());
  return 0;
}


int cmd_moe(const options& o) {
  if (!o.get("model")) {
    if (o.json) {
      std::cout << report::moe_table_json(moe_catalog()).dump(2) << "\n";
      return 0;
    }
    std::printf("Mixture-of-Experts models: parameters (B = 1e9), active share per token\n");
    std::printf("  %-24s %10s %10s %8s %8s %6s %7s %10s\n", "model", "total B", "active B", "share", "experts", "top-k",
                "shared", "MTP B");
    for (const auto& [model, p] : moe_catalog()) {
      const architecture& a = *model;
      std::printf("  %-24s %10.1f %10.2f %7.1f%% %8d %6d %7d %10.2f\n", a.id.c_str(), p.total() / 1e9,
                  p.active() / 1e9, 100 * p.active() / p.total(), a.moe.num_experts, a.moe.experts_per_token,
                  a.moe.shared_experts, p.mtp / 1e9);
    }
    std::printf("\nactive = everything but the routed experts, plus k of them, without the embedding table.\n"
                "MTP layers are counted apart and not decoded (speculative decoding is off by default).\n");
    return 0;
  }
  const setup s = make_setup(o, true);
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double max_batch = parse_count("max-batch", o.get("max-batch").value_or("1024"));
  const roofline r = s.roof();
  const moe_analysis an = analyze_moe(*s.model, s.pr, r, context, max_batch, s.parallel);
  const weights_fit fit = s.fit(context);
  if (o.json) {
    std::cout << report::moe_json(s, an, fit).dump(2) << "\n";
    return 0;
  }
  const architecture& a = *s.model;
  const param_counts& p = an.decode.first_params;
  std::printf("llmroof moe: %s on %s, weights %s, KV %s, every sequence at %s tokens\n", a.name.c_str(),
              device_label(s).c_str(), std::string(s.pr.weights.name).c_str(), std::string(s.pr.kv.name).c_str(),
              thousands(context).c_str());
  std::printf("  %.1fB total, %.2fB active (%.1f%%): %d routed experts, top-%d, %d shared\n", p.total() / 1e9,
              p.active() / 1e9, 100 * p.active() / p.total(), a.moe.num_experts, a.moe.experts_per_token,
              a.moe.shared_experts);
  if (a.moe.mtp_layers > 0) {
    std::printf("  MTP: %d layer(s), %.2fB params, counted apart and not decoded\n", a.moe.mtp_layers, p.mtp / 1e9);
  }
  if (fit.fits) {
    std::printf("  fits on %s: weights %s of %s usable\n", device_label(s).c_str(), gib(fit.weights).c_str(),
                gib(fit.usable).c_str());
  } else {
    std::printf("  does NOT fit on %s: weights %s, short by %s (%s)\n", device_label(s).c_str(), gib(fit.weights).c_str(),
                gib(fit.short_by).c_str(), gb(fit.short_by).c_str());
  }
  std::printf("\n  %6s %16s %8s %12s %14s %11s %11s   %s\n", "batch", "experts/layer", "read", "GB/step",
              "t/s/user est", "(bound)", "t/s total", "dense same-total: GB/step, t/s/user");
  const model_comparison& c = an.decode;
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    const routing_row& route = an.routing[i];
    const phase_timing& moe = c.first[i];
    const phase_timing& dense = c.second[i];
    std::printf("  %6.0f %9.1f ± %4.1f %7.1f%% %12.2f %14.1f %11.1f %11.0f   %10.2f %8.1f\n", c.batches[i],
                route.experts_per_layer, route.experts_per_layer_sd, 100 * route.experts_per_layer / a.moe.num_experts,
                moe.counts.total_bytes().value() / 1e9, 1.0 / moe.estimate.value(), 1.0 / moe.bound.value(),
                c.batches[i] / moe.estimate.value(), dense.counts.total_bytes().value() / 1e9,
                1.0 / dense.estimate.value());
  }
  std::printf("\n  dense equivalent: same attention and layers, FFN %d wide (%.1fB params)\n", an.dense.ffn_size,
              an.decode.second_params.total() / 1e9);
  if (!an.weights_crossover) {
    std::printf("  up to batch %s the MoE step reads fewer weight bytes than the dense one\n", thousands(max_batch).c_str());
  } else {
    std::printf("  from batch %s on, the MoE step reads (within 1%%) as many weight bytes as the dense model of the\n"
                "  same total size: its advantage is gone, only its smaller FLOP remain\n",
                thousands(*an.weights_crossover).c_str());
  }
  return 0;
}

int cmd_compare(const options& o) {
  if (o.models.size() != 2) {
    throw usage_error("compare needs exactly two --model options (got " + std::to_string(o.models.size()) + ")");
  }
  const setup a = make_setup(o, true, o.models[0]);
  const setup b = make_setup(o, true, o.models[1]);
  const double context = parse_tokens("context", o.get("context").value_or("4096"));
  const double max_batch = parse_count("max-batch", o.get("max-batch").value_or("1024"));
  const roofline r = a.roof();
  const model_comparison c = compare_decode(*a.model, a.pr, *b.model, b.pr, r, context, max_batch, a.parallel);
  const weights_fit fit_a = a.fit(context), fit_b = b.fit(context);
  if (o.json) {
    std::cout << report::compare_json(a, b, c, fit_a, fit_b).dump(2) << "\n";
    return 0;
  }
  const std::string na = a.model->id;
  const std::string nb = b.model->id;
  std::printf("llmroof compare: %s vs %s on %s, weights %s / %s, every sequence at %s tokens\n", na.c_str(),
              nb.c_str(), device_label(a).c_str(), std::string(a.pr.weights.name).c_str(),
              std::string(b.pr.weights.name).c_str(), thousands(context).c_str());
  for (const auto& [side, fit, p] : {std::tuple{&a, &fit_a, c.first_params}, std::tuple{&b, &fit_b, c.second_params}}) {
    std::printf("  %-24s %7.1fB total, %6.2fB active; weights %s: %s\n", side->model->id.c_str(), p.total() / 1e9,
                p.active() / 1e9, gib(fit->weights).c_str(),
                fit->fits ? "fits" : ("does NOT fit, short by " + gib(fit->short_by)).c_str());
  }
  std::printf("\n  %6s | %-30s | %-30s | %s\n", "batch", (na + " t/s/user (bnd), GB").c_str(),
              (nb + " t/s/user (bnd), GB").c_str(), "faster");
  for (std::size_t i = 0; i < c.batches.size(); ++i) {
    const double ta = 1.0 / c.first[i].estimate.value();
    const double tb = 1.0 / c.second[i].estimate.value();
    std::printf("  %6.0f | %8.1f (%7.1f) %9.2f GB | %8.1f (%7.1f) %9.2f GB | %s\n", c.batches[i], ta,
                1.0 / c.first[i].bound.value(), c.first[i].counts.total_bytes().value() / 1e9, tb,
                1.0 / c.second[i].bound.value(), c.second[i].counts.total_bytes().value() / 1e9,
                ta > tb ? na.c_str() : nb.c_str());
  }
  if (!c.speed_crossover) {
    std::printf("\n  %s stays faster per user up to batch %s\n", na.c_str(), thousands(max_batch).c_str());
  } else {
    const double x = *c.speed_crossover;
    if (x <= 1) {
      std::printf("\n  %s is not faster than %s even at batch 1\n", na.c_str(), nb.c_str());
    } else {
      std::printf("\n  %s decodes faster per user up to batch %s; from batch %s on, %s is as fast or faster\n",
                  na.c_str(), thousands(x - 1).c_str(), thousands(x).c_str(), nb.c_str());
    }
  }
  if (c.bytes_crossover) {
    std::printf("  from batch %s on, a %s step reads as many bytes as a %s step\n",
                thousands(*c.bytes_crossover).c_str(), na.c_str(), nb.c_str());
  }
  return 0;
}

int cmd_users(const options& o) {
  const setup s = make_setup(o, true);
  scenario sc;
  sc.context = parse_tokens("context", o.get("context").value_or("4096"));
  if (auto p = o.get("prompt")) sc.prompt = parse_count("prompt", *p);
  if (auto out = o.get("output")) sc.output = parse_count("output", *out);
  sc.engine = s.engine;
  sc.parallel = s.parallel;
  if (s.source != nullptr && (!o.get("weights") || !s.source->tensors)) sc.stored_weights = loaded_weight_bytes(*s.source, s.pr);
  const double tps = parse_number("tps", o.get("tps").value_or("10"), 0, 1e9);
  const double ttft = o.get("ttft") ? parse_seconds("ttft", *o.get("ttft")) : 0.0;
  const roofline r = s.roof();
  const users_result u = max_users(*s.model, s.pr, r, sc, make_tokens_per_second(tps), make_seconds(ttft));
  if (o.json) {
    std::cout << report::users_json(s, sc.context, tps, ttft, u, sc.output).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof users: %s on %s, weights %s, KV %s, every user at %s tokens\n", s.model->name.c_str(),
              device_label(s).c_str(), std::string(s.pr.weights.name).c_str(), std::string(s.pr.kv.name).c_str(),
              thousands(sc.context).c_str());
  std::printf("  targets: at least %.1f tokens/s per user%s\n", tps,
              ttft > 0 ? (", TTFT at most " + ms(make_seconds(ttft))).c_str() : "");
  if (u.users == 0) {
    std::printf("  not even one user meets the targets (limit: %s)\n", u.limit.c_str());
    return 0;
  }
  std::printf("  most users: %s (one more breaks: %s)\n", thousands(u.users).c_str(), u.limit.c_str());
  std::printf("  each gets %.1f tokens/s, %.0f tokens/s in total; a new arrival waits %s for its first token\n",
              1.0 / u.step.estimate.value(), u.users / u.step.estimate.value(), ms(u.ttft).c_str());
  if (u.loop.concurrency > 0) {
    const closed_loop_result& c = u.loop;
    std::printf("  in a closed loop (%s-token prompts, %s-token answers, the next sent when one completes): TTFT %s, "
                "%.1f tokens/s each, %.0f output tokens/s in total\n", thousands(sc.prompt_tokens()).c_str(),
                thousands(sc.output).c_str(), ms(c.ttft).c_str(), c.tokens_per_s_per_user().value(),
                c.output_tokens_per_s(sc.output));
  }
  // The curve against users: what each user and the server get.
  std::printf("\n  %8s %16s %16s %8s\n", "users", "t/s per user", "t/s total", "fits");
  std::vector<double> ns;
  for (double n = 1; n < u.users * 2 && n <= 4096; n *= 2) ns.push_back(n);
  if (std::find(ns.begin(), ns.end(), u.users) == ns.end()) ns.push_back(u.users);
  std::sort(ns.begin(), ns.end());
  for (double n : ns) {
    const phase_timing step = scenario_decode(*s.model, s.pr, r, sc.parallel, n, sc.context);
    const bool fits = plan_memory_parallel(*s.model, s.pr, *s.dev, sc.parallel, n, sc.context, sc.engine,
                                           sc.stored_weights).fits;
    std::printf("  %8s %16.1f %16.0f %8s%s\n", thousands(n).c_str(), 1.0 / step.estimate.value(),
                n / step.estimate.value(), fits ? "yes" : "no", n == u.users ? "   <- most users" : "");
  }
  return 0;
}

void require_rows(const measurement_set& set, const std::string& file) {
  if (set.rows.empty()) {
    throw usage_error(file + ": no row maps onto a catalog model and device (" + std::to_string(set.skipped.size()) +
                      " skipped)");
  }
}

int cmd_calibrate(const options& o) {
  if (o.sub.empty()) throw usage_error("calibrate needs a points file: llmroof calibrate points.csv");
  const measurement_set set = read_measurements(o.sub);
  require_rows(set, o.sub);
  const profile_scope scope = scope_from_name(o.get("scope").value_or("engine-kind"));
  const profile_table t = fit_profiles(set.rows, scope);
  if (auto out = o.get("write-profiles")) {
    std::ofstream f(*out);
    if (!f) throw usage_error("--write-profiles: cannot write '" + *out + "'");
    f << "// Generated by: llmroof calibrate " << o.sub << " --scope " << o.get("scope").value_or("engine-kind")
      << " --write-profiles " << *out << "\n"
      << "// (the scope `llmroof validate` chooses by leave-one-source-out cross-validation)\n";
    write_profile_rows(f, t);
    f.flush();
    if (!f) throw usage_error("--write-profiles: writing '" + *out + "' failed (disk full?)");
  }
  if (o.json) {
    std::cout << report::calibrate_json(set, scope, t).dump(2) << "\n";
    return 0;
  }
  std::printf("llmroof calibrate: %zu points mapped, %zu skipped (llmroof validate lists why); scope: %s\n\n",
              set.rows.size(), set.skipped.size(), std::string(to_string(scope)).c_str());
  std::printf("  %-26s %6s %15s %15s %9s %9s %17s %17s %9s %17s %8s\n", "group", "points", "eta_m", "eta_c", "attention",
              "kv share", "per step", "per kernel", "cap", "per request", "MdAPE");
  for (const auto& [key, r] : t.fits) {
    const std::string cap = r.profile.stream_cap > 0 ? fmt("%.2f TB/s", r.profile.stream_cap / 1e12) : "-";
    std::printf("  %-26s %6zu %7.3f ± %5.3f %7.3f ± %5.3f %9.3f %9.3f %7.2f ± %5.2f ms %7.1f ± %5.1f us %9s %7.1f ± %5.1f ms"
                " %7.1f%%\n",
                key.empty() ? "global" : key.c_str(), r.points, r.profile.memory, r.memory_sd, r.profile.compute,
                r.compute_sd, r.profile.attention, r.profile.kv_memory, r.profile.per_step.value() * 1e3,
                r.per_step_sd * 1e3, r.profile.per_kernel.value() * 1e6, r.per_kernel_sd * 1e6, cap.c_str(),
                r.profile.per_request.value() * 1e3, r.per_request_sd * 1e3, 100 * r.median_ape);
  }
  std::printf("\n  MdAPE here is in-sample; llmroof validate gives cross-validated errors.\n");
  return 0;
}

std::string likely_reason(const measurement& m, double ratio) {
  // Tokens/s metrics over-predict above 1; times (TTFT, TPOT, latency) below.
  const bool time_metric = m.what == metric::ttft_ms || m.what == metric::tpot_ms || m.what == metric::e2e_latency_s;
  const bool too_fast = time_metric ? ratio < 1 : ratio > 1;
  if (m.notes.find("uncertain") != std::string::npos || m.notes.find("not clear") != std::string::npos) {
    return "the source marks this reading as uncertain";
  }
  if (m.closed_loop) {
    return too_fast ? "fixed-concurrency benchmark: request handling and prefill interference under in-flight "
                      "batching are not modelled"
                    : "fixed-concurrency benchmark: the queue forms later than the KV slots predict";
  }
  if (m.plan.pp > 1 && !decode_metric(m.what)) {
    return "llama.cpp layer split over " + std::to_string(m.plan.pp) +
           " GPUs: the prompt pipelines far less than micro-batching allows (70B Q4_K_M on 4 GPUs prefills no "
           "faster than on one)";
  }
  if (m.plan.pp > 1) return "llama.cpp layer split over " + std::to_string(m.plan.pp) + " GPUs: per-GPU overheads and PCIe hops beyond the model";
  if (m.includes_prefill) return "throughput over the whole static-batch run (prefill, scheduling) measured end to end";
  if (!decode_metric(m.what) && m.prompt + m.depth >= 4096) {
    return "long prompt: attention cost depends on the kernel (FlashAttention or not) more than on the roofs";
  }
  if (decode_metric(m.what) && m.batch == 1 && too_fast && m.dev.memory_kind_of() == memory_kind::hbm) {
    return "batch-1 decode GEMMs on HBM stream ~1.1 TB/s whatever the peak (llama.cpp on A100/H100, TensorRT-LLM 0.5 "
           "on H100): short kernels keep too few bytes in flight; the points this engine's fit saw do not show it";
  }
  if (m.arch.is_moe()) return "MoE kernels (routing, grouped GEMMs) reach less than dense kernels";
  if (m.dev.vendor == "Apple") return "this Apple GPU reaches a different share of its bandwidth than its class";
  return too_fast ? "predicted too fast: this device/engine pair reaches less than its group's efficiency"
                  : "predicted too slow: this device/engine pair beats its group's efficiency";
}

int cmd_validate(const options& o) {
  if (o.sub.empty()) throw usage_error("validate needs a points file: llmroof validate points.csv");
  const measurement_set set = read_measurements(o.sub);
  require_rows(set, o.sub);
  if (auto dir = o.get("report")) {  // before the work, not after it
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec || !std::filesystem::is_directory(*dir, ec)) {
      throw usage_error("--report: cannot create the folder '" + *dir + "'" + (ec ? " (" + ec.message() + ")" : ""));
    }
  }
  const bool refit = !o.flag("no-refit");
  if (!refit && o.get("write-bands")) throw usage_error("--write-bands needs the cross-validation (drop --no-refit)");
  const validation val = validate(set.rows, refit);
  const validation_scope* best = &val.best();
  if (auto out = o.get("write-bands")) {
    std::ofstream f(*out);
    if (!f) throw usage_error("--write-bands: cannot write '" + *out + "'");
    f << "// Generated by: llmroof validate " << o.sub << " --write-bands " << *out << " (scope " << best->name
      << ", " << best->predictions.size() << " points)\n";
    write_band_widths(f, conformal_widths(best->predictions));
    f.flush();
    if (!f) throw usage_error("--write-bands: writing '" + *out + "' failed (disk full?)");
  }
  std::ostringstream md;
  md << "# llmroof validation against " << o.sub << "\n\n"
     << set.rows.size() << " points mapped, " << set.skipped.size() << " skipped (listed below). ";
  if (refit) {
    md << "Leave-one-source-out cross-validation: every source's points are predicted by profiles fitted to the "
       << "other sources only. The chosen scope has the lowest sum of single-stream decode and prefill MdAPE; within "
       << "0.1 point the lower MdAPE over all decode points, then the finer scope (its extra groups hold one source "
       << "each, which this validation cannot score).\n\n";
  } else {
    md << "Every point predicted with the profiles llmroof ships (--no-refit: no fitting, no cross-validation): "
       << "what it answers out of the box.\n\n";
  }
  md << "| profiles | decode MdAPE | single-stream decode MdAPE | prefill MdAPE |\n|---|---|---|---|\n";
  for (const auto& r : val.scopes) {
    md << "| " << r.name << (&r == best && refit ? " (chosen)" : "") << " | " << fmt("%.1f%%", 100 * r.decode)
       << " | " << fmt("%.1f%%", 100 * r.single) << " | " << fmt("%.1f%%", 100 * r.prefill) << " |\n";
  }
  md << "\n## By metric (" << best->name << ")\n\nBand coverage: the share of points whose measurement lies inside "
     << "the band (the profile one standard error slower to one faster, widened to the metric's 68th-percentile "
     << "error on the other sources' points).\n\n"
     << "| metric | points | MdAPE | band coverage |\n|---|---|---|---|\n";
  for (const metric_summary& x : best->metrics) {
    md << "| " << to_string(x.what) << " | " << x.points << " | " << fmt("%.1f%%", 100 * x.mdape) << " | "
       << fmt("%.0f%%", 100 * x.band_coverage) << " |\n";
  }
  // The two headline figures per engine.
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> engines;
  for (const auto& p : best->predictions) {
    if (p.row->what == metric::decode_tps_per_seq && p.row->batch == 1) engines[p.row->engine].first.push_back(p.error());
    if (p.row->what == metric::prefill_tps) engines[p.row->engine].second.push_back(p.error());
  }
  const auto cell = [](const std::vector<double>& v) {
    return v.empty() ? std::string("- | -") : std::to_string(v.size()) + " | " + fmt("%.1f%%", 100 * median(v));
  };
  md << "\n## Single-stream decode and prefill tokens/s per engine (" << best->name << ")\n\n"
     << "| engine | single-stream decode points | MdAPE | prefill points | MdAPE |\n|---|---|---|---|---|\n";
  for (const auto& [eng, v] : engines) md << "| " << eng << " | " << cell(v.first) << " | " << cell(v.second) << " |\n";
  // Breakdown of the chosen scope by metric, engine and memory kind.
  std::map<std::string, std::vector<double>> groups;
  for (const auto& p : best->predictions) {
    groups[std::string(to_string(p.row->what)) + " | " + p.row->engine + " | " +
           std::string(to_string(p.row->dev.memory_kind_of()))]
        .push_back(p.error());
  }
  md << "\n## By metric, engine and memory kind (" << best->name << ")\n\n"
     << "| metric | engine | memory | points | MdAPE | worst APE |\n|---|---|---|---|---|---|\n";
  for (const auto& [k, v] : groups) {
    md << "| " << k << " | " << v.size() << " | " << fmt("%.1f%%", 100 * median(v)) << " | "
       << fmt("%.0f%%", 100 * *std::max_element(v.begin(), v.end())) << " |\n";
  }
  // The worst ten overall, then per engine, each with its likely reason.
  const auto worst_table = [&](const std::string& title, const std::string& engine) {
    std::vector<const cv_prediction*> worst;
    for (const auto& p : best->predictions) {
      if (engine.empty() || p.row->engine == engine) worst.push_back(&p);
    }
    std::sort(worst.begin(), worst.end(), [](auto* a, auto* b) { return a->error() > b->error(); });
    md << "\n## " << title << "\n\n| id | device | model | metric | measured | predicted | error | likely reason |\n"
       << "|---|---|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < worst.size() && i < 10; ++i) {
      const auto& p = *worst[i];
      md << "| " << p.row->id << " | " << p.row->dev.id << " x" << p.row->plan.devices() << " | " << p.row->arch.id
         << " " << p.row->pr.weights.name << " | " << to_string(p.row->what) << " | " << fmt("%.4g", p.row->value)
         << " | " << fmt("%.4g", p.predicted) << " | " << fmt("%.0f%%", 100 * p.error()) << " | "
         << likely_reason(*p.row, p.predicted / p.row->value) << " |\n";
    }
  };
  worst_table("Worst ten points", "");
  std::set<std::string> engine_names;
  for (const auto& p : best->predictions) engine_names.insert(p.row->engine);
  for (const auto& e : engine_names) worst_table("Worst ten points of " + e, e);
  md << "\n## Rows not mapped\n\n| id | reason |\n|---|---|\n";
  for (const auto& s : set.skipped) md << "| " << s.id << " | " << s.reason << " |\n";
  if (auto dir = o.get("report")) {
    const auto md_path = std::filesystem::path(*dir) / "report.md";
    std::ofstream md_file(md_path);
    md_file << md.str();
    md_file.flush();
    if (!md_file) throw usage_error("--report: cannot write '" + md_path.string() + "'");
    const auto csv_path = std::filesystem::path(*dir) / "predictions.csv";
    std::ofstream csv(csv_path);
    csv << "id,engine,device,memory_kind,model,metric,measured,predicted,low,high,ape\n";
    for (const auto& p : best->predictions) {
      csv << p.row->id << "," << p.row->engine << "," << p.row->dev.id << "," << to_string(p.row->dev.memory_kind_of())
          << "," << p.row->arch.id << "," << to_string(p.row->what) << "," << p.row->value << "," << p.predicted << ","
          << fmt("%.6g", p.low) << "," << fmt("%.6g", p.high) << "," << p.error() << "\n";
    }
    csv.flush();
    if (!csv) throw usage_error("--report: cannot write '" + csv_path.string() + "'");
  }
  if (o.json) {
    std::cout << report::validate_json(set, val, refit).dump(2) << "\n";
    return 0;
  }
  std::cout << md.str();
  return 0;
}

/// Whether every word of `filter` appears (case-insensitive) in one of `fields`.
bool matches_filter(const std::string& filter, const std::vector<std::string>& fields) {
  std::string hay;
  for (const auto& f : fields) hay += detail::to_lower(f) + "\n";
  std::istringstream words(detail::to_lower(filter));
  for (std::string w; words >> w;) {
    if (hay.find(w) == std::string::npos) return false;
  }
  return true;
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
      std::printf("%-28s %-11s %7.0f %8.0f %8.1f %8.1f %8.1f  %-48s  %s\n", d->id.c_str(),
                  std::string(to_string(d->klass)).c_str(), in_GiB(d->memory), in_GBps(d->bandwidth),
                  in_TFLOPS(d->published_peak(math_format::fp32)), in_TFLOPS(d->peak(math_format::bf16)),
                  in_TFLOPS(d->published_peak(math_format::int8)), d->name.c_str(), short_source(d->source).c_str());
    }
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
      for (const auto& n : engine_names()) j.push_back(report::engine_json(find_engine(n)));
      std::cout << j.dump(2) << "\n";
      return 0;
    }
    std::printf("%-14s %6s %7s %10s %9s %9s  %s\n", "engine", "util", "block", "batched", "seqs", "reserve", "source");
    for (const auto& n : engine_names()) {
      const engine_settings e = find_engine(n);
      std::printf("%-14s %6.2f %7d %10.0f %9.0f %5.2f GiB  %s\n", e.name.c_str(), e.memory_utilization, e.block_tokens,
                  e.max_batched_tokens, e.max_sequences, in_GiB(e.runtime_reserve), e.source.c_str());
    }
    std::printf("\nvLLM sizes max_num_batched_tokens and max_num_seqs by GPU (8192 and 1024 on GPUs of >= 70 GiB\n"
                "other than the A100, else 2048 and 256); older releases: --engine vllm@0.10.\n");
    return 0;
  }
  throw usage_error("list needs one of: devices, models, formats, links, engines (got '" + o.sub + "')");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string first = argc >= 2 ? argv[1] : "";
    if (first == "--help" || first == "-h" || first == "help") {
      if (first == "help" && argc >= 3) {
        const command_spec* c = find_command(argv[2]);
        if (c == nullptr) throw usage_error("unknown command '" + std::string(argv[2]) + "'; commands: " + command_names());
        std::cout << command_help(*c);
      } else {
        std::cout << usage_text();
      }
      return 0;
    }
    if (first == "--version") {
      std::cout << "llmroof " << llmroof::version << "\n";
      return 0;
    }
    const options o = parse(argc, argv);
    if (o.help) {
      std::cout << command_help(*find_command(o.command));
      return 0;
    }
    using handler = int (*)(const options&);
    static const std::map<std::string, handler> dispatch = {
        {"plan", cmd_plan},           {"decode", cmd_decode}, {"prefill", cmd_prefill},    {"kv", cmd_kv},
        {"moe", cmd_moe},             {"compare", cmd_compare}, {"users", cmd_users},      {"list", cmd_list},
        {"calibrate", cmd_calibrate}, {"validate", cmd_validate}};
    return dispatch.at(o.command)(o);
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();  // one line, whatever a file name or value held
    for (char& c : what) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::cerr << "llmroof: error: " << what << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmroof: internal error: " << e.what() << "\n";
    return 1;
  }
}
