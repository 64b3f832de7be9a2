#!/usr/bin/env bash
# Runs every test: C++ (dev preset with warnings as errors, then ASan/UBSan:
# unit, compile-fail, CLI, examples, consumer projects) and Python (pytest with
# strict settings and Hypothesis, the notebook, mypy --strict) in .venv, every
# benchmark once, briefly (their figures mean nothing here: they must not break
# unseen), then bounded libFuzzer runs of the three file readers.
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

echo "== Benchmarks, once each, briefly (timings on a dev build: not figures)"
build/dev/benchmarks/llmroof_benchmarks --benchmark_min_time=0.001 >/dev/null
.venv/bin/python benchmarks/bench_python.py --quick >/dev/null
.venv/bin/python benchmarks/sweep_benchmark.py --runs 1 >/dev/null
.venv/bin/python benchmarks/compare_tools.py --no-peers --repeat 2 >/dev/null
bash benchmarks/validate_limits.sh build/dev/llmroof 65536 >/dev/null

echo "== Fuzzing the file readers (bounded)"
bash scripts/fuzz.sh "${LLMROOF_FUZZ_RUNS:-300000}"
