"""The _core stubs (one .pyi per submodule) must list exactly what the
compiled module exports, and the submodules import by name (pickle needs it)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pickle
from pathlib import Path
from types import ModuleType

import llmroof
from llmroof import _core

STUBS = Path(llmroof.__file__).with_name("_core")


def _declared(tree: ast.Module) -> set[str]:
    # A class named _X is a type of the stubs alone (what a function returns).
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}
    return names | {t.target.id for t in tree.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}


def _submodules() -> dict[str, ModuleType]:
    return {n: m for n in dir(_core) if isinstance(m := getattr(_core, n), ModuleType)}


def test_stubs_match_the_compiled_module() -> None:
    top = ast.parse((STUBS / "__init__.pyi").read_text())
    stubbed = {a.asname for n in top.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert stubbed == set(_submodules())
    assert _declared(top) == {n for n in dir(_core) if not n.startswith("_")} - stubbed | {"__version__"}
    for name, module in _submodules().items():
        declared = _declared(ast.parse((STUBS / f"{name}.pyi").read_text()))
        assert declared == {n for n in dir(module) if not n.startswith("_")}, name


def test_stub_signatures_match_argument_names() -> None:
    for name, module in _submodules().items():
        for fn in (n for n in ast.parse((STUBS / f"{name}.pyi").read_text()).body if isinstance(n, ast.FunctionDef)):
            doc = getattr(module, fn.name).__doc__ or ""
            signature = doc.splitlines()[0] if doc else ""
            for arg in (a.arg for a in fn.args.args):
                assert f"{arg}:" in signature, (name, fn.name, arg, signature)


def test_submodules_import_by_name_and_their_classes_pickle() -> None:
    for name, module in _submodules().items():
        assert importlib.import_module(f"llmroof._core.{name}") is module
    est = llmroof.Estimator(model="llama-3.1-8b", device="h100-sxm")
    timing = est.decode(batch=4, context=1024)  # the compiled timing itself
    memory = est.memory(users=4, context=8192)  # a compiled value
    assert type(timing).__module__ == "llmroof._core.reports"
    assert type(memory).__module__ == "llmroof._core.memory_plan"
    assert pickle.loads(pickle.dumps(memory)).to_dict() == memory.to_dict()
    deployment = pickle.loads(pickle.dumps(est._obj))
    assert type(deployment).__module__ == "llmroof._core.deployment"
    assert deployment.decode(4, 1024).estimate_s == timing.estimate_s


def test_report_stubs_are_generated_from_the_compiled_tables() -> None:
    # _core/reports.pyi restates no key by hand: scripts/gen_report_stubs.py
    # writes it from the classes' key tables (src/report/json.cpp).
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gen_report_stubs", root / "scripts" / "gen_report_stubs.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (STUBS / "reports.pyi").read_text() == gen.stubs(), "stale: run python scripts/gen_report_stubs.py"


def test_public_api_is_declared() -> None:
    for name in llmroof.__all__:
        assert hasattr(llmroof, name), name
