// Must not compile: a bandwidth (B/s) is not a capacity (B).
#include "llmroof/units/units.hpp"

int main() {
  using namespace llmroof::literals;
  llmroof::bytes capacity = 936_GBps;
  return static_cast<int>(capacity.value());
}
