"""Plots (matplotlib, imported only when a plot is drawn).

Each function takes the result it draws and an optional ``ax`` and returns
the Axes, so plots compose in notebooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence, cast

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._catalog import Device
    from ._core.reports import Phase, Plan, Recommendation


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("llmroof.plot needs matplotlib: pip install 'llmroof[plot]' "
                          "(or pip install matplotlib)") from e
    return plt


def _tokens_label(v: float, _: object = None) -> str:
    """8192 -> 8k, 131072 -> 128k, 1048576 -> 1m, 500 -> 500."""
    if v >= 1048576 and v % 1048576 == 0:
        return f"{v / 1048576:g}m"
    if v >= 1024 and v % 1024 == 0:
        return f"{v / 1024:g}k"
    return f"{v:,.0f}"


def _plain_ticks(axis: Any) -> None:
    """Log-2 axes labelled 1, 2, 4 ... 256, not 2^0 ... 2^8."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))


def _axes(ax: Axes | None) -> Axes:
    if ax is not None:
        return ax
    plt = _pyplot()

    # Constrained layout keeps legends placed beside the axes inside the
    # figure, so a plain savefig shows them whole.
    _, new = plt.subplots(figsize=(7, 4.5), layout="constrained")
    return cast("Axes", new)


def roofline(device: Device, phases: Sequence[Phase], *, math: str = "bf16", ax: Axes | None = None) -> Axes:
    """The classic roofline: attainable FLOP/s against arithmetic intensity
    (FLOP/B), with every op of ``phases`` placed at its intensity and its
    achieved FLOP/s (FLOP / estimated time). Each op is drawn against the roof
    of the math it ran on (an FP8 GEMM under the FP8 roof); phases differ by
    marker; labels that would overlap are stacked."""
    import numpy as np

    ax = _axes(ax)
    bw = device.bandwidth_bytes_per_s
    x = np.logspace(-2, 5, 200)

    def peak_of(m: str) -> float:
        return float(device.fields.get(f"{m}_flops_per_s") or device.fields["bf16_flops_per_s"])

    used = [math] + sorted({str(op["math"]) for ph in phases for op in ph.ops if op.get("math")} - {math})
    for i, m in enumerate(used):
        peak = peak_of(m)
        ax.loglog(x, np.minimum(peak, bw * x), color="black", lw=2 if i == 0 else 1, ls="-" if i == 0 else "--",
                  label=f"{m} roof {peak / 1e12:.0f} TFLOP/s")
        ax.axvline(peak / bw, color="grey", ls=":", lw=1)
        # Along the ridge line, at the bottom: clear of the ops above.
        ax.annotate(f"ridge ({m}) {peak / bw:.0f} FLOP/B", (peak / bw, 0.02), xycoords=("data", "axes fraction"),
                    textcoords="offset points", xytext=(-10, 0), fontsize=7, rotation=90, va="bottom")
    points: list[tuple[float, float, str]] = []
    for k, phase in enumerate(phases):
        marker = "o^sDv"[k % 5]
        first = True
        for op in phase.ops:
            if op["flop"] <= 0 or op["estimate_s"] <= 0:
                continue
            xi, yi = float(op["intensity_flop_per_byte"]), op["flop"] / op["estimate_s"]
            ax.scatter(xi, yi, s=28, marker=marker,
                       label=f"{phase.phase} ({phase.new_tokens:g} tokens)" if first else None)
            first = False
            points.append((xi, yi, f"{op['name']} ({op['math']})"))
    # Labels placed greedily in display space: the first of a few offsets
    # around each point whose box meets no label placed before it.
    ax.autoscale_view()
    boxes: list[tuple[float, float, float, float]] = []
    offsets = [(4, 3), (4, -11), (4, 13), (4, -21), (-8, 3), (-8, -11), (4, 23), (4, -31), (4, 33), (4, -41)]
    for xi, yi, text in points:
        px, py = ax.transData.transform((xi, yi))
        w, h = 4.3 * len(text), 9.0
        chosen = offsets[-1]
        for dx, dy in offsets:
            x0 = px + dx if dx >= 0 else px + dx - w
            box = (x0, py + dy, x0 + w, py + dy + h)
            if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in boxes):
                chosen = (dx, dy)
                boxes.append(box)
                break
        ax.annotate(text, (xi, yi), fontsize=7, textcoords="offset points", xytext=chosen,
                    ha="left" if chosen[0] >= 0 else "right")
    ax.set_xlabel("arithmetic intensity (FLOP/B)")
    ax.set_ylabel("FLOP/s")
    ax.set_title(f"Roofline of {device.id}", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    return ax


def _plan_title(plan: Plan) -> str:
    return f"{plan.model} on {plan.devices} x {plan.device} ({plan.weights}, KV {plan.kv}; {plan.engine})"


def decode_curve(plan: Plan, *, ax: Axes | None = None) -> Axes:
    """Decode tokens/s of one user (and of each of the plan's users) against
    context: bound, estimate and its band. Contexts where the plan's users do
    not fit are greyed, past a line at the longest context that fits; a plan
    the engine would refuse to start says so."""
    ax = _axes(ax)
    curve = plan.decode_curve
    ctx = [p["context"] for p in curve]
    ok = [bool(p["fits"]) for p in curve]
    est = [p["single_user_tokens_per_s_estimate"] for p in curve]
    ax.plot(ctx, [p["single_user_tokens_per_s_bound"] for p in curve], "--", color="tab:blue", label="bound, 1 user")
    if all(("single_user_tokens_per_s_low" in p) for p in curve):
        ax.fill_between(ctx, [p["single_user_tokens_per_s_low"] for p in curve],
                        [p["single_user_tokens_per_s_high"] for p in curve], color="tab:orange", alpha=0.2,
                        label="estimate band")
    fit_ctx = [c for c, f in zip(ctx, ok) if f]
    ax.plot(fit_ctx, [e for e, f in zip(est, ok) if f], "-o", color="tab:orange", label="estimate, 1 user")
    m = plan.memory
    users = m.users
    if users > 1:
        ax.plot(fit_ctx, [p["per_user_tokens_per_s_estimate"] for p, f in zip(curve, ok) if f], "-s",
                color="tab:green", label=f"per user, {users:g} users")
    if not all(ok):
        # Where they do not fit, the speed the plan's users would get (each of
        # them, not one user alone), greyed: a speed the deployment cannot reach.
        bad = [(c, p["per_user_tokens_per_s_estimate"] if users > 1 else e)
               for c, e, f, p in zip(ctx, est, ok, curve) if not f]
        ax.plot([c for c, _ in bad], [e for _, e in bad], "x", color="grey",
                label=f"{users:g} user{'s' if users != 1 else ''} do not fit (each would get)")
        limit = m.max_context_for_users
        if limit > 0:
            ax.axvline(limit, color="red", ls=":", label=f"longest context that fits: {_tokens_label(limit)}")
    if not m.starts:
        ax.text(0.02, 0.04, "the engine would refuse to start (max_model_len does not fit)", transform=ax.transAxes,
                color="red", fontsize=8)
    ax.set_xscale("symlog", base=2, linthresh=1024)
    from matplotlib.ticker import FixedLocator, FuncFormatter

    ax.xaxis.set_major_locator(FixedLocator([c for c in ctx if c == 0 or c >= 1024]))
    ax.xaxis.set_major_formatter(FuncFormatter(_tokens_label))
    ax.set_xlabel("context (tokens)")
    ax.set_ylabel("tokens/s")
    ax.set_ylim(bottom=0)
    ax.set_title(_plan_title(plan), fontsize=9)
    ax.legend(fontsize=7)
    return ax


def users_curve(frame: Any, *, ax: Axes | None = None, max_num_seqs: float | None = None) -> Axes:
    """Per-user and total tokens/s against users, from a ``sweep_decode`` frame
    swept over ``batch`` (one line per model/device/format combination).
    Batches whose KV cache does not fit (the frame's ``fits``) are drawn as grey
    crosses past a line at the most users that fit; the lines stop there.
    ``max_num_seqs`` (the engine's, e.g. ``plan.to_dict()["engine_settings"]
    ["max_sequences"]``) marks where the engine stops scheduling more
    sequences in a batch: users beyond it wait for a slot."""
    ax = _axes(ax)
    twin = ax.twinx()
    for key, g in frame.groupby(["model", "device", "weights", "kv"], sort=False, observed=True):
        g = g.groupby("batch", as_index=False).agg({"tokens_per_s_per_user_estimate": "mean",
                                                    "tokens_per_s_total_estimate": "mean", "fits": "all"})
        label = "/".join(str(k) for k in key)
        fit, out = g[g["fits"]], g[~g["fits"]]
        line = ax.plot(fit["batch"], fit["tokens_per_s_per_user_estimate"], "-o", label=f"{label} per user")
        twin.plot(fit["batch"], fit["tokens_per_s_total_estimate"], "--", color=line[0].get_color(),
                  label=f"{label} total")
        if len(out):
            ax.plot(out["batch"], out["tokens_per_s_per_user_estimate"], "x", color="grey",
                    label=f"{label}: does not fit")
            if len(fit):
                ax.axvline(float(fit["batch"].max()), color="red", ls=":",
                           label=f"most users that fit: {float(fit['batch'].max()):g}")
    if max_num_seqs is not None and float(max_num_seqs) <= float(frame["batch"].max()):
        ax.axvline(float(max_num_seqs), color="purple", ls="-.",
                   label=f"max_num_seqs {float(max_num_seqs):g}: more users wait for a slot")
    ax.set_xscale("log", base=2)
    _plain_ticks(ax.xaxis)
    ax.set_xlabel("users (sequences decoding together)")
    ax.set_ylabel("tokens/s per user (solid)")
    twin.set_ylabel("tokens/s total (dashed)")
    contexts = sorted({float(c) for c in frame["context"]}) if "context" in frame else []
    at = (" at " + ", ".join(f"{_tokens_label(c)} tokens" for c in contexts)) if contexts else ""
    ax.set_title(f"Per-user and total tokens/s{at}", fontsize=10)
    ax.set_ylim(bottom=0)
    twin.set_ylim(bottom=0)
    lines = ax.get_legend_handles_labels()
    more = twin.get_legend_handles_labels()
    # Below the axes, off the data.
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18))
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


def front(rec: Recommendation, *, ax: Axes | None = None) -> Axes:
    """A search's answer (:func:`llmroof.recommend`): tokens/s per user
    against cost (USD per hour with prices, else devices) for every candidate
    that is served, each with a bar down to its band's slow edge; the
    candidates on the front ringed (none is as fast, as cheap, as many
    tokens/s per device and as many bits all at once) with a step at the
    fastest per user each cost buys; the per-user target drawn across; the
    recommended candidate labelled. Meets, at risk and misses are told apart
    by colour."""
    ax = _axes(ax)
    rows = [c for c in rec.candidates if c["status"] != "no_fit" and c["tokens_per_s_per_user"] > 0]
    priced = any(c["cost_per_hour"] is not None for c in rows)

    def cost(c: dict[str, Any]) -> float:
        return float(c["cost_per_hour"]) if priced and c["cost_per_hour"] is not None else float(c["devices"])

    colours = {"meets": "tab:green", "at_risk": "tab:orange", "misses": "tab:grey"}
    names = {"meets": "meets the targets", "at_risk": "at risk (meets them at its estimate only)",
             "misses": "misses a target"}
    # Colour: the verdict; marker: the (model, device kind), in a legend of its own.
    kinds = list(dict.fromkeys((c["model"], c["device"]) for c in rows))
    shapes = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h"]
    marker = {k: shapes[i % len(shapes)] for i, k in enumerate(kinds)}
    many_models = len({m for m, _ in kinds}) > 1

    def kind_label(k: tuple[str, str]) -> str:
        return f"{k[0]} on {k[1]}" if many_models else k[1]

    for status in ("misses", "at_risk", "meets"):
        for k in kinds:
            group = [c for c in rows if c["status"] == status and (c["model"], c["device"]) == k]
            if not group:
                continue
            x = [cost(c) for c in group]
            y = [c["tokens_per_s_per_user"] for c in group]
            low = [max(c["tokens_per_s_per_user"] - c["tokens_per_s_per_user_slow"], 0.0)
                   if c["tokens_per_s_per_user_slow"] > 0 else 0.0 for c in group]
            ax.errorbar(x, y, yerr=[low, [0.0] * len(group)], fmt=marker[k], ms=4, color=colours[status], alpha=0.6,
                        elinewidth=0.8, capsize=0)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=colours[st],
                      label=f"{names[st]} ({sum(c['status'] == st for c in rows)})")
               for st in ("meets", "at_risk", "misses") if any(c["status"] == st for c in rows)]
    handles += [Line2D([], [], ls="", marker=marker[k], color="black", mfc="none", label=kind_label(k)) for k in kinds]
    f = rec.front
    if f:
        handles.append(ax.plot([cost(c) for c in f], [c["tokens_per_s_per_user"] for c in f], "o", ms=9, mfc="none",
                               mec="black", mew=0.8, label=f"on the front ({len(f)})")[0])
        # The fastest per user at each cost or less: what more money buys.
        steps: list[tuple[float, float]] = []
        corners: list[dict[str, Any]] = []
        for c in sorted(f, key=cost):
            if not steps or c["tokens_per_s_per_user"] > steps[-1][1]:
                steps.append((cost(c), c["tokens_per_s_per_user"]))
                corners.append(c)
        # Each corner of that step says what it is (the recommended one has its box).
        for c in corners:
            if rec.best is not None and c["index"] == rec.best["index"]:
                continue
            model = f"{c['model']}: " if many_models else ""
            ax.annotate(f"{model}{c['devices']} x {c['device']} {c['weights']}", (cost(c), c["tokens_per_s_per_user"]),
                        xytext=(4, -9), textcoords="offset points", fontsize=5.5, color="dimgrey")
        handles.append(ax.step([x for x, _ in steps], [y for _, y in steps], where="post", color="black", lw=1,
                               label="fastest per user at that cost")[0])
    target = float(rec.targets["min_tokens_per_s_per_user"])
    if target > 0:
        handles.append(ax.axhline(target, color="red", ls="--", lw=1, label=f"target {target:g} tokens/s per user"))
    best = rec.best
    if best is not None:
        handles.append(ax.plot([cost(best)], [best["tokens_per_s_per_user"]], "*", ms=14, color="gold", mec="black",
                               label="recommended")[0])
        model = f"{best['model']} on " if len(rec.models) > 1 else ""
        ax.annotate(f"{model}{best['devices']} x {best['device']}\n{best['layout']}, {best['engine']}\n"
                    f"{best['weights']} / KV {best['kv']}",
                    (cost(best), best["tokens_per_s_per_user"]), xytext=(14, 10), textcoords="offset points",
                    fontsize=7, arrowprops={"arrowstyle": "-", "lw": 0.5},
                    bbox={"boxstyle": "round", "fc": "white", "ec": "grey", "lw": 0.5})
    ax.set_xlabel("USD per hour" if priced else "devices")
    if not priced:
        ax.set_xscale("log", base=2)
        _plain_ticks(ax.xaxis)
    ax.set_ylabel("tokens/s per user (bar: to the band's slow edge)")
    load = rec.workload
    what = f"{load['users']:g} users" if load["users"] is not None else f"{load['rate']:g} requests/s"
    ax.set_title(f"{', '.join(rec.models)}\n{what} at {load['context']:,.0f} tokens, {rec.searched} candidates",
                 fontsize=9)
    ax.set_ylim(bottom=0)
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    return ax
