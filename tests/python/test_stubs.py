"""The _core stubs must list exactly what the compiled module exports."""

from __future__ import annotations

import ast
from pathlib import Path

import llmroof
from llmroof import _core


def test_stubs_match_the_compiled_module() -> None:
    stub = Path(llmroof.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    # A class named _X is a type of the stubs alone (what a function returns).
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}
    declared |= {t.target.id for t in tree.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}
    exported = {n for n in dir(_core) if not n.startswith("_")} | {"__version__"}
    assert declared == exported


def test_stub_signatures_match_argument_names() -> None:
    stub = Path(llmroof.__file__).with_name("_core.pyi")
    tree = ast.parse(stub.read_text())
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        doc = getattr(_core, fn.name).__doc__ or ""
        names = [a.arg for a in fn.args.args]
        signature = doc.splitlines()[0] if doc else ""
        for name in names:
            assert f"{name}:" in signature, (fn.name, name, signature)


def test_public_api_is_declared() -> None:
    for name in llmroof.__all__:
        assert hasattr(llmroof, name), name
