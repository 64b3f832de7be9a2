// Must not compile: bytes and seconds are different dimensions.
#include "llmroof/units/units.hpp"

int main() {
  using namespace llmroof::literals;
  auto x = 1_GB + 1_s;
  return static_cast<int>(x.value());
}
