// The engine table (engine.hpp): one row per engine, how each turns device
// memory into a KV budget, the defaults that size activations and paging, the
// KV formats it offers, its versions, and the kernel classes it runs
// (engine_profile.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "llmroof/engine/engine_profile.hpp"
#include "llmroof/engine/memory_plan.hpp"

namespace llmroof {

namespace {

// Prompt tokens per forward pass: llama.cpp's n_ubatch 512 (common
// arguments; n_batch 2048 is the logical batch it splits into them) and
// mlx-lm's prefill_step_size 2048 (generate.py:307; KERNELS.md 6.4).
constexpr double llama_ubatch = 512, mlx_prefill_step = 2048;

// Designated initializers name only what differs from vLLM's defaults (the
// struct's), in the struct's member order. One row per engine_id, in order.
std::vector<engine_row> build() {
  const bytes gib = make_bytes(gibi);
  // vLLM's kv_cache_dtype: auto (the model's 16-bit type), fp8, fp8_e4m3, fp8_e5m2.
  const std::vector<std::string_view> vllm_kv{"fp32", "bf16", "fp16", "fp8", "fp8-e4m3", "fp8-e5m2"};
  // llama.cpp --cache-type-k/-v: f32, f16, bf16, q8_0, q4_0, q4_1, iq4_nl, q5_0, q5_1.
  const std::vector<std::string_view> ggml_kv{"fp32", "bf16", "fp16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl"};
  const engine_row vllm{.defaults = {},
                        .kv_formats = vllm_kv,
                        .weight_formats = {"fp8", "awq-int4"},
                        .versions = {},
                        .numbered_versions = true,
                        .kernels = engine_id::vllm,
                        .spellings = {"vLLM"},
                        .reserve_label = "non-torch memory",
                        .refuses_context_beyond_positions = true};
  // SGLang: mem_fraction_static is chosen by GPU size, 0.88 on 80-96 GB parts;
  // page_size 1; chunked_prefill_size 8192 on large GPUs; CUDA graphs outside.
  // The 1 GiB reserve is the CUDA context and workspaces held when it measures.
  // Running requests: the request pool's max(2048, 512 x KV pool tokens /
  // context length), at most 4096 (model_runner's max_num_reqs, recalled:
  // KERNELS.md 5 did not read it; the CUDA-graph max_bs of 256-512 only bounds
  // the graphs). 4096 is taken: below it the pool's own cap differs from the
  // KV cache's count of sequences only for requests shorter than 1/512 of the
  // model's context. Checked by SGLang PR 31044's MiniMax-M2.7 on 8 MI300X: at
  // concurrency 1,024 every request runs at once (1,024 / TPOT 239 ms = 4,281
  // t/s, output measured 4,301). It profiles no sampler at
  // start-up (sampler_copies 0): a running batch's logits live in the memory
  // mem_fraction_static leaves out.
  const engine_row sglang{
      .defaults = {.id = engine_id::sglang, .model = memory_model::static_fraction, .memory_utilization = 0.88,
                   .runtime_reserve = gib, .mxfp4_expert_pad = 1, .block_tokens = 1, .max_batched_tokens = 8192,
                   .max_sequences = 4096, .sampler_copies = 0, .device_sized_batches = false,
                   .mixed_prefill = false, .source = "SGLang server arguments (mem_fraction_static, page_size, chunked_prefill_size)"},
      .kv_formats = vllm_kv,
      .weight_formats = {"fp8", "awq-int4"},
      .versions = {"2024"},
      .numbered_versions = false,
      .kernels = engine_id::sglang,
      .spellings = {"SGLang"},
      .reserve_label = "runtime reserve",
      .refuses_context_beyond_positions = true,
      .dp_attention_beside_tp = true};
  // TensorRT-LLM: kv_cache_free_gpu_memory_fraction 0.9 of the memory free
  // after weights and activations; tokens_per_block 32; max_num_tokens 8192;
  // KV cache quantization adds int8 and nvfp4. Its 2023 releases launched
  // kernels one by one (no CUDA graphs); the memory plan is the same.
  const engine_row trt{
      .defaults = {.id = engine_id::tensorrt_llm, .model = memory_model::fraction_of_free, .memory_utilization = 0.9,
                   .runtime_reserve = gib, .mxfp4_expert_pad = 1, .block_tokens = 32, .max_batched_tokens = 8192,
                   .max_sequences = 256, .sampler_copies = 1, .device_sized_batches = false,
                   .source = "TensorRT-LLM KvCacheConfig.free_gpu_memory_fraction, tokens_per_block, max_num_tokens"},
      .kv_formats = {"fp32", "bf16", "fp16", "fp8", "fp8-e4m3", "fp8-e5m2", "int8", "nvfp4"},
      .weight_formats = {"fp8", "awq-int4"},
      .versions = {"2023"},
      .numbered_versions = false,
      .kernels = engine_id::tensorrt_llm,
      .spellings = {"TensorRT-LLM", "TensorRT LLM", "tensorrt_llm", "TRT-LLM", "trtllm", "trt", "NIM"},
      .dp_attention_beside_tp = true};
  // llama.cpp: the whole device; the KV cache is allocated for n_ctx up front
  // (padded to 256 cells), the compute buffer is sized by n_ubatch 512; CUDA
  // context ~0.5 GiB; one fp32 logits row per output; GGUF tensors load as
  // stored (no MXFP4 padding). 2024 builds dequantized to FP16 for cuBLAS,
  // current ones multiply quantized weights in int8: the kernels changed, not
  // the memory plan.
  const engine_row llama{
      .defaults = {.id = engine_id::llama_cpp, .model = memory_model::exact, .memory_utilization = 1.0,
                   .runtime_reserve = make_bytes(0.5 * gibi), .mxfp4_expert_pad = 1, .block_tokens = 256,
                   .max_batched_tokens = llama_ubatch, .max_sequences = 1, .sampler_copies = 1,
                   .device_sized_batches = false,
                   .source = "llama.cpp common arguments (n_ctx padding 256, n_ubatch 512, n_parallel 1)"},
      .kv_formats = ggml_kv,
      .weight_formats = {"q8_0", "q4_k_m"},
      .versions = {"2024"},
      .numbered_versions = false,
      .kernels = engine_id::llama_cpp,
      .spellings = {"llama.cpp"},
      .splits_layers = true,
      .row_split = true,
      .shares_prefix_blocks = false,
      .disaggregates = false,
      .speculation = {"mtp", "draft", "ngram"},
      .backends = {"cuda", "hip", "vulkan", "sycl", "metal"}};
  engine_row ollama = llama;
  ollama.defaults.id = engine_id::ollama;
  ollama.defaults.source = "Ollama runs llama.cpp with its defaults (num_ctx 4096, OLLAMA_NUM_PARALLEL 1)";
  ollama.spellings = {"Ollama"};
  // Ollama's bundled runners: CUDA, ROCm and Metal (its GPU docs).
  ollama.backends = {"cuda", "hip", "metal"};
  ollama.speculation = {};
  ollama.row_split = false;
  // mlx-lm: unified memory, the GPU share set by gpu_visible_fraction (Metal's
  // working-set limit); prefills in steps of 2048 tokens; grows its KV cache in
  // steps of 256; 16-bit caches or its quantized cache (close to q8_0/q4_0).
  const engine_row mlx{
      .defaults = {.id = engine_id::mlx, .model = memory_model::exact, .memory_utilization = 1.0,
                   .runtime_reserve = make_bytes(0.25 * gibi), .mxfp4_expert_pad = 1, .block_tokens = 256,
                   .max_batched_tokens = mlx_prefill_step, .max_sequences = 1, .sampler_copies = 1,
                   .device_sized_batches = false,
                   .source = "mlx-lm generate (prefill_step_size 2048, KVCache step 256)"},
      .kv_formats = {"fp32", "bf16", "fp16", "q8_0", "q4_0"},
      .weight_formats = {},  // mlx-lm's own 4- and 8-bit formats are not in the format table yet
      .versions = {},
      .numbered_versions = false,
      .kernels = engine_id::mlx,
      .spellings = {"MLX"},
      .shares_prefix_blocks = false,
      .disaggregates = false,
      .speculation = {"draft"}};
  return {vllm, sglang, trt, llama, ollama, mlx};
}

// Which kernels an engine version runs on a device family: the key fitted
// profiles (profiles_fitted.inc) and measured rows (calibrate.hpp) use, and
// the traits that are facts of the engine's code, never fitted.
//  - llama.cpp on CUDA: 16-bit GEMMs through cuBLAS with CUBLAS_COMPUTE_16F
//    (FP16 accumulate); quantized weights through MMQ, int8 dot products
//    (current builds: ggml-cuda/mmq.cuh, the default wherever INT8 tensor
//    cores or DP4A exist), or dequantized to FP16 for cuBLAS on cards with
//    FP16 tensor cores (2024 builds before MMQ became the default, b3200s).
//  - llama.cpp 2024 builds: attention unfused (-fa was opt-in); measured rows
//    that say "flash-attn on" override it (calibrate.cpp predict).
//  - llama.cpp Metal, MLX: dequantize in the GEMM kernel, 16-bit math.
//  - llama.cpp HIP (ROCm): the CUDA sources built for AMD; MMQ on int8 WMMA
//    (RDNA3/4), MFMA (CDNA) or DP4A (RDNA2); hipBLAS for 16-bit weights
//    (KERNELS.md 2.1); flash attention as on CUDA (fattn.cu's AMD paths).
//  - llama.cpp Vulkan: MMQ with integer dot products where the driver has
//    VK_KHR_shader_integer_dot_product and no coopmat2 (AMD, Intel), else
//    weights dequantized in the shader for a 16-bit (cooperative-matrix)
//    GEMM (NVIDIA's coopmat2); flash attention on coopmat1 or scalar
//    shaders (KERNELS.md 2.2). Integer dot products run on the vector ALUs,
//    not the matrix units the catalog's INT8 rate counts (Arc's XMX, RDNA4's
//    WMMA): the 16-bit matrix roof stands in for both paths (on RDNA3 and
//    Strix Halo, which list no INT8 rate, the roof the int8 path takes too).
//  - llama.cpp SYCL: above 8-32 tokens the weights are dequantized to F16
//    for oneDNN's GEMM (KERNELS.md 2.3); no flash-attention kernel is named
//    there, so -fa auto keeps the unfused attention.
//  - vLLM, SGLang, TensorRT-LLM: each format on its own roof.
//  - SGLang: host work overlapped with the kernels (host_overlap).
// HIP takes CUDA's fitted efficiencies where it has none of its own (the
// same kernel sources on AMD's roofs); Vulkan and SYCL, whose kernels are
// their own, take their own points' or the class defaults.
// llama.cpp's versions differ in kernel traits alone, so one version's fitted
// efficiencies serve another without points of its own; TensorRT-LLM's 2023
// releases also streamed weights at a lower cap: their fit does not carry.
std::vector<kernel_class> build_classes() {
  using kp = kernel_path;
  // Each kernel of a decode step replayed from a CUDA graph (vLLM V1,
  // SGLang, TensorRT-LLM): 6.4 us, fitted with eta_m (src/engine/profiles.cpp) to
  // the release3 TPOT points at 1-4 users; the spread is that fit's residual
  // scatter (+-13%) carried onto the launch term. A small dependent kernel
  // leaves about that gap: launch latency, ramp-up, one DRAM round trip, drain.
  const double graph_launch = 6.4e-6, graph_launch_sd = 1.5e-6;
  // SGLang v0.4.x (Dec 2024) ran DeepSeek-V3's blockwise-FP8 GEMMs, MLA and
  // fused MoE as separate Triton kernels: 16 us per kernel is what its
  // batch-1 measurement leaves (sgl-project/sglang PR #2643: 30.3 t/s, 33.0
  // ms per token on 8 x H200, TP 8; minus 3.6 ms of modelled reads and
  // collectives, over the 1,806 kernels counted). Batch 8 and 32 of the same
  // run (206.3 and 760.5 t/s) are predictions, not fitted (tests/test_launches.cpp).
  const double launch_2024 = 16e-6, launch_2024_sd = 4e-6;
  // vLLM's V0 engine (releases before 0.8) ran its scheduler, sampler and
  // detokenizer in Python over every running sequence each step: 82 us per
  // sequence per decode step beyond the model, the median of what six
  // groups of Argonne's offline batches (16, 32, 64 sequences of
  // Llama-3-8B/70B on one H100 and one GH200, 2024 builds; release3
  // serving.csv) take beyond the kernels: 82.5, 83.9, 71.0 (H100), 118.6,
  // 81.6, 81.4 us (GH200). V1's engine core moved that work off the step.
  const double v0_per_sequence = 82e-6;
  // Each boundary of llama.cpp's layer split ends a ggml graph split: the
  // next GPU waits for the hidden state (through the host between GeForce
  // cards, which have no P2P) and launches its own graph. 0.12 ms per
  // boundary: the median of five single-stream pairs of Llama-3-8B on 2 to 8
  // GPUs (XiongjieDai's May 2024 table, calibration.csv): RTX 3090 Q4_K_M
  // 2 -> 4 GPUs +0.124 ms per added boundary (M0049/M0061), 2 -> 6 +0.161
  // (M0049/M0073); F16 2 -> 6 +0.169 (M0051/M0075); RTX 4090 Q4_K_M 2 -> 8
  // +0.074 (M0055/M0081), F16 2 -> 4 +0.095 (M0057/M0069). The mechanism is
  // ggml's scheduler, the same on HIP, Vulkan and SYCL; Macs split over RPC
  // (not measured here) take none.
  const double split_hop = 0.12e-3;
  // Prompts run in passes of the engine's token budget (llama_ubatch,
  // mlx_prefill_step), each reading the weights again (resolve takes a
  // changed budget, -ub); vLLM, SGLang and TensorRT-LLM run a prompt in one
  // pass up to theirs (the load model chunks beyond it).
  return {
      {"vllm@v0", engine_id::vllm, "v0", "", false, true, host_overlap::serial, kp::native, false, graph_launch,
       graph_launch_sd, 0, "", 0, v0_per_sequence},
      {"vllm", engine_id::vllm, "", "", false, true, host_overlap::serial, kp::native, false, graph_launch,
       graph_launch_sd},
      {"sglang", engine_id::sglang, "current", "", false, true, host_overlap::overlapped, kp::native, false,
       graph_launch, graph_launch_sd},
      {"sglang@2024", engine_id::sglang, "2024", "", false, true, host_overlap::overlapped, kp::native, false,
       launch_2024, launch_2024_sd},
      {"tensorrt-llm", engine_id::tensorrt_llm, "current", "", false, true, host_overlap::serial, kp::native, false,
       graph_launch, graph_launch_sd},
      {"tensorrt-llm@2023", engine_id::tensorrt_llm, "2023", "", false, true, host_overlap::serial, kp::native, false},
      {"llama.cpp-cuda", engine_id::llama_cpp, "current", "cuda", true, true, host_overlap::serial, kp::int8_dot, true,
       0, 0, llama_ubatch, "", split_hop},
      {"llama.cpp-cuda@2024", engine_id::llama_cpp, "2024", "cuda", true, false, host_overlap::serial, kp::dequantize,
       true, 0, 0, llama_ubatch, "", split_hop},
      {"llama.cpp-metal", engine_id::llama_cpp, "", "metal", false, true, host_overlap::serial, kp::dequantize, true,
       0, 0, llama_ubatch},
      {"llama.cpp-hip", engine_id::llama_cpp, "", "hip", false, true, host_overlap::serial, kp::int8_dot, false, 0, 0,
       llama_ubatch, "llama.cpp-cuda", split_hop, 0, false, true},
      {"llama.cpp-vulkan", engine_id::llama_cpp, "", "vulkan", false, true, host_overlap::serial, kp::dequantize,
       false, 0, 0, llama_ubatch, "", split_hop},
      {"llama.cpp-sycl", engine_id::llama_cpp, "", "sycl", false, false, host_overlap::serial, kp::dequantize, false, 0,
       0, llama_ubatch, "", split_hop},
      {"mlx", engine_id::mlx, "", "", false, true, host_overlap::serial, kp::dequantize, false, 0, 0, mlx_prefill_step,
       "", 0, 0, true},
  };
}

}  // namespace

const std::vector<engine_row>& engine_table() {
  static const std::vector<engine_row> table = build();
  return table;
}

const engine_row& engine_row_of(engine_id e) { return engine_table().at(static_cast<std::size_t>(e)); }

std::size_t engine_position(std::string_view backend, engine_id e) {
  // In any case and as a word of its own ('_' counts as part of a word):
  // result tables write "vllm", "sglang", "trt" and "dynamo-trt"; "NIM" must
  // not match inside "MiniMax", nor "trtllm" inside SGLang's "trtllm_mla" or
  // FlashInfer's "trtllm-gen" kernels.
  const std::string text = detail::to_lower(backend);
  const auto word = [&](std::size_t i) {
    return i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) != 0 || text[i] == '_');
  };
  std::size_t first = std::string::npos;
  for (std::string_view s : engine_row_of(e).spellings) {
    const std::string w = detail::to_lower(s);
    for (std::size_t at = text.find(w); at != std::string::npos && at < first; at = text.find(w, at + 1)) {
      const std::size_t end = at + w.size();
      if ((at == 0 || !word(at - 1)) && !word(end) && text.compare(end, 4, "-gen") != 0) first = at;
    }
  }
  return first;
}

bool engine_spelled(std::string_view backend, engine_id e) {
  return engine_position(backend, e) != std::string::npos;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> out;
  for (const auto& e : engine_table()) out.emplace_back(e.defaults.name());
  return out;
}

bool kv_format_supported(engine_id engine, const numeric_format& kv) {
  const auto& offered = engine_row_of(engine).kv_formats;
  return std::find(offered.begin(), offered.end(), std::string_view(kv.name)) != offered.end();
}

bool is_kv_format(const numeric_format& kv) {
  return std::any_of(engine_table().begin(), engine_table().end(),
                     [&](const engine_row& r) { return kv_format_supported(r.defaults.id, kv); });
}

void validate_kv_format(const engine_settings& e, const numeric_format& kv) {
  if (kv.bits <= 0 || !std::isfinite(kv.bits)) detail::fail("kv format bits", "> 0", kv.bits);
  if (!is_kv_format(kv)) {
    throw std::invalid_argument("kv format '" + std::string(kv.name) +
                                "' is a weight format, not a KV cache format (bf16, fp16, fp8, int8, nvfp4, q8_0, q4_0 ...)");
  }
  if (!kv_format_supported(e.id, kv)) {
    std::string offered;
    for (std::string_view f : engine_row_of(e.id).kv_formats) offered += (offered.empty() ? "" : ", ") + std::string(f);
    throw std::invalid_argument("kv format '" + std::string(kv.name) + "' is not a KV cache type of engine '" +
                                std::string(e.name()) + "' (it offers " + offered + ")");
  }
}

const std::vector<kernel_class>& kernel_classes() {
  static const std::vector<kernel_class> table = build_classes();
  return table;
}

const kernel_class* find_kernel_class(std::string_view key) {
  for (const kernel_class& k : kernel_classes()) {
    if (k.key == key) return &k;
  }
  return nullptr;
}

const kernel_class* find_kernel_class(engine_id engine, std::string_view version, std::string_view backend) {
  const engine_id runs = engine_row_of(engine).kernels;
  // vLLM's releases before 0.8 run its V0 engine: one class for all of them.
  if (runs == engine_id::vllm && vllm_v0(std::string(version))) version = "v0";
  for (const kernel_class& k : kernel_classes()) {
    if (k.engine != runs || k.backend != backend) continue;
    if (k.version.empty() || k.version == version) return &k;
  }
  return nullptr;
}

namespace {

// A GPU llama.cpp has backends for: Apple, NVIDIA, AMD and Intel GPUs and
// APUs; not CPUs, Gaudi, TPUs or other accelerators.
bool llama_gpu(const device& d) {
  if (d.klass == device_class::cpu || d.family.find("Gaudi") != std::string::npos) return false;
  return d.vendor == "Apple" || d.vendor == "NVIDIA" || d.vendor == "AMD" || d.vendor == "Intel";
}

// Whether engine `e` offers `backend` (an engine with one backend offers none by name).
bool offers(const engine_settings& e, std::string_view backend) {
  const auto& b = engine_row_of(e.id).backends;
  return std::find(b.begin(), b.end(), backend) != b.end();
}

}  // namespace

std::string_view native_backend(const device& d) {
  if (!llama_gpu(d)) return "";
  if (d.vendor == "Apple") return "metal";
  if (d.vendor == "NVIDIA") return "cuda";
  if (d.vendor == "AMD") return "hip";
  return "sycl";
}

// Vulkan: any GPU but Apple's, where llama.cpp runs Metal.
bool backend_runs_on(std::string_view backend, const device& d) {
  if (!llama_gpu(d)) return false;
  if (backend == "vulkan") return d.vendor != "Apple";
  return backend == native_backend(d);
}

bool runs_on(const engine_settings& e, const device& d) {
  return e.backend.empty() || backend_runs_on(e.backend, d);
}

const kernel_class* kernel_class_of(const device& d, const engine_settings& e) {
  // The engines that run one backend everywhere take it; llama.cpp's is the
  // one asked for, else the device's own.
  if (const kernel_class* k = find_kernel_class(e.id, e.version, "")) return k;
  if (!runs_on(e, d)) {
    throw std::invalid_argument("engine backend '" + e.backend + "' does not run on " +
                                (llama_gpu(d) ? d.vendor + " GPUs" : "this device") + " (device '" + d.id + "')");
  }
  // A device's own backend the engine does not ship (Ollama on Intel GPUs): no kernel class.
  const std::string_view backend = e.backend.empty() ? native_backend(d) : std::string_view(e.backend);
  return backend.empty() || !offers(e, backend) ? nullptr : find_kernel_class(e.id, e.version, backend);
}

std::string engine_of_class(std::string_view key) {
  const kernel_class* k = find_kernel_class(key);
  if (k == nullptr) return std::string(key);
  std::string name(to_string(k->engine));
  // V0's rows name no release, or one of 0.5-0.7: the memory defaults of all of them are 0.6's.
  if (k->version == "v0") return name + "@0.6";
  if (!k->backend.empty()) name += "-" + std::string(k->backend);
  return k->version.empty() || k->version == "current" ? name : name + "@" + std::string(k->version);
}

/// vLLM's sampler at start-up: fp32 vocabulary-wide tensors alive at its
/// profiled peak, per sequence of max_num_seqs. Fitted on engine_memory.csv as
/// (activation peak) / (max_num_seqs x vocab x 4 B), where the sampler is the
/// larger part of the profile:
///  - 0.10: ML-001/002 (v0.10.1.1, A100 80 GB, Qwen2-7B, 256 sequences): budget
///    left after weights and KV 0.52-0.54 GiB, less 0.13 GiB non-torch -> 2.8;
///  - 0.11: ML-022 (v0.11.0, H100, Mistral-Small-3.2-24B, 1024 sequences):
///    peak 2.12 GiB printed -> 4.3 (one row);
///  - current (the llm-d rows of 2026, H100, 1024 sequences, five models with
///    vocabularies of 128k-201k): peaks 4.76-7.38 GiB printed -> 9.6-9.9, 9.7.
double vllm_sampler_copies(const std::string& version) {
  if (version.rfind("0.10", 0) == 0 || version.rfind("0.9", 0) == 0 || version.rfind("0.8", 0) == 0) return 2.8;
  if (version.rfind("0.11", 0) == 0) return 4.3;
  return 9.7;
}

// vLLM before 0.8 ran the V0 engine by default, prefix caching off (engine.hpp).
bool vllm_v0(const std::string& version) {
  const auto dot = version.find('.');
  if (dot == std::string::npos) return false;
  const int major = std::atoi(version.substr(0, dot).c_str());
  const int minor = std::atoi(version.substr(dot + 1).c_str());
  return major == 0 && minor < 8;
}

engine_settings find_engine(std::string_view name) {
  std::string key = detail::to_lower(name);
  std::string version = "current";
  if (const auto at = key.find('@'); at != std::string::npos) {
    version = key.substr(at + 1);
    key = key.substr(0, at);
    if (version.empty()) throw std::invalid_argument("engine version after '@' is empty (got '" + std::string(name) + "')");
  }
  std::string backend;
  for (const engine_row& r : engine_table()) {
    const std::string base(r.defaults.name());
    if (key.size() > base.size() + 1 && key.compare(0, base.size() + 1, base + "-") == 0 && !r.backends.empty()) {
      backend = key.substr(base.size() + 1);
      if (backend == "rocm") backend = "hip";
      if (std::find(r.backends.begin(), r.backends.end(), backend) == r.backends.end()) {
        std::string takes;
        for (std::string_view b : r.backends) takes += (takes.empty() ? "" : ", ") + base + "-" + std::string(b);
        throw std::invalid_argument("engine backend '" + backend + "' is not one of " + base + "'s (" + takes + ")");
      }
      key = base;
      break;
    }
  }
  for (const engine_row& r : engine_table()) {
    if (r.defaults.name() != key) continue;
    engine_settings e = r.defaults;
    e.version = version;
    e.backend = backend;
    if (version == "current") return e;
    if (r.numbered_versions) {
      if (!(version[0] >= '0' && version[0] <= '9')) {
        throw std::invalid_argument("engine version must be a release like 0.10 or 'current' (got '" + version + "')");
      }
      e.sampler_copies = vllm_sampler_copies(version);
      e.prefix_caching = !vllm_v0(version);
      if (vllm_v0(version)) {
        // V0: max_num_seqs 256 on every GPU, the token budget from the
        // longest sequence (with_scheduler_budget); KERNELS.md 4.6.
        e.device_sized_batches = false;
        e.max_sequences = 256;
        e.budget_from_model_len = true;
        e.source = "vLLM V0 EngineArgs and SchedulerConfig defaults (0.5-0.7: max_num_seqs 256, "
                   "max_num_batched_tokens max(max_model_len, 2048), 512 with chunked prefill above 32k)";
      }
      return e;
    }
    if (std::find(r.versions.begin(), r.versions.end(), version) == r.versions.end()) {
      std::string takes;
      for (std::string_view v : r.versions) takes += std::string(v) + " or ";
      throw std::invalid_argument("engine version of " + key + " must be " + takes + "'current' (got '" + version + "')");
    }
    // TensorRT-LLM's 2023 releases reused no KV blocks unless asked.
    if (e.id == engine_id::tensorrt_llm) e.prefix_caching = false;
    return e;
  }
  detail::fail_unknown("engine", key, engine_names());
}

namespace {

engine_settings with_overrides(engine_settings e, const engine_overrides& o) {
  if (o.memory_utilization) e.memory_utilization = *o.memory_utilization;
  if (o.block_tokens) e.block_tokens = *o.block_tokens;
  if (o.max_batched_tokens) {
    e.max_batched_tokens = *o.max_batched_tokens;
    e.budget_from_model_len = false;
  }
  if (o.max_sequences) e.max_sequences = *o.max_sequences;
  if (o.max_model_len) e.max_model_len = *o.max_model_len;
  if (o.prefix_caching) e.prefix_caching = *o.prefix_caching;
  validate(e);
  return e;
}

}  // namespace

engine_settings configure_engine(std::string_view name, const engine_overrides& o) {
  return with_overrides(find_engine(name), o);
}

engine_settings configure_engine(std::string_view name, const device& d, const engine_overrides& o) {
  engine_settings e = find_engine(name);
  if (e.device_sized_batches) {
    // vLLM V1 (EngineArgs._set_default_args, OpenAI server): GPUs of >= 70 GiB
    // other than the A100 get max_num_batched_tokens 8192 and max_num_seqs
    // 1024; the rest 2048 and 256.
    const bool large = in_GiB(d.memory) >= 70 && d.name.find("A100") == std::string::npos;
    e.max_batched_tokens = large ? 8192 : 2048;
    e.max_sequences = large ? 1024 : 256;
  }
  return with_overrides(std::move(e), o);
}

}  // namespace llmroof
