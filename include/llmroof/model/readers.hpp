// Readers of local model files: HuggingFace config.json, GGUF headers and
// safetensors headers. Nothing is downloaded; only headers are read (never
// tensor data), and every size and count is checked against the file before
// anything is allocated.
//
// Every reader throws std::invalid_argument naming the file, the key or byte
// offset, and the reason: "model.gguf: offset 8: tensor count 99999999999
// exceeds what a 120-byte file can hold".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmroof/model/architecture.hpp"
#include "llmroof/model/precision.hpp"
#include "llmroof/units/units.hpp"

namespace llmroof {

/// Model components that tensors are sorted into.
enum class component : std::uint8_t {
  embedding, attention, ffn, experts, router, norms, lm_head, vision, other
};

inline constexpr std::array<std::string_view, 9> component_names{"embedding", "attention", "ffn",     "experts", "router",
                                                                  "norms",     "lm_head",   "vision", "other"};

std::string_view to_string(component c);

/// Exact bytes and elements of a file's tensors, by component and by dtype.
struct tensor_inventory {
  std::size_t tensors = 0;
  std::map<component, double> bytes;      ///< B
  std::map<component, double> elements;
  std::map<std::string, double> bytes_by_type;     ///< dtype name -> B
  std::map<std::string, double> elements_by_type;

  [[nodiscard]] double total_bytes() const;
  [[nodiscard]] double total_elements() const;
  /// Average bits per element of one component (0 when it has none).
  [[nodiscard]] double bits(component c) const;
};

/// What a file says about a model.
struct model_source {
  std::string path;
  architecture arch;
  precision pr;                 ///< weight formats from quantization_config or tensor types
  bool quantized = false;
  double vision_params = 0;     ///< vision tower + projector, counted apart, not decoded
  std::optional<tensor_inventory> tensors;  ///< exact bytes (GGUF, safetensors)
  std::vector<std::string> warnings;        ///< what was assumed
};

// ---- HuggingFace config.json ------------------------------------------------

/// Parses config.json text. `name` is used in messages and as the model id.
model_source parse_hf_config(std::string_view json_text, std::string_view name);

/// Reads `path`: a config.json file or a folder holding one.
model_source read_hf_config(const std::string& path);

// ---- GGUF ------------------------------------------------------------------

/// One value of GGUF metadata, as read (arrays keep only their length and,
/// for string arrays, nothing else: the tokenizer vocabulary is not kept).
struct gguf_value {
  std::uint32_t type = 0;
  double number = 0;
  std::string text;
  std::uint64_t array_length = 0;
  std::uint32_t array_type = 0;
};

struct gguf_tensor {
  std::string name;
  std::vector<std::uint64_t> shape;
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  double elements = 0;
  double bytes = 0;
};

struct gguf_header {
  std::uint32_t version = 0;
  std::map<std::string, gguf_value> metadata;
  std::vector<gguf_tensor> tensors;
  std::uint64_t header_bytes = 0;  ///< where the header ends
};

/// Name of a ggml tensor type ("Q4_K", "F16"), or throws for an unknown id.
std::string_view ggml_type_name(std::uint32_t type);

/// Parses a GGUF header from the first bytes of a file (a prefix is enough).
gguf_header parse_gguf(std::span<const std::uint8_t> data, std::string_view name,
                       std::uint64_t file_size = 0);

/// Reads the header of a .gguf file, never its tensor data.
gguf_header read_gguf(const std::string& path);

/// Architecture and exact weight bytes of a GGUF file.
model_source model_from_gguf(const gguf_header& h, std::string_view name);
model_source read_gguf_model(const std::string& path);

// ---- safetensors -------------------------------------------------------------

struct safetensors_tensor {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  double bytes = 0;
  std::string file;
};

/// Parses one safetensors file's leading bytes (8-byte length + JSON header).
std::vector<safetensors_tensor> parse_safetensors(std::span<const std::uint8_t> data,
                                                  std::string_view name,
                                                  std::uint64_t file_size = 0);

/// Reads one .safetensors file, a model.safetensors.index.json and its shards,
/// or a folder holding either. Returns every tensor.
std::vector<safetensors_tensor> read_safetensors(const std::string& path);

/// Sorts tensors (HF names) into components.
tensor_inventory inventory(const std::vector<safetensors_tensor>& tensors);

/// config.json beside the safetensors gives the architecture; the tensors give
/// exact bytes. Throws when no config.json is found.
model_source read_safetensors_model(const std::string& path);

/// Bytes an engine loads for a model read from a file: the exact tensor bytes
/// when it runs in the file's own formats (`own_formats`) and the file lists
/// them; else (re-quantized with other weights, or a config.json without
/// tensors) the weights counted in `pr` plus the vision tower in bf16 (it is
/// loaded, though never decoded). The one place this rule is written:
/// resolve() decides a deployment's stored bytes with it.
inline bytes loaded_weight_bytes(const model_source& m, const precision& pr, bool own_formats = true) {
  if (own_formats && m.tensors) return make_bytes(m.tensors->total_bytes());
  return weight_bytes(m.arch, pr) + make_bytes(m.vision_params * 2.0);
}

/// The formats a config.json's `quantization_config` (its JSON text) leaves
/// model `a` in, module by module, as read_hf_config reads them; empty when
/// it names no weight format. Throws std::invalid_argument naming `name`.
std::optional<precision> quantization_formats(std::string_view quantization_config, const architecture& a,
                                              std::string_view name);

/// The publisher's own checkpoint of a catalog model, where it is not stored
/// in 16 bits: its repository and its formats (its quantization_config).
struct published_checkpoint {
  std::string repo;
  precision pr;
};

/// The checkpoint catalog model `a` (by id) is published in, when that is
/// not 16-bit (DeepSeek-V3 FP8, gpt-oss MXFP4 experts, Kimi K2.5 INT4
/// experts); empty otherwise. What resolve() plans when no weight format is
/// asked for.
std::optional<published_checkpoint> published_formats(const architecture& a);

/// The weight format a quantized checkpoint's name announces
/// ("Qwen/Qwen3-32B-AWQ" -> awq-int4, "-FP8" -> fp8, "-FP8-dynamic" ->
/// fp8-e4m3, "-GPTQ-Int4", "-MXFP4", "-NVFP4", GGUF types such as Q4_K_M);
/// empty when it names none.
std::optional<std::string> format_in_name(std::string_view name);

/// Any of the above by what `path` is: a .gguf file, a .safetensors file or
/// index, a config.json, or a folder (config.json plus safetensors if any).
model_source read_model(const std::string& path);

/// Whether a model name is a file to read_model rather than a catalog id:
/// an existing path, a name with .json, .gguf or .safetensors in it, or one
/// with a '/' that names no catalog model ("Qwen/Qwen3-32B" is the
/// catalog's). The command's --model and Python's model= both ask it.
bool names_a_model_file(const std::string& name);

}  // namespace llmroof
