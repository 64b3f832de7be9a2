// Must not compile: FLOP/s and tokens/s are different dimensions.
#include "llmroof/units/units.hpp"

int main() {
  using namespace llmroof::literals;
  llmroof::tokens_per_second rate = 1_TFLOPS;
  return static_cast<int>(rate.value());
}
