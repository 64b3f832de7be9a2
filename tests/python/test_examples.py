"""The notebook and the Python examples run, so they never rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


PNGS: dict[str, int] = {}


def _executed(name: str) -> str:
    """Runs examples/notebooks/NAME and returns what its code cells printed;
    PNGS[name] counts the figures it rendered inline."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "examples" / "notebooks" / name, as_version=4)
    # The notebook's own kernel (issue 55 item 7: it carries a kernelspec).
    assert nb.metadata["kernelspec"]["name"] == "python3"
    NotebookClient(nb, timeout=300).execute()
    PNGS[name] = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
                     for o in c.get("outputs", []))
    return "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )


def test_notebook_executes() -> None:
    text = _executed("capacity_planning.ipynb")
    assert "163,840 B" in text
    assert "do NOT fit" in text
    # The plots mark what does not fit (issue 33): the decode curve's legend.
    assert "4 users do not fit (each would get)" in text and "longest context that fits: 93,952" in text
    # The users curve marks the slots and the most users that fit (llama.cpp -np 4 at 32k).
    assert "max_num_seqs 4: more users wait for a slot" in text and "most users that fit: 16" in text
    # Every plot renders inline as a PNG (no Agg backend leaving the notebook without pictures):
    # memory_bar, decode_curve, roofline and two users_curve.
    assert PNGS["capacity_planning.ipynb"] == 5


def test_python_example_runs() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "python" / "seed_scenario.py")],
                         capture_output=True, text=True, check=True).stdout
    assert "163,840 B" in out and "KV q4_0: 4 users at 128k fit: True" in out


def test_recommend_notebook_executes() -> None:
    text = _executed("recommend.ipynb")
    # The seed question: as published it does not fit; the fixes; a one-card answer that meets 20 t/s.
    assert "does not fit: 1 user of 131,072 tokens per instance at most" in text
    assert "KV cache in fp8-e4m3" in text and "2 devices (TP 2)" in text and "shorter context" in text
    assert "the cheapest that meets every target at its band's slow edge" in text
    # The datacenter question priced both kinds; the unmeetable one says what is closest.
    assert "cost_per_million" in text and "nothing meets the targets; closest:" in text
    assert PNGS["recommend.ipynb"] == 2  # the two fronts, inline


def test_readme_python_comments_are_what_the_calls_return() -> None:
    # Issue 55 item 8: the README's "# False, 24.3e9" is the call's answer
    # (it said 20.6e9 where the call returned 24.3e9), and no shipped text
    # cites a DESIGN.md the repository does not hold.
    import re

    import llmroof

    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    said = re.search(r"p\.memory\.fits, p\.memory\.shortfall_bytes\s+# (\w+), ([0-9.]+)e9", readme)
    assert said is not None
    p = llmroof.plan(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8", kv="bf16", users=4,
                     context=131072)
    assert str(p.memory.fits) == said.group(1) and round(p.memory.shortfall_bytes / 1e9, 1) == float(said.group(2))
    for shipped in [root / "README.md", *sorted((root / "examples").rglob("*.*"))]:
        assert "DESIGN.md" not in shipped.read_text(errors="ignore"), shipped
