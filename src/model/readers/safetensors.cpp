// safetensors header reader (8-byte little-endian length + JSON), single files
// and sharded sets (model.safetensors.index.json), and the component inventory.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <array>
#include <set>

#include "common.hpp"
#include "llmroof/detail/enum_names.hpp"
#include "llmroof/units/formats.hpp"

namespace llmroof {

namespace {

using nlohmann::json;
using readers::fail;

double dtype_bytes(const std::string& d) {
  static const std::map<std::string, double> sizes = {
      {"F64", 8}, {"I64", 8}, {"U64", 8}, {"F32", 4}, {"I32", 4}, {"U32", 4}, {"F16", 2},
      {"BF16", 2}, {"I16", 2}, {"U16", 2}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"F8_E8M0", 1},
      {"I8", 1}, {"U8", 1}, {"BOOL", 1}, {"F4", 0.5}, {"F6_E2M3", 0.75}, {"F6_E3M2", 0.75}};
  auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

component classify_hf(const std::string& n) {
  if (n.find("vision") != std::string::npos || n.find("visual") != std::string::npos ||
      n.find("multi_modal_projector") != std::string::npos || n.find("mm_projector") != std::string::npos) {
    return component::vision;
  }
  if (n.find("embed_tokens") != std::string::npos || n.find("wte") != std::string::npos ||
      n.find("word_embeddings") != std::string::npos) {
    return component::embedding;
  }
  if (n.rfind("lm_head", 0) == 0 || n.find(".lm_head") != std::string::npos) return component::lm_head;
  if (n.find("norm") != std::string::npos || n.find(".ln_") != std::string::npos) return component::norms;
  if (n.find(".experts.") != std::string::npos || n.find("shared_expert") != std::string::npos) return component::experts;
  if (n.find(".mlp.gate.") != std::string::npos || n.find(".router.") != std::string::npos ||
      n.find("block_sparse_moe.gate.") != std::string::npos) {
    return component::router;
  }
  if (n.find("attn") != std::string::npos || n.find("attention") != std::string::npos ||
      n.find("linear_attn") != std::string::npos) {
    return component::attention;
  }
  if (n.find(".mlp.") != std::string::npos || n.find("feed_forward") != std::string::npos) return component::ffn;
  return component::other;
}

}  // namespace

std::string_view to_string(component c) { return detail::enum_name(c, component_names); }

double tensor_inventory::total_bytes() const {
  double s = 0;
  for (const auto& [c, b] : bytes) s += b;
  return s;
}

double tensor_inventory::total_elements() const {
  double s = 0;
  for (const auto& [c, e] : elements) s += e;
  return s;
}

double tensor_inventory::bits(component c) const {
  auto b = bytes.find(c);
  auto e = elements.find(c);
  if (b == bytes.end() || e == elements.end() || e->second <= 0) return 0;
  return b->second * 8 / e->second;
}

std::vector<safetensors_tensor> parse_safetensors(std::span<const std::uint8_t> data, std::string_view name,
                                                  std::uint64_t file_size) {
  const std::uint64_t size = file_size < data.size() ? data.size() : file_size;
  if (size < 8) fail(name, "offset 0: truncated: no 8-byte header length");
  std::uint64_t n = 0;
  std::memcpy(&n, data.data(), 8);
  if (n > (100ull << 20)) fail(name, "offset 0: header length " + std::to_string(n) + " is absurd (limit 100 MiB)");
  if (n > size - 8) {
    fail(name, "offset 0: header length " + std::to_string(n) + " exceeds the file (" + std::to_string(size - 8) + " bytes after it)");
  }
  if (n > data.size() - 8) fail(name, "offset 8: truncated header");
  readers::require_json_depth(name, std::string_view(reinterpret_cast<const char*>(data.data()) + 8, n), "offset 8: ");
  json j;
  try {
    j = json::parse(data.begin() + 8, data.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  } catch (const json::exception& e) {
    fail(name, std::string("offset 8: invalid JSON header: ") + e.what());
  }
  if (!j.is_object()) fail(name, "offset 8: the header must be a JSON object");
  const std::uint64_t data_bytes = size - 8 - n;
  std::vector<safetensors_tensor> out;
  struct span {
    std::uint64_t begin, end;
    std::size_t index;
  };
  std::vector<span> spans;
  for (const auto& [key, v] : j.items()) {
    if (key == "__metadata__") continue;
    const std::string where = "tensor '" + key.substr(0, 200) + "'";
    if (!v.is_object()) fail(name, where + " must be an object");
    if (!v.contains("dtype") || !v.at("dtype").is_string()) fail(name, where + ": missing string 'dtype'");
    if (!v.contains("shape") || !v.at("shape").is_array()) fail(name, where + ": missing array 'shape'");
    if (!v.contains("data_offsets") || !v.at("data_offsets").is_array() || v.at("data_offsets").size() != 2) {
      fail(name, where + ": 'data_offsets' must be [begin, end]");
    }
    safetensors_tensor t;
    t.name = key;
    t.file = std::string(name);
    t.dtype = v.at("dtype").get<std::string>();
    const double per = dtype_bytes(t.dtype);
    if (per == 0) fail(name, where + ": unknown dtype '" + t.dtype.substr(0, 20) + "'");
    if (v.at("shape").size() > 8) fail(name, where + ": more than 8 dimensions");
    double elements = 1;
    for (const auto& s : v.at("shape")) {
      if (!s.is_number_unsigned()) fail(name, where + ": shape entries must be non-negative integers");
      t.shape.push_back(s.get<std::uint64_t>());
      elements *= static_cast<double>(t.shape.back());
    }
    const auto& off = v.at("data_offsets");
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) {
      fail(name, where + ": data_offsets must be non-negative integers");
    }
    const auto b = off[0].get<std::uint64_t>();
    const auto e = off[1].get<std::uint64_t>();
    if (e < b || e > data_bytes) {
      fail(name, where + ": data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] outside the " +
                     std::to_string(data_bytes) + " data bytes");
    }
    t.bytes = static_cast<double>(e - b);
    if (std::fabs(t.bytes - elements * per) > 0.5) {
      fail(name, where + ": " + detail::show(t.bytes) + " bytes for " + detail::show(elements) + " elements of " + t.dtype);
    }
    out.push_back(std::move(t));
    if (e > b) spans.push_back({b, e, out.size() - 1});
  }
  // Each tensor owns its bytes: two tensors over the same bytes (aliased or
  // overlapping offsets) would count weights the file does not hold.
  std::sort(spans.begin(), spans.end(), [](const span& x, const span& y) {
    return x.begin != y.begin ? x.begin < y.begin : x.end < y.end;
  });
  std::size_t widest = 0;  // the span reaching furthest so far
  for (std::size_t i = 1; i < spans.size(); ++i) {
    if (spans[i - 1].end > spans[widest].end) widest = i - 1;
    const span& a = spans[widest];
    const span& b = spans[i];
    if (b.begin < a.end) {
      fail(name, "tensor '" + out[b.index].name.substr(0, 200) + "': data_offsets [" + std::to_string(b.begin) + ", " +
                     std::to_string(b.end) + "] overlap tensor '" + out[a.index].name.substr(0, 200) + "' [" +
                     std::to_string(a.begin) + ", " + std::to_string(a.end) + "]");
    }
  }
  return out;
}

namespace {

/// One file of a (possibly sharded) set. `visited` holds the canonical paths
/// already read: an index naming itself, two indexes naming each other, or
/// two names for one shard would otherwise recurse forever or count the same
/// bytes twice.
std::vector<safetensors_tensor> read_safetensors_file(const std::filesystem::path& p, std::set<std::string>& visited,
                                                      int depth) {
  namespace fs = std::filesystem;
  readers::require_regular_file(p.string());
  std::error_code ec;
  const std::string canonical = fs::weakly_canonical(p, ec).string();
  if (!visited.insert(ec ? p.string() : canonical).second) {
    fail(p.string(), "read twice: an index names this file again (itself, another index or an alias of a shard)");
  }
  if (p.extension() == ".json") {
    if (depth > 0) fail(p.string(), "an index may only name .safetensors shards, not another index");
    std::uint64_t size = 0;
    const auto buf = readers::read_prefix(p.string(), 64ull << 20, &size);
    if (size > (64ull << 20)) fail(p.string(), "larger than 64 MiB: not an index");
    readers::require_json_depth(p.string(), std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
    json j;
    try {
      j = json::parse(buf.begin(), buf.end());
    } catch (const json::exception& e) {
      fail(p.string(), std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object()) {
      fail(p.string(), "missing object 'weight_map'");
    }
    std::set<std::string> shards;
    for (const auto& [tensor, file] : j.at("weight_map").items()) {
      if (!file.is_string()) fail(p.string(), "weight_map['" + tensor.substr(0, 200) + "'] must be a file name");
      const std::string f = file.get<std::string>();
      if (f.find('/') != std::string::npos || f.find("..") != std::string::npos) {
        fail(p.string(), "weight_map['" + tensor.substr(0, 200) + "'] must name a file in the same folder (got '" + f.substr(0, 200) + "')");
      }
      if (fs::path(f).extension() != ".safetensors") {
        fail(p.string(), "weight_map['" + tensor.substr(0, 200) + "'] must name a .safetensors shard (got '" + f.substr(0, 200) + "')");
      }
      shards.insert(f);
    }
    if (shards.size() > 100000) fail(p.string(), "weight_map names more than 100000 shards");
    std::vector<safetensors_tensor> all;
    for (const auto& s : shards) {
      auto part = read_safetensors_file(p.parent_path() / s, visited, depth + 1);
      all.insert(all.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
    }
    return all;
  }
  std::uint64_t size = 0;
  auto head = readers::read_prefix(p.string(), 8, &size);
  std::uint64_t n = 0;
  if (head.size() == 8) std::memcpy(&n, head.data(), 8);
  const std::uint64_t want = n <= (100ull << 20) ? 8 + n : 8;
  const auto buf = readers::read_prefix(p.string(), want, &size);
  return parse_safetensors(buf, p.string(), size);
}

}  // namespace

std::vector<safetensors_tensor> read_safetensors(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "model.safetensors.index.json", ec)) {
      p /= "model.safetensors.index.json";
    } else if (fs::exists(p / "model.safetensors", ec)) {
      p /= "model.safetensors";
    } else {
      fail(path, "no model.safetensors or model.safetensors.index.json in this folder");
    }
  }
  std::set<std::string> visited;
  return read_safetensors_file(p, visited, 0);
}

tensor_inventory inventory(const std::vector<safetensors_tensor>& tensors) {
  tensor_inventory inv;
  for (const auto& t : tensors) {
    const component c = classify_hf(t.name);
    double elements = 1;
    for (auto s : t.shape) elements *= static_cast<double>(s);
    inv.tensors += 1;
    inv.bytes[c] += t.bytes;
    inv.elements[c] += elements;
    inv.bytes_by_type[t.dtype] += t.bytes;
    inv.elements_by_type[t.dtype] += elements;
  }
  return inv;
}

model_source read_safetensors_model(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  const fs::path folder = fs::is_directory(p, ec) ? p : p.parent_path();
  tensor_inventory inv = inventory(read_safetensors(path));  // header errors first
  if (!fs::exists(folder / "config.json", ec)) {
    fail(path, "no config.json beside the safetensors: the architecture cannot be known from tensors alone");
  }
  model_source m = read_hf_config((folder / "config.json").string());
  m.tensors = std::move(inv);
  m.path = path;
  if (m.tensors->elements.count(component::vision)) m.vision_params = m.tensors->elements.at(component::vision);
  return m;
}

bool names_a_model_file(const std::string& name) {
  std::error_code ec;
  if (std::filesystem::exists(name, ec)) return true;
  if (name.find(".json") != std::string::npos || name.find(".gguf") != std::string::npos ||
      name.find(".safetensors") != std::string::npos) {
    return true;
  }
  return name.find('/') != std::string::npos && match_models(name).empty();
}

model_source read_model(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (st.type() != fs::file_type::directory) readers::require_regular_file(path);
  const std::string ext = p.extension().string();
  if (ext == ".gguf") return read_gguf_model(path);
  if (ext == ".safetensors" || p.filename() == "model.safetensors.index.json") return read_safetensors_model(path);
  if (fs::is_directory(p, ec)) {
    if (fs::exists(p / "model.safetensors.index.json", ec) || fs::exists(p / "model.safetensors", ec)) {
      return read_safetensors_model(path);
    }
    return read_hf_config(path);
  }
  return read_hf_config(path);
}

}  // namespace llmroof
