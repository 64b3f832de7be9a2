from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def cli() -> str:
    """The llmroof command installed beside the package (pip install .)."""
    found = shutil.which("llmroof", path=str(Path(sys.executable).parent)) or shutil.which("llmroof")
    if found is None:
        pytest.fail("the llmroof command is not installed beside this Python")
    return found


SEED = dict(
    model="devstral-small-2-24b",
    device="rtx-pro-6000-blackwell",
    weights="fp8",
    kv="bf16",
    users=4,
    context=131072,
)
