// Where most tests start: a catalog model in named formats on a catalog
// device, under the device class's default profile.
#pragma once

#include <string_view>

#include "llmroof/llmroof.hpp"

namespace llmroof::test {

struct catalog_setup {
  const architecture& a;
  precision pr;
  roofline r;
};

/// `const auto [a, pr, r] = on("llama-3.1-8b", "h100-sxm", "fp8");`
inline catalog_setup on(std::string_view model, std::string_view dev, std::string_view weights = "bf16",
                        std::string_view kv = "bf16") {
  return {find_model(model), precision::of(find_format(weights), find_format(kv)), roofline(find_device(dev))};
}

/// Requests of `prompt` tokens that generate `output`, each user's context
/// holding both.
inline workload requests(double prompt, double output) {
  workload w;
  w.prompt = prompt;
  w.output = output;
  w.context = prompt + output;
  return w;
}

}  // namespace llmroof::test
