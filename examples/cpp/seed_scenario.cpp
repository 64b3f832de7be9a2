// The seed scenario of DESIGN.md from C++: Devstral-Small-2-24B, FP8 weights,
// BF16 KV cache, four users on one RTX Pro 6000 Blackwell.
#include <cstdio>

#include "llmroof/llmroof.hpp"

int main() {
  using namespace llmroof;
  const architecture& model = find_model("devstral-small-2-24b");
  const device& gpu = find_device("rtx-pro-6000-blackwell");
  const precision pr = precision::of(find_format("fp8"), find_format("bf16"));
  const roofline roof(gpu);

  scenario s;
  s.users = 4;
  s.context = 131072;
  const plan_result p = plan(model, pr, roof, s);

  std::printf("KV cache: %.0f B per token\n", p.memory.kv_per_token.value());
  std::printf("4 users at 128k fit: %s (short by %.2f GiB)\n", p.memory.fits ? "yes" : "no",
              in_GiB(p.memory.shortfall()));
  std::printf("most users at 128k: %.0f; longest context for 4 users: %.0f tokens\n",
              p.memory.max_sequences, p.memory.max_context);
  for (const auto& pt : p.curve) {
    std::printf("context %7.0f: one user %5.1f t/s (bound %5.1f)\n", pt.context,
                pt.single.tokens_per_s_estimate().value(), pt.single.tokens_per_s_bound().value());
  }
  return 0;
}
