// A minimal GGUF writer for tests: metadata, tensor infos at aligned offsets,
// and zeroed tensor data (the reader checks the data is there).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace llmroof::testing {

struct gguf_builder {
  std::vector<std::uint8_t> out;
  std::uint64_t kv = 0;
  std::uint64_t tensors = 0;
  std::vector<std::uint8_t> kv_bytes;
  std::vector<std::uint8_t> tensor_bytes;
  std::vector<std::size_t> offset_at;     // where each tensor's offset field sits in tensor_bytes
  std::vector<std::uint64_t> data_sizes;  // bytes of each tensor's data

  static std::uint64_t data_size(const std::vector<std::uint64_t>& shape, std::uint32_t type) {
    std::uint64_t n = 1;
    for (auto s : shape) n *= s;
    switch (type) {
      case 0: return n * 4;                  // F32
      case 1: case 30: return n * 2;         // F16, BF16
      case 2: return n / 32 * 18;            // Q4_0
      case 8: return n / 32 * 34;            // Q8_0
      case 12: return n / 256 * 144;         // Q4_K
      case 14: return n / 256 * 210;         // Q6_K
      default: return 0;
    }
  }

  template <class T>
  static void put(std::vector<std::uint8_t>& v, T x) {
    std::uint8_t b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));
    v.insert(v.end(), b, b + sizeof(T));
  }
  static void put_str(std::vector<std::uint8_t>& v, const std::string& s) {
    put<std::uint64_t>(v, s.size());
    v.insert(v.end(), s.begin(), s.end());
  }
  gguf_builder& u32(const std::string& key, std::uint32_t x) {
    put_str(kv_bytes, key);
    put<std::uint32_t>(kv_bytes, 4);
    put<std::uint32_t>(kv_bytes, x);
    ++kv;
    return *this;
  }
  gguf_builder& str(const std::string& key, const std::string& x) {
    put_str(kv_bytes, key);
    put<std::uint32_t>(kv_bytes, 8);
    put_str(kv_bytes, x);
    ++kv;
    return *this;
  }
  gguf_builder& tensor(const std::string& name, std::vector<std::uint64_t> shape, std::uint32_t type) {
    put_str(tensor_bytes, name);
    put<std::uint32_t>(tensor_bytes, static_cast<std::uint32_t>(shape.size()));
    for (auto s : shape) put<std::uint64_t>(tensor_bytes, s);
    put<std::uint32_t>(tensor_bytes, type);
    offset_at.push_back(tensor_bytes.size());
    data_sizes.push_back(data_size(shape, type));
    put<std::uint64_t>(tensor_bytes, 0);
    ++tensors;
    return *this;
  }
  std::vector<std::uint8_t> build() const {
    std::vector<std::uint8_t> v{'G', 'G', 'U', 'F'};
    put<std::uint32_t>(v, 3);
    put<std::uint64_t>(v, tensors);
    put<std::uint64_t>(v, kv);
    v.insert(v.end(), kv_bytes.begin(), kv_bytes.end());
    std::vector<std::uint8_t> infos = tensor_bytes;
    std::uint64_t offset = 0;
    for (std::size_t i = 0; i < offset_at.size(); ++i) {
      std::memcpy(infos.data() + offset_at[i], &offset, sizeof offset);
      offset += (data_sizes[i] + 31) / 32 * 32;
    }
    v.insert(v.end(), infos.begin(), infos.end());
    if (!offset_at.empty()) v.resize((v.size() + 31) / 32 * 32 + offset, 0);
    return v;
  }
};

}  // namespace llmroof::testing
