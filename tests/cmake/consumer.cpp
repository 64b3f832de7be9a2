// A consumer of the installed (or added) llmroof: one KV size, one decode step.
#include <cstdio>

#include <llmroof/llmroof.hpp>

int main() {
  using namespace llmroof;
  const auto& a = find_model("llama-3.1-8b");
  const auto kv = kv_bytes_per_token(a, find_format("bf16"));
  const roofline r(find_device("h100-sxm"));
  const auto p = decode_step(a, precision{}, r, 1, 0);
  std::printf("kv %.0f B/token, decode %.1f t/s\n", kv.value(), p.tokens_per_s_estimate().value());
  return kv.value() == 131072.0 ? 0 : 1;
}
