// The seed scenario (the README's first command) from C++: Devstral-Small-2-24B, FP8 weights,
// BF16 KV cache, four users on one RTX Pro 6000 Blackwell.
#include <cstdio>

#include "llmroof/llmroof.hpp"

int main() {
  using namespace llmroof;
  // The deployment as the command resolves it (vLLM's memory and profile).
  request q;
  q.model = &find_model("devstral-small-2-24b");
  q.dev = &find_device("rtx-pro-6000-blackwell");
  q.weights = find_format("fp8");
  q.kv = find_format("bf16");
  const deployment d = resolve(q);

  workload w;
  w.users = 4;
  w.context = 131072;
  const plan_result p = plan(d, w);

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
