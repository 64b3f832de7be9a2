"""Hostile inputs of issue 17 through the Python package: each raises
ValueError/TypeError with one line naming the field. Each case runs in its
own interpreter under a timeout and an address-space limit, so a crash or a
runaway allocation fails the case instead of killing pytest."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parents[1] / "hostile"
sys.path.insert(0, str(HOSTILE))

import cases  # noqa: E402
import make_hostile  # noqa: E402
import run_hostile  # noqa: E402


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile")
    make_hostile.make(out)
    return out


@pytest.mark.parametrize("name,src,exc,expect", cases.PYTHON, ids=[c[0] for c in cases.PYTHON])
def test_hostile_python(corpus: Path, name: str, src: str, exc: str, expect: str) -> None:
    r, took = run_hostile.run([sys.executable, "-c", run_hostile.PY_DRIVER, str(corpus)],
                              run_hostile.PYTHON_ADDRESS_LIMIT, stdin=json.dumps([src]))
    assert r is not None, f"{name}: no answer within {run_hostile.TIMEOUT_S} s"
    assert r.returncode == 0, f"{name}: the interpreter died (status {r.returncode}): {r.stderr[-400:]}"
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["raised"] == exc, out
    assert expect in out["message"] and "\n" not in out["message"], out
