"""Plots (matplotlib, imported only when a plot is drawn).

Each function takes the result it draws and an optional ``ax`` and returns
the Axes, so plots compose in notebooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._api import Device, Phase, Plan


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    # Constrained layout keeps legends placed beside the axes inside the
    # figure, so a plain savefig shows them whole.
    _, new = plt.subplots(figsize=(7, 4.5), layout="constrained")
    return new


def roofline(device: Device, phases: Sequence[Phase], *, math: str = "bf16", ax: Axes | None = None) -> Axes:
    """The classic roofline: attainable FLOP/s against arithmetic intensity
    (FLOP/B), with every op of ``phases`` placed at its intensity and its
    achieved FLOP/s (FLOP / estimated time)."""
    import numpy as np

    ax = _axes(ax)
    peak = float(device.fields[f"{math}_flops_per_s"] or device.fields["bf16_flops_per_s"])
    bw = device.bandwidth_bytes_per_s
    x = np.logspace(-2, 5, 200)
    ax.loglog(x, np.minimum(peak, bw * x), color="black", lw=2, label=f"{device.id} roof ({math})")
    ax.axvline(peak / bw, color="grey", ls=":", lw=1)
    ax.annotate(f"ridge {peak / bw:.0f} FLOP/B", (peak / bw, peak), textcoords="offset points",
                xytext=(5, -15), fontsize=8)
    for phase in phases:
        for op in phase.ops:
            if op["flop"] <= 0 or op["estimate_s"] <= 0:
                continue
            ax.scatter(op["intensity_flop_per_byte"], op["flop"] / op["estimate_s"], s=25)
            ax.annotate(str(op["name"]), (op["intensity_flop_per_byte"], op["flop"] / op["estimate_s"]),
                        fontsize=7, textcoords="offset points", xytext=(3, 3))
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("FLOP/s")
    ax.set_title("Roofline")
    ax.legend(fontsize=8)
    return ax


def decode_curve(plan: Plan, *, ax: Axes | None = None) -> Axes:
    """Decode tokens/s of one user against context: bound and estimate."""
    ax = _axes(ax)
    curve = plan.decode_curve
    ctx = [p["context"] for p in curve]
    ax.plot(ctx, [p["single_user_tokens_per_s_bound"] for p in curve], "--", label="bound")
    ax.plot(ctx, [p["single_user_tokens_per_s_estimate"] for p in curve], "-o", label="estimate")
    users = plan.memory.users
    if users > 1:
        ax.plot(ctx, [p["per_user_tokens_per_s_estimate"] for p in curve], "-s",
                label=f"per user, {users:g} users")
    ax.set_xlabel("context (tokens)")
    ax.set_ylabel("tokens/s")
    ax.set_title("Decode speed against context")
    ax.legend()
    return ax


def users_curve(frame: Any, *, ax: Axes | None = None) -> Axes:
    """Per-user and total tokens/s against users, from a ``sweep_decode`` frame
    swept over ``batch`` (one line per model/device/format combination)."""
    ax = _axes(ax)
    twin = ax.twinx()
    for key, g in frame.groupby(["model", "device", "weights", "kv"], sort=False, observed=True):
        g = g.groupby("batch", as_index=False).mean(numeric_only=True)
        label = "/".join(str(k) for k in key)
        ax.plot(g["batch"], g["tokens_per_s_per_user_estimate"], "-o", label=f"{label} per user")
        twin.plot(g["batch"], g["tokens_per_s_total_estimate"], "--", label=f"{label} total")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("users (sequences decoding together)")
    ax.set_ylabel("tokens/s per user (solid)")
    twin.set_ylabel("tokens/s total (dashed)")
    ax.set_title("Per-user and total tokens/s")
    ax.legend(fontsize=7, loc="upper center")
    return ax


def memory_bar(plan: Plan, *, ax: Axes | None = None) -> Axes:
    """A bar of device memory: weights, KV needed, reserve + activations, free."""
    ax = _axes(ax)
    m = plan.memory
    gib = float(2**30)
    parts = [
        ("weights", m.weight_bytes),
        ("KV cache", min(m.kv_bytes_needed, max(m.kv_budget_bytes, 0.0))),
        ("reserve + activations", m.reserve_bytes + m.activation_bytes),
        ("unusable (utilisation)", m.capacity_bytes - m.usable_bytes),
        ("free", max(m.kv_budget_bytes - m.kv_bytes_needed, 0.0)),
        # Apple: RAM beyond the Metal working set, which no engine may wire.
        ("beyond the working set", m.device_memory_bytes - m.capacity_bytes),
    ]
    left = 0.0
    for name, b in parts:
        if name == "beyond the working set":
            # Only a working-set limit (Apple: 2/3-3/4 of RAM); NVIDIA's ~1% driver share is not drawn.
            if b <= 0.1 * m.device_memory_bytes:
                continue
            ax.axvline(left, color="black", ls=":", label=f"Metal working set {left:.1f} GiB")
            ax.barh(0, b / gib, left=left, color="lightgrey", hatch="//", label=f"{name} {b / gib:.1f} GiB")
            continue
        ax.barh(0, b / gib, left=left, label=f"{name} {b / gib:.1f} GiB")
        left += b / gib
    if not m.fits:
        ax.axvline(left + m.shortfall_bytes / gib, color="red", ls="--",
                   label=f"needed: short {m.shortfall_bytes / gib:.1f} GiB")
    ax.set_yticks([])
    ax.set_xlabel("GiB")
    users = f"{m.users:g} user" + ("" if m.users == 1 else "s")
    ax.set_title(f"{plan.model} on {plan.devices} x {plan.device} ({plan.weights}, KV {plan.kv}): "
                 f"{users} x {m.context:,.0f} tokens", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
    return ax
