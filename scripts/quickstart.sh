#!/usr/bin/env bash
# Sets up what is missing, builds llmroof (release) and runs the seed scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release -DLLMROOF_BUILD_TESTS=OFF >/dev/null
cmake --build --preset release >/dev/null
./build/release/llmroof plan --model devstral-small-2-24b --device rtx-pro-6000-blackwell \
  --weights fp8 --kv bf16 --users 4 --context 128k
