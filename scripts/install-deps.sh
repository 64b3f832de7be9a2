#!/usr/bin/env bash
# Installs what llmroof needs and is missing: Debian packages (compiler, CMake,
# Ninja, Boost, Eigen, doctest, nlohmann-json, Google Benchmark, GNU time for
# benchmarks/validate_limits.sh) and, with
# --python, the Python build and test tools from PyPI. Idempotent and quiet
# when everything is there.
set -euo pipefail

debs=(g++ cmake ninja-build python3 libboost-dev libeigen3-dev doctest-dev
      nlohmann-json3-dev libbenchmark-dev clang libclang-rt-14-dev time)
missing=()
for p in "${debs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# CMake presets need CMake >= 3.25 and Ninja, whichever installed them.
if ! cmake --version >/dev/null 2>&1 || ! ninja --version >/dev/null 2>&1; then
  python3 -m pip install -q "cmake>=3.25" ninja
fi

if [ "${1:-}" = "--python" ]; then
  python3 -m pip install -q -r "$(dirname "$0")/../requirements-dev.txt"
fi
