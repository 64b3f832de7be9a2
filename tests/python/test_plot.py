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
