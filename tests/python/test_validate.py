"""llmroof.validate: the shipped profiles (or cross-validated ones) scored on
a points file, the same numbers as `llmroof validate --json`."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

import llmroof

POINTS = Path(__file__).resolve().parents[2] / "data" / "measured" / "calibration.csv"


def test_shipped_profiles_scored_with_bands(cli: str) -> None:
    frame = llmroof.validate(POINTS)
    assert frame.attrs["refit"] is False and frame.attrs["chosen_scope"] == "shipped"
    # 4 of the 10 skipped rows are single-stream rows above the bandwidth bound;
    # TensorRT-LLM's 53 trtllm-bench rows (the runtime's own batch) are bursts.
    assert len(frame) == frame.attrs["points"] == 611
    assert frame.attrs["skipped"] == 621 - 611
    assert ((frame["low"] <= frame["predicted"]) & (frame["predicted"] <= frame["high"])).all()
    ape = (frame["predicted"] - frame["measured"]).abs() / frame["measured"]
    assert ape.to_numpy() == pytest.approx(frame["ape"].to_numpy())
    # Every metric the file holds is scored: TTFT, TPOT, throughput, end to end.
    assert {"ttft_ms", "tpot_ms", "decode_tps_total", "e2e_latency_s", "prefill_tps"} <= set(frame["metric"])
    # One answer: the command reports the same rows.
    out = subprocess.run([cli, "validate", str(POINTS), "--no-refit", "--json"], capture_output=True, text=True,
                         check=True)
    rows = {r["id"]: r for r in json.loads(out.stdout)["rows"]}
    for r in frame.itertuples():
        assert rows[r.id]["predicted"] == pytest.approx(r.predicted, rel=1e-12)
        assert rows[r.id]["low"] == pytest.approx(r.low, rel=1e-12)


def test_the_current_llama_cpp_scoreboard_uses_the_int8_path() -> None:
    frame = llmroof.validate(POINTS)
    # M0820: RTX 4090, Llama-2-7B Q4_0 pp512 = 14,771 t/s on a 2025-26 build.
    # On the 2024 dequantize path llmroof predicted 5,509 t/s (-63%); on the
    # INT8 roof 10,521 t/s (-29%).
    row = frame[frame["id"] == "M0820"].iloc[0]
    assert row["engine"] == "llama.cpp-cuda"
    assert row["ape"] < 0.3


def test_refit_is_leave_one_source_out_with_bands() -> None:
    frame = llmroof.validate(POINTS, refit=True)
    assert frame.attrs["refit"] is True
    assert frame.attrs["chosen_scope"] in {s["scope"] for s in frame.attrs["scopes"]}
    assert len(frame.attrs["scopes"]) == 4
    assert ((frame["low"] <= frame["predicted"]) & (frame["predicted"] <= frame["high"])).all()
    for m in frame.attrs["metrics"].values():
        assert 0 <= m["band_coverage"] <= 1
    assert all(math.isfinite(x) and x > 0 for x in frame["predicted"])


def test_bad_input() -> None:
    with pytest.raises(TypeError, match="refit must be a bool"):
        llmroof.validate(POINTS, refit=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no such file"):
        llmroof.validate("/nonexistent.csv")


def test_several_points_files_are_read_together_as_the_command_does(cli: str) -> None:
    # The shipped fit reads calibration.csv and the third release's
    # single-stream rows; llama.cpp's backends are classes of their own.
    single = POINTS.parent / "release3" / "single_stream.csv"
    frame = llmroof.validate([POINTS, single])
    one = llmroof.validate(POINTS)
    assert frame.attrs["points"] == len(frame) > len(one) == 611
    assert {"llama.cpp-hip", "llama.cpp-vulkan", "llama.cpp-sycl"} <= set(frame["engine"])
    out = subprocess.run([cli, "validate", str(POINTS), str(single), "--no-refit", "--json"], capture_output=True,
                         text=True, check=True)
    rows = {r["id"]: r for r in json.loads(out.stdout)["rows"]}
    assert set(rows) == set(frame["id"])
    for r in frame.itertuples():
        assert rows[r.id]["predicted"] == pytest.approx(r.predicted, rel=1e-12)
    with pytest.raises(ValueError, match="at least one points file"):
        llmroof.validate([])
    with pytest.raises(TypeError, match="a file or a list of files"):
        llmroof.validate(3)  # type: ignore[arg-type]
