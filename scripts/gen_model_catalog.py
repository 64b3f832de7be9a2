#!/usr/bin/env python3
"""Generate src/catalog_hf_models.inc from the HuggingFace config.json files
in tests/data/hf-configs (provenance in SOURCES.md there).

Each model family with a config becomes a catalog entry that the library
parses from the embedded file at start-up (src/models.cpp), so the entry is
the file. `FILES` names each file's catalog id; files that repeat a family
(Instruct, FP8 and NVFP4 re-packs, the Distill copy of Qwen2.5-32B) only add
their name as an alias. Ids the hand-written catalog already has keep the
hand-written entry (with its published parameter count); a test checks that
it equals its file. The JSON is embedded minified (same keys, order and
values). Run with --check to fail when the committed file is stale (the test
suite does).
"""
import json
import pathlib
import sys

from generated import cxx, write_or_check

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "tests" / "data" / "hf-configs"
OUT = ROOT / "src" / "catalog_hf_models.inc"

# file stem -> (catalog id, display name, other names, note). A file whose id
# another file already gave adds its names as aliases; None marks configs the
# reader refuses (tests/cpp/test_readers.cpp lists them); a string says why a
# file that parses is not a catalog entry.
FILES = {
    "01-ai__Yi-34B": ("yi-34b", "Yi-34B", ["Yi-1.5-34B"], "Yi-1.5-34B keeps the shape (model card)"),
    "CohereForAI__c4ai-command-r-v01": ("command-r", "Command-R", ["c4ai-command-r-v01", "Command-R-v01"], ""),
    "MiniMaxAI__MiniMax-M1-80k": ("minimax-m1", "MiniMax-M1", ["MiniMax-M1-80k", "MiniMax-M1-40k"], ""),
    "Qwen__Qwen2.5-1.5B": ("qwen2.5-1.5b", "Qwen2.5-1.5B", [], ""),
    "Qwen__Qwen2.5-1.5B-Instruct": ("qwen2.5-1.5b", None, ["Qwen2.5-1.5B-Instruct"], ""),
    "Qwen__Qwen2.5-3B-Instruct": ("qwen2.5-3b", "Qwen2.5-3B", ["Qwen2.5-3B-Instruct"], "Instruct config (the base model shares it)"),
    "Qwen__Qwen2.5-7B": ("qwen2.5-7b", None, [], ""),
    "Qwen__Qwen2.5-7B-Instruct": ("qwen2.5-7b", None, ["Qwen2.5-7B-Instruct"], ""),
    "Qwen__Qwen2.5-32B": ("qwen2.5-32b", None, [], ""),
    "deepseek-ai__DeepSeek-R1-Distill-Qwen-32B": ("qwen2.5-32b", None, ["DeepSeek-R1-Distill-Qwen-32B"], ""),
    "Qwen__Qwen2.5-72B": ("qwen2.5-72b", None, [], ""),
    "Qwen__Qwen3-0.6B": ("qwen3-0.6b", "Qwen3-0.6B", [], ""),
    "Qwen__Qwen3-1.7B": ("qwen3-1.7b", "Qwen3-1.7B", [], ""),
    "Qwen__Qwen3-8B": ("qwen3-8b", None, [], ""),
    "Qwen__Qwen3-14B": ("qwen3-14b", None, [], ""),
    "Qwen__Qwen3-32B": ("qwen3-32b", None, [], ""),
    "Qwen__Qwen3-32B-FP8": ("qwen3-32b", None, ["Qwen3-32B-FP8"], ""),
    "Qwen__Qwen3-30B-A3B": ("qwen3-30b-a3b", None, [], ""),
    "Qwen__Qwen3-30B-A3B-FP8": ("qwen3-30b-a3b", None, ["Qwen3-30B-A3B-FP8"], ""),
    "Qwen__Qwen3-30B-A3B-Instruct-2507": ("qwen3-30b-a3b", None, ["Qwen3-30B-A3B-Instruct-2507"], ""),
    "Qwen__Qwen3-235B-A22B": ("qwen3-235b-a22b", None, [], ""),
    "Qwen__Qwen3-235B-A22B-FP8": ("qwen3-235b-a22b", None, ["Qwen3-235B-A22B-FP8"], ""),
    "Qwen__Qwen3-Coder-480B-A35B-Instruct": ("qwen3-coder-480b-a35b", None, [], ""),
    "Qwen__Qwen3-Next-80B-A3B-Thinking": ("qwen3-next-80b-a3b", None, ["Qwen3-Next-80B-A3B-Thinking", "Qwen3-Next-80B-A3B-Instruct"], ""),
    "Qwen__Qwen3-VL-32B-Instruct": ("qwen3-vl-32b", "Qwen3-VL-32B", ["Qwen3-VL-32B-Instruct", "Qwen3-VL-32B-Thinking"], "text_config decoded; the vision tower is counted apart"),
    "meta-llama__Llama-4-Scout-17B-16E-Instruct": ("llama-4-scout-17b-16e", "Llama-4-Scout-17B-16E", ["Llama-4-Scout", "Llama-4-Scout-17B-16E-Instruct"], ""),
    "RedHatAI__Llama-4-Scout-17B-16E-Instruct-FP8-dynamic": ("llama-4-scout-17b-16e", None, ["Llama-4-Scout-17B-16E-Instruct-FP8-dynamic"], ""),
    "codellama__CodeLlama-34b-Instruct-hf": ("codellama-34b", "CodeLlama-34B", ["CodeLlama-34b-Instruct-hf", "CodeLlama-34b-hf"], ""),
    "deepseek-ai__DeepSeek-R1": ("deepseek-r1", None, ["DeepSeek-R1-0528"], ""),
    "deepseek-ai__DeepSeek-V2-Lite": ("deepseek-v2-lite", "DeepSeek-V2-Lite", ["DeepSeek-V2-Lite-Chat", "DeepSeek-Coder-V2-Lite"], ""),
    "deepseek-ai__DeepSeek-V3": ("deepseek-v3", None, ["DeepSeek-V3-0324"], ""),
    "deepseek-ai__DeepSeek-V3.1": ("deepseek-v3.1", "DeepSeek-V3.1", ["DeepSeek-V3.1-Terminus"], ""),
    "deepseek-ai__DeepSeek-V3.2": ("deepseek-v3.2", "DeepSeek-V3.2", ["DeepSeek-V3.2-Exp"], ""),
    "google__gemma-3-1b-it": ("gemma-3-1b", "gemma-3-1b", ["gemma-3-1b-it"], ""),
    "google__gemma-4-26B-A4B": None,
    "nvidia__Gemma-4-31B-IT-NVFP4": ("gemma-4-31b", "Gemma-4-31B", ["Gemma-4-31B-IT", "Gemma-4-31B-IT-NVFP4"], "NVFP4 re-pack stands in for google/gemma-4-31B-it"),
    "ibm-granite__granite-3.3-8b-instruct": ("granite-3.3-8b", "granite-3.3-8b", ["granite-3.3-8b-instruct", "granite-3.3-8b-base"], ""),
    "meta-llama__Llama-2-7b-hf": ("llama-2-7b", None, [], ""),
    "meta-llama__Llama-2-13b-hf": ("llama-2-13b", None, [], ""),
    "meta-llama__Llama-2-70b-hf": ("llama-2-70b", None, [], ""),
    "meta-llama__Llama-3.1-8B": ("llama-3.1-8b", None, [], ""),
    "meta-llama__Llama-3.1-8B-Instruct": ("llama-3.1-8b", None, ["Llama-3.1-8B-Instruct"], ""),
    "meta-llama__Llama-3.1-70B": ("llama-3.1-70b", None, [], ""),
    "meta-llama__Llama-3.1-70B-Instruct": ("llama-3.1-70b", None, ["Llama-3.1-70B-Instruct"], ""),
    "meta-llama__Llama-3.1-405B": ("llama-3.1-405b", None, [], ""),
    "microsoft__Phi-mini-MoE-instruct": ("phi-mini-moe", "Phi-mini-MoE", ["Phi-mini-MoE-instruct"], ""),
    "mistralai__Devstral-Small-2-24B-Instruct-2512.AWQ-4bit.patched": ("devstral-small-2-24b", None, ["Devstral-Small-2-24B-Instruct-2512"], ""),
    "mistralai__Mistral-7B-v0.1": ("mistral-7b-v0.1", "Mistral-7B-v0.1", [], ""),
    "mistralai__Mistral-Nemo-Instruct-2407": ("mistral-nemo-12b", "Mistral-Nemo-12B", ["Mistral-Nemo", "Mistral-Nemo-Instruct-2407", "Mistral-Nemo-Base-2407"], ""),
    "mistralai__Mixtral-8x7B-v0.1": ("mixtral-8x7b", None, ["Mixtral-8x7B-Instruct-v0.1"], ""),
    "mistralai__Mixtral-8x22B-v0.1": ("mixtral-8x22b", "Mixtral-8x22B", ["Mixtral-8x22B-v0.1"], ""),
    # The Instruct model has a larger vocabulary (32768 against 32000): its own entry.
    "mistralai__Mixtral-8x22B-Instruct-v0.1": ("mixtral-8x22b-instruct", "Mixtral-8x22B-Instruct-v0.1", [], "vocab 32768 (the base model has 32000)"),
    "moonshotai__Kimi-K2-Instruct": ("kimi-k2", None, ["Kimi-K2", "Kimi-K2-Base", "Kimi-K2-Thinking"], ""),
    "moonshotai__Kimi-K2.5": ("kimi-k2.5", "Kimi-K2.5", [], "text_config decoded; the vision tower is counted apart"),
    "nvidia__Kimi-K2.6-NVFP4": ("kimi-k2.6", "Kimi-K2.6", ["Kimi-K2.6-NVFP4"], "NVFP4 re-pack stands in for moonshotai/Kimi-K2.6"),
    "nvidia__Llama-3_3-Nemotron-Super-49B-v1": None,
    "nvidia__MiniMax-M2.5-NVFP4": ("minimax-m2", None, ["MiniMax-M2.5", "MiniMax-M2.1", "MiniMax-M2.5-NVFP4"], ""),
    # Parses, but the reader does not model the Mamba-2 layers of this hybrid
    # (it counts 102B against the card's 31.6B): not a catalog entry.
    "nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16": "not modelled",
    "nvidia__NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4": None,
    "nvidia__Nemotron-H-56B-Base-8K": None,
    "openai__gpt-oss-20b": ("gpt-oss-20b", None, [], ""),
    "openai__gpt-oss-120b": ("gpt-oss-120b", None, [], ""),
    "tencent__Hunyuan-A13B-Instruct": None,
    "zai-org__GLM-4.5-Air": ("glm-4.5-air", None, [], ""),
    "zai-org__GLM-4.5": ("glm-4.5", "GLM-4.5", ["GLM-4.6"], "GLM-4.6 keeps the GLM-4.5 shape (model card)"),
    "zai-org__GLM-5": ("glm-5", "GLM-5", [], ""),
    "zai-org__GLM-5-FP8": ("glm-5", None, ["GLM-5-FP8"], ""),
    "zai-org__GLM-5.1": ("glm-5.1", "GLM-5.1", [], ""),
}


def main():
    files = sorted(p.stem for p in CONFIGS.glob("*.json"))
    missing = [f for f in files if f not in FILES]
    stale = [f for f in FILES if f not in files]
    if missing or stale:
        sys.exit(f"FILES and tests/data/hf-configs differ: missing {missing}, stale {stale}")
    rows = {}  # id -> [file, name, aliases, note]
    for stem, entry in FILES.items():
        if entry is None or isinstance(entry, str):
            continue
        mid, name, aliases, note = entry
        if mid not in rows:
            rows[mid] = [stem, name or "", list(aliases), note]
        else:
            rows[mid][2] += aliases
    lines = ["// Generated by scripts/gen_model_catalog.py from tests/data/hf-configs. Do not edit.",
             "// Columns: id, name (empty: the hand-written entry's), aliases ('|'-separated), file, note,",
             "// config.json (minified: same keys, order and values)."]
    for mid, (stem, name, aliases, note) in rows.items():
        text = (CONFIGS / f"{stem}.json").read_text(encoding="utf-8")
        mini = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=True)
        if ')json"' in mini:
            sys.exit(f"{stem}: cannot embed as a raw string")
        lines.append("{" + ", ".join([cxx(mid), cxx(name), cxx("|".join(aliases)), cxx(stem + ".json"), cxx(note),
                                      'R"json(' + mini + ')json"']) + "},")
    write_or_check(OUT, "\n".join(lines) + "\n", "gen_model_catalog.py", "model catalog",
                   f"wrote {len(rows)} models from {len(files)} files to {OUT}")


if __name__ == "__main__":
    main()
