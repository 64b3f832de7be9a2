// Reading calibration.csv-format files and mapping each row onto a model,
// device, formats, parallel plan and workload (the parts in rows.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <map>
#include <sstream>

#include "llmroof/calibration/calibrate.hpp"
#include "calibration/phrases.hpp"
#include "calibration/rows.hpp"
#include "model/readers/common.hpp"

namespace llmroof {

using namespace rows;  // the grammar and the parts the reader reads rows with

[[noreturn]] void rows::fail_at(const std::string& file, std::size_t line, const std::string& what) {
  throw std::invalid_argument(file + ": line " + std::to_string(line) + ": " + what);
}

namespace {

// How far above the bandwidth bound a single-stream row may be before it is
// refused: the bound counts bytes exactly for uniform formats, and mixes
// (q4_k_m: 4.89 bits averaged over Llama-3-8B) are within a few percent of it.
constexpr double roof_tolerance = 1.10;

// The memory share a served row that does not fit at its engine's default is
// predicted at (vLLM's and SGLang's --gpu-memory-utilization /
// --mem-fraction-static as people raise them for a model that barely fits).
constexpr double raised_memory_share = 0.95;

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

// A row's users: its source detail (a table's own column) before its notes,
// which may quote another row ("at concurrency 1 it matches ...").
double row_users(const std::string& detail, const std::string& notes) {
  const double users = said_concurrency(detail);
  return users >= 1 ? users : said_concurrency(notes);
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

// The micro-batch a llama.cpp row says it ran with (`-ub 8`, `n_ubatch 2048`,
// "ubatch 512"), or 0: the first such phrase followed by a count.
double said_ubatch(const std::string& text) {
  for (const char* how : {"-ub ", "n_ubatch ", "ubatch "}) {
    if (const double n = number_after(text, how, right_after); n > 0) return n;
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
                               (said(text, "mtp") || has(text, "nextn") || has(text, "eagle") ||
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
    const double said_users = serving ? row_users(get("source_detail"), notes) : 0;
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
      const auto said_fa = [&](const char* state) {
        for (const char* how : {"flash-attn ", "FA ", "-fa "}) {
          const std::string phrase = std::string(how) + state;
          if (has(backend, phrase.c_str()) || has(notes, phrase.c_str())) return true;
        }
        return false;
      };
      const bool said_on = said_fa("on");
      const bool said_off = said_fa("off");
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
        const double graphs = number_after(get("batch"), "up to ", right_after);
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
                                                     "free_gpu_memory_fraction", "free-gpu-memory-fraction"}, setting_value);
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
