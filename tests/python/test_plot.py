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
    assert len(plot.decode_curve(p).lines) == 3
    sweep = llmroof.sweep_decode(model="devstral-small-2-24b", device=dev, weights="fp8",
                                 batch=[1, 2, 4, 8], context=4096)
    assert len(plot.users_curve(sweep).lines) == 1
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
