#!/usr/bin/env python3
"""The layering check: every #include of the library goes down the layers.

The layers, lowest first (docs/architecture.md draws the same list):

    detail       include/llmroof/detail/: checks, enum names, bisection; version.hpp
    units        units, numeric formats, the metrics bands are on
    model        the architecture, its KV cache, MoE routing, precision, model files
    hardware     devices and links
    step         op counts, the roofline, phases
    engine       the engine table, efficiency profiles, the engine's memory plan
    layout       parallel splits and collectives, offload, the speculative setup
    deployment   include/llmroof/deployment.hpp: the configured whole
    serving      workload, load model, capacity search, plan, P/D, energy, ...
    search       recommend, compare
    calibration  measured rows, fits, validation
    top          include/llmroof/llmroof.hpp, the one include a user needs
    front        src/report, src/cli, python/bindings: they read the library

A file's layer is its folder (include/llmroof/LAYER/..., src/LAYER/...;
LAYER/detail/ is LAYER's own). A file may include its own layer and the
layers below; an include of a layer above is a violation. Headers never
include the library's sources (src/...).

    python3 scripts/check_layers.py              # the repository: exit 1 on a violation
    python3 scripts/check_layers.py --self-test  # plants an upward include, expects it caught
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

LAYERS = ["detail", "units", "model", "hardware", "step", "engine", "layout", "deployment", "serving", "search",
          "calibration", "jobs", "top", "front"]
RANK = {name: i for i, name in enumerate(LAYERS)}
TOP_FILES = {"deployment.hpp": "deployment", "llmroof.hpp": "top", "version.hpp": "detail"}
FRONT = ("src/report/", "src/cli/", "python/bindings/")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]', re.M)


def header_layer(rel: str) -> str | None:
    """Layer of a header by its path under include/llmroof/ ("serving/plan.hpp")."""
    parts = rel.split("/")
    if len(parts) == 1:
        return TOP_FILES.get(parts[0])
    return parts[0] if parts[0] in RANK else None


def file_layer(root: Path, f: Path) -> str | None:
    rel = f.relative_to(root).as_posix()
    if rel.startswith("include/llmroof/"):
        return header_layer(rel[len("include/llmroof/"):])
    if rel.startswith(FRONT):
        return "front"
    if rel.startswith("src/"):
        first = rel.split("/")[1]
        return first if first in RANK else None
    return None


def violations(root: Path) -> list[str]:
    out: list[str] = []
    files = [p for d in ("include/llmroof", "src", "python/bindings") if (root / d).is_dir()
             for p in sorted((root / d).rglob("*")) if p.suffix in (".hpp", ".cpp", ".h", ".inc")]
    for f in files:
        rel = f.relative_to(root).as_posix()
        mine = file_layer(root, f)
        if mine is None:
            out.append(f"{rel}: in no layer (folders: {', '.join(LAYERS)})")
            continue
        for inc in INCLUDE.findall(f.read_text(errors="replace")):
            if inc.startswith("llmroof/"):
                theirs = header_layer(inc[len("llmroof/"):])
                if theirs is None:
                    out.append(f"{rel}: includes {inc}, in no layer")
                elif RANK[theirs] > RANK[mine]:
                    out.append(f"{rel} ({mine}) includes {inc} ({theirs}), a layer above it")
            elif rel.startswith("include/") and (root / "src" / inc).is_file():
                out.append(f"{rel}: a header includes the library's source {inc}")
            elif (root / "src" / inc).is_file() and not (f.parent / inc).is_file():
                theirs = file_layer(root, root / "src" / inc)
                if theirs is not None and RANK[theirs] > RANK[mine]:
                    out.append(f"{rel} ({mine}) includes src/{inc} ({theirs}), a layer above it")
    return out


def self_test() -> int:
    """A tree with one upward include and one downward: exactly the first is reported."""
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / "include/llmroof/units").mkdir(parents=True)
        (root / "include/llmroof/serving").mkdir(parents=True)
        (root / "include/llmroof/units/units.hpp").write_text("#pragma once\n")
        (root / "include/llmroof/serving/plan.hpp").write_text('#include "llmroof/units/units.hpp"\n')
        (root / "include/llmroof/units/formats.hpp").write_text('#include "llmroof/serving/plan.hpp"\n')
        found = violations(root)
        want = ["include/llmroof/units/formats.hpp (units) includes llmroof/serving/plan.hpp (serving), "
                "a layer above it"]
        if found != want:
            print(f"self-test: expected {want}, got {found}", file=sys.stderr)
            return 1
    print("self-test: the planted upward include is caught, the downward one passes")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    ap.add_argument("--self-test", action="store_true", help="check the check on a planted upward include")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    found = violations(Path(a.root))
    for v in found:
        print(v, file=sys.stderr)
    if found:
        return 1
    print("layers: every include goes down (" + " < ".join(LAYERS) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
