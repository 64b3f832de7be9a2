// GGUF header reader (format v2/v3, little-endian): metadata key/values and
// tensor infos; tensor data is never read.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "common.hpp"
#include "llmroof/units/formats.hpp"

namespace llmroof {

namespace {

using readers::fail;

struct ggml_type_info {
  const char* name;
  std::uint32_t block;  // elements per block
  std::uint32_t size;   // bytes per block
};

// ggml type ids, block sizes and block bytes (ggml.c type_traits, ggml-common.h).
const ggml_type_info* type_info(std::uint32_t t) {
  static const std::array<ggml_type_info, 40> table{{
      {"F32", 1, 4},        {"F16", 1, 2},       {"Q4_0", 32, 18},    {"Q4_1", 32, 20},
      {nullptr, 0, 0},      {nullptr, 0, 0},     {"Q5_0", 32, 22},    {"Q5_1", 32, 24},
      {"Q8_0", 32, 34},     {"Q8_1", 32, 36},    {"Q2_K", 256, 84},   {"Q3_K", 256, 110},
      {"Q4_K", 256, 144},   {"Q5_K", 256, 176},  {"Q6_K", 256, 210},  {"Q8_K", 256, 292},
      {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74}, {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50},
      {"IQ4_NL", 32, 18},   {"IQ3_S", 256, 110}, {"IQ2_S", 256, 82},  {"IQ4_XS", 256, 136},
      {"I8", 1, 1},         {"I16", 1, 2},       {"I32", 1, 4},       {"I64", 1, 8},
      {"F64", 1, 8},        {"IQ1_M", 256, 56},  {"BF16", 1, 2},      {nullptr, 0, 0},
      {nullptr, 0, 0},      {nullptr, 0, 0},     {"TQ1_0", 256, 54},  {"TQ2_0", 256, 66},
      {nullptr, 0, 0},      {nullptr, 0, 0},     {nullptr, 0, 0},     {"MXFP4", 32, 17},
  }};
  if (t >= table.size() || table[t].name == nullptr) return nullptr;
  return &table[t];
}

struct truncated {};

// Limits no real GGUF file reaches: they bound what a corrupt or hostile
// header can make the reader allocate or walk.
constexpr std::uint64_t max_gguf_header = 64ull << 20;   // bytes of metadata + tensor infos
constexpr std::uint64_t max_gguf_tensors = 1ull << 20;   // tensor infos
constexpr std::uint64_t max_gguf_kv = 1ull << 20;        // metadata keys
constexpr std::uint64_t max_gguf_array = 1ull << 24;     // elements of one metadata array  // the prefix ended before the header did

class cursor {
 public:
  cursor(std::span<const std::uint8_t> d, std::string_view name, std::uint64_t file_size)
      : d_(d), name_(name), file_size_(file_size < d.size() ? d.size() : file_size) {}

  [[nodiscard]] std::uint64_t pos() const { return pos_; }
  [[nodiscard]] std::uint64_t left_in_file() const { return file_size_ - pos_; }
  [[nodiscard]] std::uint64_t file_size() const { return file_size_; }

  void need(std::uint64_t n) {
    if (n > max_gguf_header - pos_) {
      fail(name_, "offset " + std::to_string(pos_) + ": the header would be larger than " +
                      std::to_string(max_gguf_header >> 20) + " MiB (limit; real headers are a few MiB)");
    }
    if (n > file_size_ - pos_) {
      fail(name_, "offset " + std::to_string(pos_) + ": truncated: " + std::to_string(n) +
                      " bytes needed, " + std::to_string(file_size_ - pos_) + " left");
    }
    if (n > d_.size() - pos_) throw truncated{};
  }
  template <class T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, d_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string str(const char* what, std::uint64_t limit = 1u << 24) {
    const std::uint64_t at = pos_;
    const auto n = get<std::uint64_t>();
    if (n > limit) {
      fail(name_, "offset " + std::to_string(at) + ": " + what + " length " + std::to_string(n) + " is absurd (limit " +
                      (limit >= (1u << 20) ? std::to_string(limit >> 20) + " MiB" : std::to_string(limit) + " bytes") + ")");
    }
    need(n);
    std::string s(reinterpret_cast<const char*>(d_.data() + pos_), static_cast<std::size_t>(n));
    pos_ += n;
    if (!readers::valid_utf8(s)) fail(name_, "offset " + std::to_string(at) + ": " + what + " is not valid UTF-8");
    return s;
  }
  void skip(std::uint64_t n) {
    need(n);
    pos_ += n;
  }
  [[noreturn]] void error(std::uint64_t at, const std::string& what) const {
    fail(name_, "offset " + std::to_string(at) + ": " + what);
  }

 private:
  std::span<const std::uint8_t> d_;
  std::string_view name_;
  std::uint64_t file_size_;
  std::uint64_t pos_ = 0;
};

constexpr std::uint32_t t_u8 = 0, t_i8 = 1, t_u16 = 2, t_i16 = 3, t_u32 = 4, t_i32 = 5, t_f32 = 6,
                        t_bool = 7, t_string = 8, t_array = 9, t_u64 = 10, t_i64 = 11, t_f64 = 12;

std::uint64_t scalar_size(std::uint32_t t) {
  switch (t) {
    case t_u8: case t_i8: case t_bool: return 1;
    case t_u16: case t_i16: return 2;
    case t_u32: case t_i32: case t_f32: return 4;
    case t_u64: case t_i64: case t_f64: return 8;
    default: return 0;
  }
}

double read_scalar(cursor& c, std::uint32_t t) {
  switch (t) {
    case t_u8: return c.get<std::uint8_t>();
    case t_i8: return c.get<std::int8_t>();
    case t_bool: return c.get<std::uint8_t>() != 0 ? 1 : 0;
    case t_u16: return c.get<std::uint16_t>();
    case t_i16: return c.get<std::int16_t>();
    case t_u32: return c.get<std::uint32_t>();
    case t_i32: return c.get<std::int32_t>();
    case t_f32: return c.get<float>();
    case t_u64: return static_cast<double>(c.get<std::uint64_t>());
    case t_i64: return static_cast<double>(c.get<std::int64_t>());
    case t_f64: return c.get<double>();
    default: return 0;
  }
}

gguf_value read_value(cursor& c, std::uint32_t type, const std::string& key) {
  gguf_value v;
  v.type = type;
  const std::uint64_t at = c.pos();
  if (type == t_string) {
    v.text = c.str("string value");
  } else if (type == t_array) {
    v.array_type = c.get<std::uint32_t>();
    v.array_length = c.get<std::uint64_t>();
    if (v.array_type == t_array) c.error(at, "key '" + key + "': nested arrays are not supported");
    if (v.array_length > max_gguf_array) {
      c.error(at, "key '" + key + "': array of " + std::to_string(v.array_length) + " elements (limit " +
                      std::to_string(max_gguf_array) + ")");
    }
    if (v.array_type == t_string) {
      // Each string holds at least its 8-byte length.
      if (v.array_length > c.left_in_file() / 8) {
        c.error(at, "key '" + key + "': array of " + std::to_string(v.array_length) + " strings exceeds the file");
      }
      for (std::uint64_t i = 0; i < v.array_length; ++i) {
        const auto n = c.get<std::uint64_t>();
        if (n > (1u << 24)) c.error(c.pos() - 8, "key '" + key + "': string length " + std::to_string(n) + " is absurd");
        c.skip(n);  // vocabulary strings are not kept
      }
    } else {
      const std::uint64_t sz = scalar_size(v.array_type);
      if (sz == 0) c.error(at, "key '" + key + "': unknown array element type " + std::to_string(v.array_type));
      if (v.array_length > c.left_in_file() / sz) {
        c.error(at, "key '" + key + "': array of " + std::to_string(v.array_length) + " elements exceeds the file");
      }
      c.skip(v.array_length * sz);
    }
  } else if (scalar_size(type) > 0) {
    v.number = read_scalar(c, type);
  } else {
    c.error(at, "key '" + key + "': unknown value type " + std::to_string(type));
  }
  return v;
}

/// The tensors' declared bytes against the data section: every tensor lies
/// inside the file, at an aligned offset, and no two share bytes. A header
/// whose tensors the file cannot hold describes a truncated or forged file.
void check_tensor_data(const gguf_header& h, std::string_view name, std::uint64_t file_size) {
  std::uint64_t alignment = 32;
  if (auto it = h.metadata.find("general.alignment"); it != h.metadata.end()) {
    const double a = it->second.number;
    if (it->second.type != t_u32 || a < 1 || a > (1u << 20) || (static_cast<std::uint64_t>(a) & (static_cast<std::uint64_t>(a) - 1)) != 0) {
      fail(name, "general.alignment must be a power of two up to 1 MiB (got " + detail::show(a) + ")");
    }
    alignment = static_cast<std::uint64_t>(a);
  }
  const std::uint64_t data_start = (h.header_bytes + alignment - 1) / alignment * alignment;
  const std::uint64_t data_bytes = file_size > data_start ? file_size - data_start : 0;
  struct extent {
    std::uint64_t begin, end;
    std::size_t index;
  };
  std::vector<extent> extents;
  extents.reserve(h.tensors.size());
  for (std::size_t i = 0; i < h.tensors.size(); ++i) {
    const gguf_tensor& t = h.tensors[i];
    const auto n = static_cast<std::uint64_t>(t.bytes);
    if (t.offset % alignment != 0) {
      fail(name, "tensor '" + t.name + "': data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                     std::to_string(alignment));
    }
    if (t.offset > data_bytes || n > data_bytes - t.offset) {
      fail(name, "tensor '" + t.name + "': " + std::to_string(n) + " bytes at data offset " + std::to_string(t.offset) +
                     " exceed the " + std::to_string(data_bytes) + " data bytes of the file (truncated?)");
    }
    if (n > 0) extents.push_back({t.offset, t.offset + n, i});
  }
  std::sort(extents.begin(), extents.end(), [](const extent& x, const extent& y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  std::size_t widest = 0;
  for (std::size_t i = 1; i < extents.size(); ++i) {
    if (extents[i - 1].end > extents[widest].end) widest = i - 1;
    if (extents[i].begin < extents[widest].end) {
      fail(name, "tensor '" + h.tensors[extents[i].index].name + "': data at offset " + std::to_string(extents[i].begin) +
                     " overlaps tensor '" + h.tensors[extents[widest].index].name + "'");
    }
  }
}

component classify_gguf(const std::string& n) {
  if (n == "token_embd.weight") return component::embedding;
  if (n == "output.weight" || n == "output.bias") return component::lm_head;
  if (n.find("norm") != std::string::npos) return component::norms;
  if (n.rfind("blk.", 0) == 0) {
    if (n.find(".attn_") != std::string::npos || n.find(".ssm_") != std::string::npos) return component::attention;
    if (n.find("ffn_gate_inp") != std::string::npos || n.find("exp_probs_b") != std::string::npos) return component::router;
    if (n.find("_exps") != std::string::npos || n.find("_shexp") != std::string::npos) return component::experts;
    if (n.find(".ffn_") != std::string::npos) return component::ffn;
  }
  if (n.rfind("v.", 0) == 0 || n.rfind("mm.", 0) == 0) return component::vision;
  return component::other;
}

/// The metadata's sizes against the tensors that carry them: a header claiming 10^9 experts over tensors holding 8 would
/// otherwise plan a model the file does not contain.
void check_metadata_against_tensors(const gguf_header& h, const architecture& a, const std::string& arch,
                                    std::string_view name) {
  if (h.tensors.empty()) fail(name, "the header lists no tensors: not a model file (its weights would count as 0 bytes)");
  long long max_block = -1;
  for (const auto& t : h.tensors) {
    if (t.name.rfind("blk.", 0) == 0) {
      const auto dot = t.name.find('.', 4);
      const std::string idx = t.name.substr(4, dot == std::string::npos ? std::string::npos : dot - 4);
      if (!idx.empty() && idx.size() < 7 && idx.find_first_not_of("0123456789") == std::string::npos) {
        max_block = std::max(max_block, std::stoll(idx));
      }
    }
    if (t.name == "token_embd.weight" && t.shape.size() == 2 && t.shape[0] != static_cast<std::uint64_t>(a.hidden_size)) {
      fail(name, "metadata '" + arch + ".embedding_length' is " + std::to_string(a.hidden_size) +
                     " but tensor 'token_embd.weight' has rows of " + std::to_string(t.shape[0]));
    }
    if (a.is_moe() && t.name.find("_exps.weight") != std::string::npos && t.shape.size() == 3 &&
        t.shape[2] != static_cast<std::uint64_t>(a.moe.num_experts)) {
      fail(name, "metadata '" + arch + ".expert_count' is " + std::to_string(a.moe.num_experts) + " but tensor '" + t.name +
                     "' holds " + std::to_string(t.shape[2]) + " experts");
    }
  }
  if (max_block >= 0 && max_block + 1 != a.num_layers) {
    fail(name, "metadata '" + arch + ".block_count' is " + std::to_string(a.num_layers) + " but the tensors describe " +
                   std::to_string(max_block + 1) + " blocks");
  }
  if (a.is_moe() && max_block >= 0) {
    bool any_experts = false;
    for (const auto& t : h.tensors) any_experts = any_experts || t.name.find("_exps") != std::string::npos;
    if (!any_experts) {
      fail(name, "metadata '" + arch + ".expert_count' is " + std::to_string(a.moe.num_experts) +
                     " but no tensor holds experts");
    }
  }
}

}  // namespace

std::string_view ggml_type_name(std::uint32_t type) {
  const auto* t = type_info(type);
  if (t == nullptr) throw std::invalid_argument("unknown ggml type " + std::to_string(type));
  return t->name;
}

gguf_header parse_gguf(std::span<const std::uint8_t> data, std::string_view name, std::uint64_t file_size) {
  cursor c(data, name, file_size);
  gguf_header h;
  c.need(4);
  if (std::memcmp(data.data(), "GGUF", 4) != 0) c.error(0, "wrong magic: not a GGUF file");
  c.skip(4);
  h.version = c.get<std::uint32_t>();
  if (h.version < 2 || h.version > 3) c.error(4, "GGUF version " + std::to_string(h.version) + " is not supported (2 or 3)");
  const auto n_tensors = c.get<std::uint64_t>();
  const auto n_kv = c.get<std::uint64_t>();
  if (n_tensors > max_gguf_tensors && n_tensors <= c.left_in_file() / 25) {
    c.error(8, "tensor count " + std::to_string(n_tensors) + " (limit " + std::to_string(max_gguf_tensors) + ")");
  }
  if (n_kv > max_gguf_kv && n_kv <= c.left_in_file() / 14) {
    c.error(16, "metadata count " + std::to_string(n_kv) + " (limit " + std::to_string(max_gguf_kv) + ")");
  }
  // A key/value takes at least 8 + 1 + 4 + 1 bytes and a tensor info 8 + 1 + 4 + 4 + 8.
  if (n_kv > c.left_in_file() / 14) c.error(16, "metadata count " + std::to_string(n_kv) + " exceeds the file");
  if (n_tensors > c.left_in_file() / 25) c.error(8, "tensor count " + std::to_string(n_tensors) + " exceeds the file");
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    std::string key = c.str("key", 4096);
    const auto type = c.get<std::uint32_t>();
    h.metadata[key] = read_value(c, type, key);
  }
  // Reserve only what the bytes read so far can describe.
  h.tensors.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(n_tensors, (data.size() - c.pos()) / 25 + 1)));
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    const std::uint64_t at = c.pos();
    gguf_tensor t;
    t.name = c.str("tensor name", 4096);
    const auto dims = c.get<std::uint32_t>();
    if (dims == 0 || dims > 8) c.error(at, "tensor '" + t.name + "': " + std::to_string(dims) + " dimensions (1 to 8 allowed)");
    double elements = 1;
    for (std::uint32_t k = 0; k < dims; ++k) {
      const auto n = c.get<std::uint64_t>();
      if (n == 0 || n > (1ull << 40)) c.error(at, "tensor '" + t.name + "': dimension " + std::to_string(n) + " is absurd");
      t.shape.push_back(n);
      elements *= static_cast<double>(n);
    }
    if (elements > 1e15) c.error(at, "tensor '" + t.name + "': " + detail::show(elements) + " elements is absurd");
    t.type = c.get<std::uint32_t>();
    const auto* info = type_info(t.type);
    if (info == nullptr) c.error(at, "tensor '" + t.name + "': unknown ggml type " + std::to_string(t.type));
    if (t.shape[0] % info->block != 0) {
      c.error(at, "tensor '" + t.name + "': first dimension " + std::to_string(t.shape[0]) +
                      " is not a multiple of the " + info->name + " block of " + std::to_string(info->block));
    }
    t.offset = c.get<std::uint64_t>();
    t.elements = elements;
    std::uint64_t count = 1;
    for (auto n : t.shape) count *= n;  // <= 1e15: no overflow
    t.bytes = static_cast<double>(count / info->block * info->size);
    h.tensors.push_back(std::move(t));
  }
  h.header_bytes = c.pos();
  check_tensor_data(h, name, c.file_size());
  return h;
}

gguf_header read_gguf(const std::string& path) {
  std::uint64_t size = 0;
  for (std::uint64_t limit = 8ull << 20;; limit = max_gguf_header) {
    const auto buf = readers::read_prefix(path, limit, &size);
    try {
      return parse_gguf(buf, path, size);
    } catch (const truncated&) {
      // parse_gguf refuses headers past max_gguf_header before asking for more.
      if (limit >= size || limit >= max_gguf_header) fail(path, "the header does not end within the file");
    }
  }
}

model_source model_from_gguf(const gguf_header& h, std::string_view name) {
  model_source out;
  out.path = std::string(name);
  const auto text = [&](const std::string& k) -> std::string {
    auto it = h.metadata.find(k);
    return it != h.metadata.end() && it->second.type == t_string ? it->second.text : std::string();
  };
  const std::string arch = text("general.architecture");
  if (arch.empty()) fail(name, "metadata has no 'general.architecture'");
  const auto num = [&](const std::string& k, std::optional<double> fallback) -> double {
    auto it = h.metadata.find(arch + "." + k);
    if (it == h.metadata.end() || it->second.type == t_array || it->second.type == t_string) {
      if (fallback) return *fallback;
      fail(name, "metadata has no number '" + arch + "." + k + "'");
    }
    const double v = it->second.number;
    if (!std::isfinite(v) || v < 0 || v > 1e9 || v != std::floor(v)) {
      fail(name, "metadata '" + arch + "." + k + "' must be a whole number (got " + detail::show(v) + ")");
    }
    return v;
  };
  architecture& a = out.arch;
  a.family = arch;
  a.id = std::filesystem::path(std::string(name)).stem().string();
  a.name = text("general.name").empty() ? a.id : text("general.name");
  a.source = "GGUF header: " + std::string(name);
  const double layers = num("block_count", std::nullopt);
  if (layers > 10000) fail(name, "block_count " + detail::show(layers) + " is absurd");
  a.num_layers = static_cast<int>(layers);
  a.hidden_size = static_cast<int>(num("embedding_length", std::nullopt));
  a.num_heads = static_cast<int>(num("attention.head_count", std::nullopt));
  a.num_kv_heads = static_cast<int>(num("attention.head_count_kv", double(a.num_heads)));
  a.head_dim = static_cast<int>(num("attention.key_length", a.num_heads > 0 ? double(a.hidden_size / a.num_heads) : 0.0));
  a.ffn_size = static_cast<int>(num("feed_forward_length", 0.0));
  a.max_context = static_cast<int>(num("context_length", 0.0));
  double vocab = num("vocab_size", 0.0);
  if (vocab == 0) {
    auto it = h.metadata.find("tokenizer.ggml.tokens");
    if (it != h.metadata.end()) vocab = static_cast<double>(it->second.array_length);
  }
  bool has_output = false;
  for (const auto& t : h.tensors) {
    if (t.name == "token_embd.weight" && vocab == 0 && t.shape.size() == 2) vocab = static_cast<double>(t.shape[1]);
    has_output = has_output || t.name == "output.weight";
    if (t.name.find(".attn_q.bias") != std::string::npos) a.qkv_bias = true;
    if (t.name.find(".attn_q_norm") != std::string::npos) a.qk_norm = true;
  }
  if (vocab > 1e8) fail(name, "vocabulary of " + detail::show(vocab) + " tokens is absurd (limit 1e8)");
  a.vocab_size = static_cast<int>(vocab);
  a.tied_embeddings = !has_output;
  const double experts = num("expert_count", 0.0);
  if (experts > 0) {
    a.moe.num_experts = static_cast<int>(experts);
    a.moe.experts_per_token = static_cast<int>(num("expert_used_count", std::nullopt));
    a.moe.expert_ffn = static_cast<int>(num("expert_feed_forward_length", double(a.ffn_size)));
    a.moe.shared_experts = static_cast<int>(num("expert_shared_count", 0.0));
    a.moe.first_dense_layers = static_cast<int>(num("leading_dense_block_count", 0.0));
    if (a.moe.first_dense_layers == 0) a.ffn_size = 0;
  }
  if (const double kv_lora = num("attention.kv_lora_rank", 0.0); kv_lora > 0) {
    a.attention = attention_kind::mla;
    a.mla.kv_lora_rank = static_cast<int>(kv_lora);
    a.mla.q_lora_rank = static_cast<int>(num("attention.q_lora_rank", 0.0));
    a.mla.qk_rope_head_dim = static_cast<int>(num("rope.dimension_count", std::nullopt));
    a.mla.qk_nope_head_dim = a.head_dim - a.mla.qk_rope_head_dim;
    a.mla.v_head_dim = static_cast<int>(num("attention.value_length", double(a.head_dim)));
  }
  if (const double w = num("attention.sliding_window", 0.0); w > 0) {
    out.warnings.push_back("attention.sliding_window: the layer pattern is not in the header; every layer counted as global");
  }
  try {
    validate(a);
  } catch (const std::invalid_argument& e) {
    fail(name, e.what());
  }
  check_metadata_against_tensors(h, a, arch, name);

  tensor_inventory inv;
  for (const auto& t : h.tensors) {
    const component c = classify_gguf(t.name);
    inv.tensors += 1;
    inv.bytes[c] += t.bytes;
    inv.elements[c] += t.elements;
    inv.bytes_by_type[std::string(ggml_type_name(t.type))] += t.bytes;
    inv.elements_by_type[std::string(ggml_type_name(t.type))] += t.elements;
  }
  const auto fmt = [&](component c, const numeric_format& fallback) {
    const double b = inv.bits(c);
    if (b <= 0) return fallback;
    return make_format("gguf:" + std::string(to_string(c)) + ":" + detail::show(std::round(b * 1e4) / 1e4), b,
                       math_format::bf16, "average of this GGUF file's tensors");
  };
  const auto bf16 = find_format("bf16");
  const numeric_format main_fmt = fmt(experts > 0 ? component::experts : component::ffn, bf16);
  out.pr = precision::of(main_fmt, find_format("fp16"));  // llama.cpp's default KV cache is F16
  out.pr.attention = fmt(component::attention, main_fmt);
  out.pr.ffn = fmt(component::ffn, main_fmt);
  out.pr.experts = fmt(component::experts, main_fmt);
  out.pr.embedding = fmt(component::embedding, main_fmt);
  out.pr.lm_head = has_output ? fmt(component::lm_head, main_fmt) : out.pr.embedding;
  out.quantized = true;
  out.tensors = inv;
  out.vision_params = inv.elements.count(component::vision) ? inv.elements.at(component::vision) : 0;
  return out;
}

model_source read_gguf_model(const std::string& path) { return model_from_gguf(read_gguf(path), path); }

}  // namespace llmroof
