// Serving engines: one enum and one row per engine (its versions, memory
// defaults, the KV-cache formats it can hold, whose kernels it runs, how
// measured data spells it). Engine names are parsed once, by find_engine;
// nothing else compares them. Adding an engine: a row in src/engine/engines.cpp (and
// its kernel classes in the same file), its tests, docs/architecture.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/detail/check.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/hardware/device.hpp"
#include "llmroof/units/formats.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

enum class engine_id : std::uint8_t { vllm, sglang, tensorrt_llm, llama_cpp, ollama, mlx };

inline constexpr std::array<std::string_view, 6> engine_id_names{"vllm",      "sglang", "tensorrt-llm",
                                                                 "llama.cpp", "ollama", "mlx"};

constexpr std::string_view to_string(engine_id e) { return detail::enum_name(e, engine_id_names); }

/// The engine a question without a device runs when none is named (a KV
/// cache's size): vLLM, the most deployed open serving engine (and the one
/// the memory data were measured on). With a device: default_engine_for.
inline constexpr engine_id default_engine = engine_id::vllm;

/// How an engine turns device memory into a KV-cache budget.
enum class memory_model : std::uint8_t {
  /// vLLM: utilisation x capacity holds weights, profiled activations and KV.
  fraction_of_total,
  /// SGLang: mem_fraction_static x capacity holds weights and KV; activations
  /// and CUDA graphs live in the rest.
  static_fraction,
  /// TensorRT-LLM: the KV cache takes a fraction of the memory left free
  /// after weights and activations (kv_cache_free_gpu_memory_fraction).
  fraction_of_free,
  /// llama.cpp, Ollama, MLX: no fraction; everything allocated exactly.
  exact,
};

/// Serving-engine settings that decide memory. Defaults are current vLLM's
/// (V1 engine); see find_engine and configure_engine for the others.
struct engine_settings {
  engine_id id = engine_id::vllm;
  /// Behaviour version ("current" unless the user asked for an older one, `vllm@0.10`).
  std::string version = "current";
  [[nodiscard]] std::string_view name() const { return to_string(id); }
  /// `name[-backend][@version]` (`llama.cpp-vulkan`, `vllm@0.10`): what
  /// find_engine and default_profile take.
  [[nodiscard]] std::string qualified_name() const {
    std::string out(name());
    if (!backend.empty()) out += "-" + backend;
    return version == "current" ? out : out + "@" + version;
  }
  memory_model model = memory_model::fraction_of_total;
  /// Share of device memory the engine may use (vLLM gpu_memory_utilization, default 0.9).
  double memory_utilization = 0.9;
  /// Memory the engine counts against its budget besides weights, activations and KV,
  /// per device. vLLM: the non-torch memory its profiler measures, 0.13-0.14 GiB on one
  /// H100 (engine_memory.csv, llm-d rows ML-012..ML-020).
  bytes runtime_reserve = make_bytes(0.13 * gibi);
  /// Added per device when a model spans several devices: NCCL and custom all-reduce
  /// buffers. vLLM on 2 x H100: non-torch 0.54-0.55 GiB, 0.42 GiB over one GPU (ML-014, ML-021).
  bytes collective_reserve = make_bytes(0.42 * gibi);
  /// Added per device when the ranks span nodes: NCCL's network transport keeps
  /// more buffers than NVLink/PCIe peers. vLLM 0.10.1.1 with Ray over two and four
  /// nodes of A100s: 0.7-1.0 GiB beyond the single-node figure (ML-003, ML-006).
  bytes inter_node_reserve = make_bytes(0.72 * gibi);
  /// Expert FFN rows per rank are padded to a multiple of this for the MXFP4
  /// MoE kernels (vLLM mxfp4.py rounds intermediate_size_per_partition up to 256):
  /// gpt-oss loads 64.38 GiB on one H100, not the 60.7 its tensors hold (ML-013).
  int mxfp4_expert_pad = 256;
  /// Tokens per KV block (vLLM block_size default 16); sequences round up.
  int block_tokens = 16;
  /// Tokens of the largest forward pass (vLLM max_num_batched_tokens); sets the
  /// activation peak the engine profiles at start-up.
  double max_batched_tokens = 8192;
  /// Sequences the sampler is profiled with (vLLM max_num_seqs).
  double max_sequences = 1024;
  /// fp32 vocabulary-wide tensors alive at the sampler's profiled peak, per sequence:
  /// logits plus the copies sorting, softmax and penalties make. Fitted per vLLM
  /// version on engine_memory.csv (see configure_engine); 1 for engines that keep
  /// only the logits.
  double sampler_copies = 9.7;
  /// Longest sequence the engine admits (vLLM max_model_len); it refuses to start
  /// when one such sequence cannot fit. Unset: the model's context length.
  std::optional<double> max_model_len = std::nullopt;
  /// vLLM picks max_num_seqs and max_num_batched_tokens by GPU (configure_engine).
  bool device_sized_batches = true;
  /// Whether a step runs prompt chunks beside the running decodes (vLLM V1's
  /// and TensorRT-LLM's token budget). SGLang's scheduler runs a prefill-only
  /// step whenever a prompt waits ("Run prefill first if possible",
  /// get_next_batch_to_run; --enable-mixed-chunk off by default), so the
  /// decodes stall while it runs and requests started together stay together.
  bool mixed_prefill = true;
  /// Whether a prompt's prefix already in the KV cache is skipped by prefill:
  /// vLLM V1's automatic prefix caching (enable_prefix_caching, on by default
  /// from 0.8; V0 releases had it off), SGLang's radix cache (on unless
  /// --disable-radix-cache), TensorRT-LLM's KV block reuse (enable_block_reuse,
  /// on in current releases, off in 2023's), llama.cpp's cache_prompt (on).
  bool prefix_caching = true;
  std::string source = "vLLM EngineArgs defaults (docs.vllm.ai, engine arguments); memory profiler (gpu_worker.py)";
  /// Backend of an engine that runs several (llama.cpp: cuda, hip, vulkan,
  /// sycl, metal), as `llama.cpp-vulkan` names it; empty: the device's own
  /// (Metal on Apple, CUDA on NVIDIA, HIP on AMD, SYCL on Intel GPUs).
  std::string backend{};
  /// vLLM's V0 scheduler (releases before 0.8) sizes its token budget by
  /// the longest sequence it admits (with_scheduler_budget); false once the
  /// budget is given.
  bool budget_from_model_len = false;
};

/// The token budget the engine starts with for sequences of up to
/// `max_model_len` tokens: vLLM V0's max_num_batched_tokens unset is
/// max(max_model_len, 2048), or 512 where chunked prefill turns itself on,
/// above 32,768 tokens (vllm 0.5.3 config.py:785-806, 0.6.3 config.py:957-1002,
/// arg_utils.py:936-960; KERNELS.md 4.6). Other engines: unchanged.
inline engine_settings with_scheduler_budget(engine_settings e, double max_model_len) {
  if (e.budget_from_model_len) e.max_batched_tokens = max_model_len > 32768 ? 512.0 : std::max(max_model_len, 2048.0);
  return e;
}

/// What a user may set about an engine; unset fields keep the engine's own
/// default for the device. Never sentinels: "not given" is an empty optional.
struct engine_overrides {
  std::optional<double> memory_utilization;
  std::optional<int> block_tokens;
  std::optional<double> max_batched_tokens;
  std::optional<double> max_sequences;
  std::optional<double> max_model_len = std::nullopt;
  std::optional<bool> prefix_caching;
};

/// One engine: everything the library knows of it, in one row.
struct engine_row {
  engine_settings defaults;  ///< memory model and defaults, with their source
  /// KV-cache dtypes it offers (vLLM/SGLang kv_cache_dtype; llama.cpp --cache-type-k).
  std::vector<std::string_view> kv_formats;
  /// Quantized weight formats people run it with, larger first: what "what
  /// would make it fit" offers (vLLM/SGLang/TensorRT-LLM: FP8 and AWQ
  /// checkpoints; llama.cpp: the GGUF quants its README lists first).
  std::vector<std::string_view> weight_formats;
  /// Versions it takes besides "current" (each changes kernels or memory); any
  /// release number when `numbered_versions`.
  std::vector<std::string_view> versions;
  bool numbered_versions = false;
  /// Whose kernels it runs (Ollama: llama.cpp's).
  engine_id kernels = engine_id::vllm;
  /// How measured data names it (a backend string naming one of these as a word, engine_position).
  std::vector<std::string_view> spellings;
  /// What the memory plan calls its runtime reserve.
  std::string_view reserve_label = "runtime reserve";
  /// Whether it refuses a max_model_len beyond the model's positions
  /// (max_position_embeddings): vLLM ("User-specified max_model_len is
  /// greater than the derived max_model_len", unless
  /// VLLM_ALLOW_LONG_MAX_MODEL_LEN) and SGLang (unless
  /// SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN); llama.cpp warns and runs.
  bool refuses_context_beyond_positions = false;
  /// Whether several devices split the model by layers unless told otherwise:
  /// llama.cpp's default --split-mode layer (common_params.split_mode =
  /// LLAMA_SPLIT_MODE_LAYER); `--tp` asks for its row split. vLLM, SGLang and
  /// TensorRT-LLM take tensor parallel over the devices.
  bool splits_layers = false;
  /// Whether an engine that splits by layers also runs `--tp` as a row split
  /// (llama.cpp's --split-mode row, dense models only); Ollama exposes no
  /// split mode (ollama/ollama#5458, "Enable Row Split Support", open).
  bool row_split = false;
  /// Whether cached prefixes are KV blocks every sequence shares, held once
  /// (vLLM's hashed full blocks, SGLang's radix tree, TensorRT-LLM's reused
  /// blocks), or each slot's own last prompt, matched token by token
  /// (llama.cpp's cache_prompt, so Ollama's; mlx-lm's server keeps one
  /// prompt cache): there a prefix every user sends is held once per slot.
  bool shares_prefix_blocks = true;
  /// Whether it serves prefill and decode on separate instances, handing the
  /// KV cache over a link: vLLM's KV connectors (NixlConnector,
  /// P2pNcclConnector), SGLang's --disaggregation-mode prefill|decode,
  /// TensorRT-LLM's disaggregated serving; not llama.cpp, Ollama or mlx-lm.
  bool disaggregates = true;
  /// Whether it runs data-parallel attention beside a tensor-parallel FFN
  /// (parallel_plan::dp_attention with tp): SGLang's --enable-dp-attention
  /// and TensorRT-LLM's enable_attention_dp (MoE TP); vLLM runs
  /// data-parallel attention only beside expert parallelism (DP + EP).
  bool dp_attention_beside_tp = false;
  /// Speculative decoding methods it runs (speculative_step.hpp's names): vLLM's
  /// speculative_config methods mtp, draft_model, eagle/eagle3 and ngram;
  /// SGLang's NEXTN, STANDALONE, EAGLE/EAGLE3 and NGRAM; TensorRT-LLM's MTP,
  /// Draft-Target, EAGLE-3 and N-gram; llama.cpp's --model-draft, lookup
  /// decoding and (2026 builds) --spec-type draft-mtp; mlx-lm's --draft-model;
  /// Ollama none.
  std::vector<std::string_view> speculation = {"mtp", "draft", "eagle", "ngram"};
  /// Backends it can be asked for by name (`llama.cpp-hip`); empty: one
  /// backend everywhere.
  std::vector<std::string_view> backends{};
};

/// Every engine, in engine_id order.
const std::vector<engine_row>& engine_table();

/// Whether a vLLM version ("0.6.3") is a release before 0.8: the V0 engine,
/// prefix caching off, the V0 kernel class. "current" and other engines'
/// version words are not.
bool vllm_v0(const std::string& version);
/// The row of `e`.
const engine_row& engine_row_of(engine_id e);
/// Where a measured backend string first names engine `e` (one of its
/// spellings, in any case, as a word of its own), or npos.
std::size_t engine_position(std::string_view backend, engine_id e);
/// Whether a measured backend string names engine `e` (engine_position).
bool engine_spelled(std::string_view backend, engine_id e);

/// Built-in engine profiles: vllm, sglang, tensorrt-llm, llama.cpp, ollama,
/// mlx, with their memory models and defaults (each with its source). A name
/// may carry a backend, `llama.cpp-vulkan`, and a version, `vllm@0.10`.
/// Throws std::invalid_argument listing the closest names when unknown, or
/// naming the backends or versions it takes.
engine_settings find_engine(std::string_view name);

/// Names of the built-in engine profiles.
std::vector<std::string> engine_names();

/// The one place an engine's settings are decided for a device: the engine's
/// defaults (vLLM sizes max_num_seqs and max_num_batched_tokens by GPU), then
/// the user's overrides. Throws std::invalid_argument naming a bad field.
engine_settings configure_engine(std::string_view name, const device& d, const engine_overrides& o = {});

/// The same without a device (KV sizing only): the engine's defaults, then the overrides.
engine_settings configure_engine(std::string_view name, const engine_overrides& o = {});

/// Throws std::invalid_argument naming the first field out of range.
inline void validate(const engine_settings& e) {
  detail::require_in_open_closed("engine.memory_utilization", e.memory_utilization, 0, 1);
  detail::require_non_negative("engine.runtime_reserve", e.runtime_reserve.value());
  detail::require_in("engine.block_tokens", e.block_tokens, 1, 1 << 20);
  detail::require_in("engine.max_batched_tokens", e.max_batched_tokens, 1, 1e9);
  detail::require_in("engine.max_sequences", e.max_sequences, 1, 1e9);
  detail::require_in("engine.sampler_copies", e.sampler_copies, 0, 100);
  detail::require_non_negative("engine.collective_reserve", e.collective_reserve.value());
  if (e.max_model_len) detail::require_in("engine.max_model_len", *e.max_model_len, 1, 1e9);
}

/// Whether `kv` is a KV-cache format of any engine (weight-only formats such
/// as awq, gptq, int8-wo and GGUF mixes never are).
bool is_kv_format(const numeric_format& kv);

/// Can `engine` store its KV cache in `kv`? (its row's kv_formats)
bool kv_format_supported(engine_id engine, const numeric_format& kv);

/// Throws std::invalid_argument unless `e` can hold a KV cache in `kv`.
void validate_kv_format(const engine_settings& e, const numeric_format& kv);

}  // namespace llmroof
