from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import llmroof  # noqa: E402
from llmroof import plot  # noqa: E402


def test_every_plot_draws() -> None:
    p = llmroof.plan(model="devstral-small-2-24b", device="rtx-pro-6000-blackwell", weights="fp8",
                     users=4, context=131072)
    dev = llmroof.Device.get("rtx-pro-6000-blackwell")
    d = llmroof.decode(model="devstral-small-2-24b", device=dev, weights="fp8", context=8192)
    f = llmroof.prefill(model="devstral-small-2-24b", device=dev, weights="fp8", prompt=2048)
    ax = plot.roofline(dev, [d, f])
    assert len(ax.collections) >= len(d.ops)
    labels = ax.get_legend_handles_labels()[1]
    # FP8 GEMMs are drawn under the FP8 roof; decode and prefill told apart.
    assert "fp8 roof 1000 TFLOP/s" in labels and "bf16 roof 500 TFLOP/s" in labels
    assert "decode (1 tokens)" in labels and "prefill (2048 tokens)" in labels
    # Does it fit: 4 users at 128k do not; the curve stops at the longest context that fits.
    ax = plot.decode_curve(p)
    labels = ax.get_legend_handles_labels()[1]
    assert "4 users do not fit (each would get)" in labels
    assert "longest context that fits: 93,952" in labels
    # Issue 55 item 7: where they do not fit, the users' own speed (each of 4 at 128k), not one user's; from 0.
    grey = next(line for line in ax.lines if line.get_label() == "4 users do not fit (each would get)")
    last = p.decode_curve[-1]
    assert grey.get_ydata()[-1] == last["per_user_tokens_per_s_estimate"] < last["single_user_tokens_per_s_estimate"]
    assert ax.get_ylim()[0] == 0
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "128k"
    sweep = llmroof.sweep_decode(model="devstral-small-2-24b", device=dev, weights="fp8",
                                 batch=[1, 2, 4, 8], context=4096)
    ax = plot.users_curve(sweep)
    assert len(ax.lines) == 1
    # The users curve says its context and keeps its legend below the axes, off the data.
    assert ax.get_title() == "Per-user and total tokens/s at 4k tokens"
    assert ax.get_legend().get_bbox_to_anchor().y0 < ax.get_window_extent().y0
    # llmroof.plot is reachable after a plain `import llmroof`.
    assert llmroof.plot is plot
    assert len(plot.memory_bar(p).patches) == 5
    import matplotlib.pyplot as plt

    plt.close("all")


def test_memory_bar_draws_the_metal_working_set(tmp_path: object) -> None:
    import matplotlib.pyplot as plt

    # gpt-oss-120b (MXFP4, ~61 GiB) on a 96 GiB M2 Max: Metal may wire 72 GiB;
    # the RAM beyond it is drawn apart, hatched, behind a dotted line.
    p = llmroof.plan(model="gpt-oss-120b", device="m2-max-38c", engine="llama.cpp", context=32768)
    assert p.memory.device_memory_bytes == 96 * 2**30
    assert p.memory.capacity_bytes == 72 * 2**30
    ax = plot.memory_bar(p)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "Metal working set 72.0 GiB" in labels
    assert "beyond the working set 24.0 GiB" in labels
    ax.figure.savefig(str(tmp_path) + "/memory_bar_apple.png")
    # A GPU's bar has no such segment.
    assert not any("working set" in t.get_text()
                   for t in plot.memory_bar(llmroof.plan(model="qwen3-8b", device="h100-sxm")).get_legend().get_texts())
    plt.close("all")


def test_users_curve_marks_what_does_not_fit(tmp_path: object) -> None:
    import matplotlib.pyplot as plt

    # Qwen3-8B BF16 at 32k on a 24 GB card: one sequence fits, two do not.
    f = llmroof.sweep_decode(model="qwen3-8b", device="rtx-4090", batch=[1, 2, 4, 8, 256], context=32768)
    ax = plot.users_curve(f)
    labels = ax.get_legend().get_texts()
    assert any(t.get_text().endswith(": does not fit") for t in labels)
    assert any(t.get_text() == "most users that fit: 1" for t in labels)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[ticks.index("1"):ticks.index("1") + 4] == ["1", "2", "4", "8"] and "256" in ticks
    ax.figure.savefig(str(tmp_path) + "/users_curve.png")
    # The engine's max_num_seqs (vLLM V0: 256 on every GPU) marked where the sweep reaches it.
    g = llmroof.sweep_decode(model="qwen3-8b", device="h100-sxm", batch=[1, 16, 256, 1024], context=4096)
    sg = llmroof.plan(model="qwen3-8b", device="h100-sxm", engine="vllm@0.6").to_dict()["engine_settings"]
    ax2 = plot.users_curve(g, max_num_seqs=sg["max_sequences"])
    assert any(t.get_text() == "max_num_seqs 256: more users wait for a slot" for t in ax2.get_legend().get_texts())
    ax2.figure.savefig(str(tmp_path) + "/users_curve_slots.png")
    plt.close("all")


def test_plot_without_matplotlib_says_how_to_install(monkeypatch: object) -> None:
    import sys

    import pytest

    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # type: ignore[attr-defined]
    with pytest.raises(ImportError, match=r"pip install 'llmroof\[plot\]'"):
        plot.memory_bar(llmroof.plan(model="qwen3-8b", device="h100-sxm"))


def test_front_draws_the_search(tmp_path: object) -> None:
    import matplotlib.pyplot as plt
    from pathlib import Path

    rec = llmroof.recommend(models="devstral-small-2-24b", pool="rtx-pro-6000-blackwell:2", users=4, context="128k",
                            prompt="8k", output=1024, min_tokens_per_s=20, ttft_target_s=10)
    ax = plot.front(rec)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "recommended" in labels and "target 20 tokens/s per user" in labels
    assert any(label.startswith("on the front (") for label in labels) and any(label.startswith("meets") for label in labels)
    # Device kinds have a marker each, in the legend; the corners of the front's step say what they are.
    assert "rtx-pro-6000-blackwell" in labels
    assert any(t.get_text().startswith("1 x rtx-pro-6000-blackwell") for t in ax.texts)
    assert ax.get_ylim()[0] == 0
    assert ax.get_xlabel() == "devices"
    assert ax.get_title() == "devstral-small-2-24b\n4 users at 131,072 tokens, 62 candidates"
    out = Path(str(tmp_path)) / "front.png"
    ax.figure.savefig(out)
    assert out.stat().st_size > 10_000
    plt.close("all")
