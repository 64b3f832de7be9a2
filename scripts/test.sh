#!/usr/bin/env bash
# Runs every test: the dev preset (warnings as errors) and the ASan/UBSan
# preset through CTest (C++ unit tests, compile-fail tests, CLI, examples,
# consumer projects).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
for preset in dev asan-ubsan; do
  echo "== $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done
