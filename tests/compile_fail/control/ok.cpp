// Control for the negative compile tests: the same harness on correct code.
#include "llmroof/units/units.hpp"

int main() {
  using namespace llmroof::literals;
  const llmroof::seconds t = 1_GB / 936_GBps;
  return t.value() > 0 ? 0 : 1;
}
