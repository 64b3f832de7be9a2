// A minimal GGUF writer for tests: metadata and tensor infos only.
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
    v.insert(v.end(), tensor_bytes.begin(), tensor_bytes.end());
    return v;
  }
};

}  // namespace llmroof::testing
