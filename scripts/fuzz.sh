#!/usr/bin/env bash
# Bounded libFuzzer runs of the three file readers (clang, ASan + UBSan).
# usage: scripts/fuzz.sh [runs per reader, default 200000]
#
# The targets abort when an accepted file declares tensors its data cannot
# hold (sizes past the end, shared bytes). The kept corpus lives in
# tests/fuzz/corpus/<reader> and seeds every run. The documented longer run
# (>= 10^6 executions per reader) also refreshes it:
#   LLMROOF_FUZZ_SAVE=1 scripts/fuzz.sh 1000000
# which merges what the run found into tests/fuzz/corpus (libFuzzer -merge=1
# keeps only inputs that add coverage, so it stays small).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200000}
out=build/fuzz
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -Iinclude -Isrc)
lib_sources=(src/hardware/devices.cpp src/hardware/device_io.cpp src/model/models.cpp src/engine/profiles.cpp src/units/formats.cpp src/hardware/links.cpp src/engine/engines.cpp src/model/readers/*.cpp)
# The library is compiled once, on every core, and linked into each target.
mkdir -p "$out/obj"
object_of() { echo "$out/obj/$(echo "$1" | tr / _).o"; }
export -f object_of; export out
printf '%s\n' "${lib_sources[@]}" tests/fuzz/fuzz_{gguf,safetensors,hf_config}.cpp |
  xargs -P "$(nproc)" -I{} bash -c 'clang++ "$@" -c {} -o "$(object_of {})"' _ "${flags[@]}"
lib_objects=()
for s in "${lib_sources[@]}"; do lib_objects+=("$(object_of "$s")"); done
for target in gguf safetensors hf_config; do
  clang++ -fsanitize=fuzzer,address,undefined "${lib_objects[@]}" "$(object_of "tests/fuzz/fuzz_${target}.cpp")" -o "$out/fuzz_${target}"
done

# Seeds: the broken-file corpus, the shipped HuggingFace configs, and valid files written here.
rm -rf "$out/seeds" && mkdir -p "$out/seeds/gguf" "$out/seeds/safetensors" "$out/seeds/hf_config"
cp tests/corpus/gguf/* "$out/seeds/gguf/"
cp tests/corpus/safetensors/* "$out/seeds/safetensors/"
cp tests/corpus/hf_config/* "$out/seeds/hf_config/"
cp tests/data/hf-configs/*.json "$out/seeds/hf_config/"
python3 tests/fuzz/make_seeds.py "$out/seeds"

for target in gguf safetensors hf_config; do
  dict=()
  [ -f "tests/fuzz/${target}.dict" ] && dict=(-dict="tests/fuzz/${target}.dict")
  mkdir -p "$out/corpus_${target}" "tests/fuzz/corpus/${target}"
  "$out/fuzz_${target}" "$out/corpus_${target}" "tests/fuzz/corpus/${target}" "$out/seeds/${target}" -runs="$runs" -max_len=65536 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$out/" "${dict[@]}" 2>"$out/fuzz_${target}.log" || {
      tail -40 "$out/fuzz_${target}.log"; echo "fuzz_${target}: FAILED"; exit 1; }
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/fuzz_${target}.log" | grep -o '[0-9]*$')
  echo "fuzz_${target}: ${execs} executions, no crash or sanitizer report"
  if [ "${LLMROOF_FUZZ_SAVE:-0}" = 1 ]; then
    "$out/fuzz_${target}" -merge=1 "tests/fuzz/corpus/${target}" "$out/corpus_${target}" -max_len=65536 \
      2>"$out/merge_${target}.log"
    echo "fuzz_${target}: tests/fuzz/corpus/${target} holds $(ls "tests/fuzz/corpus/${target}" | wc -l) inputs"
  fi
done
