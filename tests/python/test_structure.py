"""The package's modules import one way (issue 59): no import circle among
python/llmroof's modules, type-checking imports included."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "llmroof"


def _imports(path: Path) -> set[str]:
    """The package's own modules a module imports (``from . import x``, ``from .x import y``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                out.add(node.module.split(".")[0])
            else:
                out.update(a.name for a in node.names)
    return out


def _circle(graph: dict[str, set[str]]) -> list[str]:
    """An import circle of `graph` (module -> the modules it imports), or []."""
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> list[str]:
        if m in path:
            return path[path.index(m):] + [m]
        if m in done:
            return []
        for n in sorted(graph.get(m, set())):
            found = visit(n, path + [m])
            if found:
                return found
        done.add(m)
        return []

    for m in sorted(graph):
        found = visit(m, [])
        if found:
            return found
    return []


def test_no_import_circle() -> None:
    graph = {p.stem: _imports(p) - {"_core"} for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert _circle(graph) == []
    # The layering the modules keep: the leaves import nothing of the package.
    assert graph["_checks"] == set() and graph["_fields"] == set()
    assert graph["_catalog"] == {"_checks", "_fields"}
    assert graph["_hints"] == set()
    assert graph["_resolve"] == {"_catalog", "_checks", "_fields"}
    assert graph["_signature"] == {"_resolve"}
    # The functions' modules build on those, never on each other.
    functions = {"_serving", "_phases", "_calibration", "_sweeps"}
    for m in functions:
        assert not graph[m] & functions, m


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from .b import x\n")
    (tmp_path / "b.py").write_text("if True:\n    from . import a\n")
    graph = {p.stem: _imports(p) for p in tmp_path.glob("*.py")}
    assert _circle(graph) == ["a", "b", "a"]
