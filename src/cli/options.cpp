// The option schema, the command line and the deployment it asks for.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli.hpp"

namespace llmroof::cli {

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
                         "fp4=,class=,vendor=,memory_type=]; N devices in tensor parallel (llama.cpp: split by layers; default 1)"},
    {"weights", "FMT", "weight format: bf16, fp8, awq-int4, nvfp4, q4_k_m, ... (default: a model file's own, else the published checkpoint's, else bf16)"},
    {"kv", "FMT", "KV-cache format (default bf16)"},
    {"lm-head", "FMT", "format of lm_head and embeddings (default: bf16 for quantized checkpoints)"},
    {"users", "N", "concurrent users (default 1)"},
    {"batch", "N", "sequences decoded together (default 1)"},
    {"context", "C", "tokens per user: 4096, 128k (= 131072), 1m (default 4096; longer than --prompt + --output: a "
                     "conversation growing to it, each request a turn over the cached earlier ones; prefill: cached "
                     "tokens, default 0)"},
    {"prompt", "P", "prompt tokens (default 2048, or the context if smaller)"},
    {"prefix", "P", "prompt tokens every request shares (a system prompt, tools): a prefix-cache hit prefills only the "
                    "rest; block-sharing engines (vLLM, SGLang) hold it once"},
    {"prefix-hit", "H", "share of requests that find --prefix cached (default 1)"},
    {"arrivals", "mixed|lockstep", "how the closed loop's requests meet: mixed (default: users drift apart) or "
                                   "lockstep (identical requests started together, as a fixed-length benchmark)"},
    {"prefix-caching", "on|off", "the engine's prefix cache (default: on; vLLM before 0.8 and TensorRT-LLM 2023: off)"},
    {"memory-utilization", "F", "share of device memory the engine uses (default: the engine's, vLLM 0.9)"},
    {"block-tokens", "N", "KV block size of the paged engine (default: the engine's, vLLM 16)"},
    {"max-num-seqs", "N", "sequences the engine schedules and profiles its sampler with (vLLM: 1024 on GPUs of >= 70 GiB but A100, else 256)"},
    {"max-num-batched-tokens", "N", "tokens of the largest forward pass (vLLM: 8192 on GPUs of >= 70 GiB but A100, else 2048)"},
    {"max-model-len", "N", "longest sequence the engine admits; it refuses to start if one cannot fit (default: --context)"},
    {"max-batch", "N", "largest batch of the table (default 1024)"},
    {"tp", "N", "tensor parallel degree (default: TP over all devices; llama.cpp: a layer split, --tp for its row split)"},
    {"pp", "N", "pipeline parallel degree (default 1)"},
    {"ep", "N", "expert parallel degree (default 1): alone, data-parallel attention beside expert-parallel experts; "
                "with --tp, tensor-parallel attention and the experts in N groups"},
    {"dp-attention", "", "data-parallel attention beside a tensor-parallel FFN over the --tp devices "
                         "(SGLang --enable-dp-attention)"},
    {"nodes", "K", "K nodes of N devices each (--device ID:N); cross-node link: --inter-link"},
    {"link", "ID", "override the intra-node link (nvlink4, pcie4, ...; llmroof list links)"},
    {"inter-link", "ID", "cross-node link (default ib-ndr)"},
    {"engine", "NAME[-BACKEND][@VER]",
     "vllm, sglang, tensorrt-llm, llama.cpp, ollama, mlx (default: vllm on NVIDIA and datacenter GPUs, llama.cpp on Apple, CPUs and other GPUs); vllm@0.10, llama.cpp@2024 for older releases; llama.cpp-vulkan, -hip (-rocm), -sycl, -cuda, -metal (ollama: -cuda, -hip, -metal) for a backend (default: the device's own)"},
    {"offload", "F|experts|auto", "share F of the layers, or the routed experts, in host RAM (llama.cpp); auto: the "
                                  "fewest whole layers that make the users fit"},
    {"host", "ID", "the host CPU for --offload (default ryzen-9-7950x; llmroof list devices)"},
    {"rate", "R", "open loop: arrivals in requests/s; reports TTFT, TPOT, utilisation (with --output O)"},
    {"concurrency", "N", "closed loop: N users, each sending its next request when the last completes (with --output O)"},
    {"burst", "N", "N requests sent at once, no concurrency cap (vllm bench serve --request-rate inf): the engine's "
                   "steps simulated; reports TTFT, TPOT and output tokens/s (with --output O)"},
    {"burst-lengths", "fixed|exponential", "a burst's answers: all --output long (default), or spread exponentially "
                                           "about it, at most the context (a chat dataset such as ShareGPT)"},
    {"output", "O", "output tokens per request with --rate, --concurrency, --burst and the closed loop of --users "
                    "(default 512)"},
    {"tps", "T", "per-user tokens/s target (users: default 10; plan --pd: the TPOT target, default none)"},
    {"pd", "N|auto", "compare aggregated and disaggregated prefill/decode on the plan's devices: instances of N devices "
                     "(auto: the fewest that hold a request and meet --tps), as replicas and in every xPyD split; each "
                     "also as the plan's closed loop (--concurrency, or its --users) without targets"},
    {"kv-link", "ID", "link the KV cache crosses from prefill to decode (default: the node's, across nodes --inter-link)"},
    {"kv-link-efficiency", "F", "share of the link's bandwidth a KV transfer reaches (default 0.87, Mooncake)"},
    {"kv-overlap", "", "send the KV layer by layer while the prefill runs"},
    {"ttft", "S", "time-to-first-token target: 1, 0.5s, 500ms"},
    {"spec", "METHOD", "speculative decoding: mtp (the model's own MTP layers; default), draft (--draft-model), eagle "
                       "(an EAGLE-3 head) or ngram"},
    {"draft-tokens", "K", "tokens drafted per step (default 1)"},
    {"accept", "A[,A2,...]", "conditional acceptance of each draft position, or one for all (default for mtp: 0.85 at "
                             "k = 1, else 0.60; eagle: 0.76, 0.74, 0.77, then 0.75; required for draft and ngram)"},
    {"draft-model", "ID|PATH", "the draft model of --spec draft (same vocabulary as --model)"},
    {"price-per-hour", "USD", "cost: rate per device-hour (cloud); no default price"},
    {"purchase", "USD", "cost: purchase price per device, amortised over --years of continuous use"},
    {"years", "Y", "amortisation of --purchase (default 3)"},
    {"electricity", "USD", "cost: electricity per kWh, times --pue, on top of the hardware"},
    {"pue", "X", "facility power over IT power (default 1.0)"},
    {"scope", "S", "profiles per: global, engine or engine-kind (default engine-kind)"},
    {"write-profiles", "FILE", "write the fitted profiles as C++ rows (src/engine/profiles_fitted.inc)"},
    {"report", "DIR", "write report.md and predictions.csv to DIR"},
    {"no-refit", "", "score the shipped profiles on the points: no fitting, no cross-validation"},
    {"write-bands", "FILE", "write the chosen scope's conformal band widths as C++ rows (src/engine/band_widths.inc)"},
    {"pool", "ID[:N],...", "recommend: the device kinds it may use and how many of each (h100-sxm:8,rtx-4090:2)"},
    {"per-node", "N", "recommend: devices per node (default: all of a kind in one node)"},
    {"price", "ID=USD/h|ID=USD,...", "recommend: a price per device kind, hourly (2.5/h) or a purchase (8500, over --years)"},
    {"max-cost", "USD", "recommend: most USD per million output tokens (needs --price)"},
    {"max-joules", "J", "recommend: most joules per output token"},
    {"budget", "USD", "recommend: most USD to buy the devices (needs --price with purchase prices)"},
    {"engines", "NAME,...", "recommend: the engines to try (default: vllm and llama.cpp on NVIDIA and datacenter GPUs, "
                            "llama.cpp and mlx on Apple, llama.cpp elsewhere)"},
    {"skip", "WHAT,...", "recommend: parts of the search to leave out: formats, replicas, offload, pd, mtp"},
    {"top", "K", "recommend: rows of each table (default 8)"},
    {"filter", "TEXT", "list devices|models: only entries whose id, name, vendor, family or aliases hold every word"},
};

// Option groups that several commands share.
const std::vector<std::string> model_opts = {"model", "weights", "kv", "lm-head", "engine"};
const std::vector<std::string> layout_opts = {"device", "tp", "pp", "ep", "dp-attention", "nodes", "link", "inter-link"};
const std::vector<std::string> memory_opts = {"memory-utilization", "block-tokens", "max-num-seqs",
                                              "max-num-batched-tokens", "max-model-len", "prefix-caching"};

namespace {

std::vector<std::string> join(std::initializer_list<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

}  // namespace

const std::vector<command_spec>& commands() {
  static const std::vector<command_spec> table = {
      {"plan", "--model ID --device ID[:N] [--users N] [--context C] [--prompt P] [--rate R | --concurrency N | --burst N] [--output O] ...",
       "memory plan, users that fit, decode speed against context, TTFT; its users in a closed loop (or --rate, "
       "--concurrency, --burst)",
       join({model_opts, layout_opts, memory_opts,
             {"users", "context", "prompt", "prefix", "prefix-hit", "arrivals", "offload", "host", "rate", "concurrency",
              "burst", "burst-lengths", "output",
              "ttft", "price-per-hour", "purchase", "years", "electricity", "pue", "pd", "tps", "kv-link",
              "kv-link-efficiency", "kv-overlap", "spec", "draft-tokens", "accept", "draft-model"}}), cmd_plan},
      {"decode", "--model ID --device ID[:N] [--batch N] [--context C] [--price-per-hour USD | --purchase USD] ...",
       "one decode step, per op, with its power, joules per token and (priced) cost",
       join({model_opts, layout_opts,
             {"batch", "context", "price-per-hour", "purchase", "years", "electricity", "pue"}}), cmd_decode},
      {"speculate", "--model ID --device ID[:N] [--spec mtp|draft|ngram] [--draft-tokens K] [--accept A] [--batch N] ...",
       "speculative decoding: tokens kept per step, draft and verify time, speed-up against batch",
       join({model_opts, layout_opts, {"batch", "context", "max-batch", "spec", "draft-tokens", "accept", "draft-model"}}),
       cmd_speculate},
      {"prefill", "--model ID --device ID[:N] [--batch N] [--prompt P] [--context C]", "one prefill, per op",
       join({model_opts, layout_opts, {"batch", "prompt", "context"}}), cmd_prefill},
      {"kv", "--model ID [--kv FMT] [--context C] [--users N]", "KV cache per token, per sequence and per user count",
       {"model", "weights", "kv", "lm-head", "engine", "block-tokens", "context", "users"}, cmd_kv},
      {"moe", "[--model ID --device ID[:N] [--context C] [--max-batch N]]",
       "the MoE table, or one model's expert reads and step time against batch",
       join({model_opts, layout_opts, {"context", "max-batch"}}), cmd_moe},
      {"compare", "--model A --model B --device ID[:N] | --model A --device ID[:N] --device ID[:N] (any of --model, --device, --engine, --weights, --kv twice) [--context C] [--max-batch N]",
       "two models on one machine, or one model on two machines, side by side against batch", join({model_opts, layout_opts, {"context", "max-batch"}}), cmd_compare},
      {"users", "--model ID --device ID[:N] --tps T [--ttft S] [--context C] [--prompt P] [--output O]",
       "most users that meet a tokens/s (and TTFT) target",
       join({model_opts, layout_opts, memory_opts,
             {"context", "prompt", "prefix", "prefix-hit", "arrivals", "output", "tps", "ttft", "price-per-hour", "purchase",
              "years", "electricity", "pue", "spec", "draft-tokens", "accept", "draft-model"}}),
       cmd_users},
      {"recommend", "--model ID [--model ID2] --pool ID:N[,ID:N] (--users N | --rate R) [--context C] [--tps T] [--ttft S] ...",
       "what to run: every engine, format, layout, replica count and prefill/decode split on the pool, scored "
       "against the targets; the cheapest that meets them at its band's slow edge, the front, the best per device",
       join({{"model", "weights", "kv", "lm-head", "engines"}, memory_opts,
             {"pool", "per-node", "users", "rate", "context", "prompt", "prefix", "prefix-hit", "output", "tps", "ttft",
              "max-cost", "max-joules", "budget", "price", "years", "electricity", "pue", "skip", "top"}}),
       cmd_recommend},
      {"calibrate", "POINTS.csv [POINTS2.csv ...] [--scope global|engine|engine-kind] [--write-profiles FILE]",
       "fit efficiency profiles to measured points", {"scope", "write-profiles"}, cmd_calibrate},
      {"validate", "POINTS.csv [POINTS2.csv ...] [--no-refit] [--report DIR] [--write-bands FILE]",
       "leave-one-source-out errors of the fitted profiles, or (--no-refit) of the shipped ones",
       {"report", "no-refit", "write-bands"}, cmd_validate},
      {"list", "devices|models|formats|links|engines [--filter TEXT]", "the catalogs (with counts)", {"filter"}, cmd_list},
  };
  return table;
}

const command_spec* find_command(const std::string& name) {
  for (const auto& c : commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

namespace {

/// The engines' own flag names, so that a launch command pastes in: vLLM's
/// (`vllm serve --help`), SGLang's (`sglang.launch_server --help`) and
/// llama.cpp's (`llama-server --help`), each to the option it means here.
struct option_alias {
  const char* engine_flag;
  const char* option;
};
constexpr option_alias option_aliases[] = {
    {"tensor-parallel-size", "tp"},          {"pipeline-parallel-size", "pp"},
    {"gpu-memory-utilization", "memory-utilization"}, {"kv-cache-dtype", "kv"},
    {"block-size", "block-tokens"},          {"tp-size", "tp"},
    {"pp-size", "pp"},                       {"mem-fraction-static", "memory-utilization"},
    {"context-length", "max-model-len"},     {"max-running-requests", "max-num-seqs"},
    {"chunked-prefill-size", "max-num-batched-tokens"}, {"parallel", "max-num-seqs"},
    {"cache-type-k", "kv"},                  {"enable-dp-attention", "dp-attention"},
    {"ep-size", "ep"},
};

/// An engine's KV dtype spelled as a format here: vLLM's fp8_e4m3 is fp8-e4m3;
/// "auto" (the model's own 16-bit type) is no choice at all.
std::optional<std::string> kv_dtype_value(const std::string& v) {
  if (v == "auto") return std::nullopt;
  // vLLM writes fp8_e4m3 / fp8_e5m2 where the format table has fp8-e4m3; the
  // ggml names (q8_0, q4_0) are the table's own and pass unchanged.
  if (v.starts_with("fp8_")) return "fp8-" + v.substr(4);
  return v;
}

const option_doc* find_option(const std::string& name) {
  for (const auto& d : option_docs) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

}  // namespace

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
      const std::string asked = key;
      for (const auto& al : option_aliases) {
        if (key == al.engine_flag) key = al.option;
      }
      if (find_option(key) == nullptr) {
        std::vector<std::string> known(spec->options.begin(), spec->options.end());
        for (const auto& al : option_aliases) {
          if (std::find(spec->options.begin(), spec->options.end(), al.option) != spec->options.end()) {
            known.emplace_back(al.engine_flag);
          }
        }
        const auto near = detail::closest(key, known, 1);
        const bool close = !near.empty() && detail::edit_distance(key, near[0]) <= std::max<std::size_t>(2, key.size() / 3);
        throw usage_error("unknown option --" + key + (close ? " (did you mean --" + near[0] + "?)" : "") + "; run 'llmroof " +
                          o.command + " --help'");
      }
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
      if (asked == "kv-cache-dtype" || asked == "cache-type-k") {
        const auto kv = kv_dtype_value(value);
        if (!kv) continue;
        value = *kv;
      }
      o.values[key] = value;
      o.given[key].push_back(value);
    } else if (o.sub.empty() && (o.command == "list" || o.command == "calibrate" || o.command == "validate")) {
      o.sub = a;
    } else if (o.command == "calibrate" || o.command == "validate") {
      o.more_points.push_back(a);
    } else {
      throw usage_error("unexpected argument '" + a + "' for '" + o.command + "'");
    }
  }
  return o;
}

namespace {

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

}  // namespace

/// "131072", "128k" (x1024), "1m" (x1048576), "1.5k" (parse_token_count).
double parse_tokens(const std::string& field, const std::string& s) {
  try {
    return parse_token_count(field, s, "--" + field);
  } catch (const usage_error&) {
    throw;
  } catch (const std::invalid_argument& e) {
    // A malformed count is a usage error; a count out of range keeps its message.
    if (std::string(e.what()).rfind("--", 0) == 0) throw usage_error(e.what());
    throw;
  }
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
double parse_count(const std::string& field, const std::string& s, double hi) {
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
double parse_number(const std::string& field, const std::string& s, double lo, double hi,
                    bool open_low) {
  const auto n = full_number(s);
  if (!n) throw usage_error("--" + field + " must be a number (got '" + s + "')");
  const double v = *n;
  if ((open_low ? v <= lo : v < lo) || v > hi) {
    throw usage_error("--" + field + " must be " + (open_low ? "> " : ">= ") + detail::show(lo) +
                      (hi < 1e300 ? " and <= " + detail::show(hi) : std::string()) + " (got " + s + ")");
  }
  return v == 0 ? 0.0 : v;  // "-0" is 0: never echoed with its sign
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
  const device& row = find_device(spec);
  device asked = configured_device(spec);
  if (asked.memory.value() == row.memory.value()) return row;
  // A configuration of the row ("M4 Max 48GB"): one copy per spelling, so
  // that naming it twice names one device.
  for (const auto& u : user_devices) {
    if (u->id == asked.id && u->name == asked.name) return *u;
  }
  user_devices.push_back(std::make_unique<device>(std::move(asked)));
  return *user_devices.back();
}

price price_of(const options& o) {
  // Ranges and defaults: price{} and validate(price) (energy.hpp).
  price p;
  if (auto v = o.get("price-per-hour")) p.per_device_hour = parse_number("price-per-hour", *v);
  if (auto v = o.get("purchase")) p.purchase = parse_number("purchase", *v);
  if (auto v = o.get("years")) p.years = parse_number("years", *v);
  if (auto v = o.get("electricity")) p.electricity_kwh = parse_number("electricity", *v);
  if (auto v = o.get("pue")) p.pue = parse_number("pue", *v);
  validate(p);
  return p;
}

engine_overrides engine_options_of(const options& o) {
  engine_overrides eo;
  if (auto u = o.get("memory-utilization")) eo.memory_utilization = parse_number("memory-utilization", *u, 0, 1, true);
  if (auto b = o.get("block-tokens")) eo.block_tokens = static_cast<int>(parse_count("block-tokens", *b));
  if (auto t = o.get("max-num-batched-tokens")) eo.max_batched_tokens = parse_count("max-num-batched-tokens", *t);
  if (auto n = o.get("max-num-seqs")) eo.max_sequences = parse_count("max-num-seqs", *n);
  if (auto l = o.get("max-model-len")) eo.max_model_len = parse_count("max-model-len", *l);
  if (auto c = o.get("prefix-caching")) {
    if (*c != "on" && *c != "off") throw usage_error("--prefix-caching must be on or off (got '" + *c + "')");
    eo.prefix_caching = *c == "on";
  }
  return eo;
}

setup make_setup(const options& o, bool need_device, std::optional<std::string> which) {
  request q;
  const std::string model = which ? *which : o.require("model");
  if (names_a_model_file(model) && !model.empty()) {
    file_models.push_back(std::make_unique<model_source>(read_model(model)));
    q.source = file_models.back().get();
    q.model = &q.source->arch;
  } else {
    q.model = &find_model(model);
    q.name = model;
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
    q.layout.dp_attention = o.flag("dp-attention");
    if (auto l = o.get("link")) q.layout.intra = find_link(*l);
    if (auto l = o.get("inter-link")) q.layout.inter = find_link(*l);
  }
  // A shorthand for several formats is read as one, and said so (stderr: the output stays the plan's).
  for (const char* key : {"weights", "kv", "lm-head"}) {
    if (auto v = o.get(key); v && !shorthand_note(*v).empty()) {
      std::fprintf(stderr, "llmroof: note: --%s %s\n", key, shorthand_note(*v).c_str());
    }
  }
  if (auto w = o.get("weights")) q.weights = find_format(*w);
  if (auto k = o.get("kv")) q.kv = find_format(*k);
  if (auto h = o.get("lm-head")) q.lm_head = find_format(*h);
  q.engine_options = engine_options_of(o);
  if (auto off = o.get("offload"); off && *off != "auto") {  // auto: cmd_plan, which knows the workload
    offload_plan op;
    if (*off == "experts") {
      op.experts = true;
    } else {
      op.layers = parse_number("offload", *off, 0, 1);
    }
    if (auto h = o.get("host")) op.host = device_of(*h);
    q.offload = op;
  }
  if (auto e = o.get("engine")) q.engine = *e;
  return resolve(q);
}

void read_prefix(const options& o, workload& w) {
  if (auto p = o.get("prefix")) w.prefix = parse_tokens("prefix", *p);
  if (auto h = o.get("prefix-hit")) w.prefix_hit = parse_number("prefix-hit", *h, 0, 1);
}

void read_arrivals(const options& o, workload& w) {
  if (auto a = o.get("arrivals")) w.arrivals = parse_arrival_pattern(*a);
}

}  // namespace llmroof::cli
