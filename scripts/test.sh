#!/usr/bin/env bash
# Runs every test: C++ (dev preset with warnings as errors, then ASan/UBSan:
# unit, compile-fail, CLI, examples, consumer projects) and Python (pytest with
# strict settings and Hypothesis, the notebook, mypy --strict) in .venv, then
# bounded libFuzzer runs of the three file readers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
for preset in dev asan-ubsan; do
  echo "== C++: $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs"
  ctest --preset "$preset" -j "$jobs"
done

echo "== Python"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements-dev.txt
.venv/bin/python -m pip install -q .
.venv/bin/python -m pytest tests/python
.venv/bin/python -m mypy

echo "== Fuzzing the file readers (bounded)"
bash scripts/fuzz.sh "${LLMROOF_FUZZ_RUNS:-300000}"
