"""The notebook and the Python examples run, so they never rot."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _executed(name: str) -> str:
    """Runs examples/notebooks/NAME and returns what its code cells printed."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "examples" / "notebooks" / name, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    return "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )


def test_notebook_executes() -> None:
    text = _executed("capacity_planning.ipynb")
    assert "163,840 B" in text
    assert "do NOT fit" in text
    # The plots mark what does not fit (issue 33): the decode curve's legend.
    assert "4 users do not fit" in text and "longest context that fits: 93,952" in text
    # The users curve marks the slots and the most users that fit (llama.cpp -np 4 at 32k).
    assert "max_num_seqs 4: more users wait for a slot" in text and "most users that fit: 16" in text


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
