#!/usr/bin/env python3
"""Plots for `llmroof validate --report DIR`: predicted against measured, per metric.

usage: python scripts/validation_plots.py DIR   (reads DIR/predictions.csv, writes DIR/*.png and
appends them to DIR/report.md)
"""
from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path


def main(folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(open(folder / "predictions.csv", encoding="utf-8")))
    by_metric: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_metric[r["metric"]].append(r)
    images = []
    for metric, rs in sorted(by_metric.items()):
        fig, ax = plt.subplots(figsize=(5, 5))
        engines = sorted({r["engine"] for r in rs})
        for e in engines:
            pts = [r for r in rs if r["engine"] == e]
            ax.scatter([float(r["measured"]) for r in pts], [float(r["predicted"]) for r in pts], s=12, label=e)
        lo = min(min(float(r["measured"]), float(r["predicted"])) for r in rs)
        hi = max(max(float(r["measured"]), float(r["predicted"])) for r in rs)
        ax.plot([lo, hi], [lo, hi], "k--", lw=1)
        ax.fill_between([lo, hi], [lo * 0.8, hi * 0.8], [lo * 1.2, hi * 1.2], color="grey", alpha=0.15, label="±20%")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("measured")
        ax.set_ylabel("predicted (held-out source)")
        ax.set_title(metric)
        ax.legend(fontsize=7)
        name = f"{metric}.png"
        fig.savefig(folder / name, dpi=110, bbox_inches="tight")
        plt.close(fig)
        images.append(name)
    with open(folder / "report.md", "a", encoding="utf-8") as f:
        f.write("\n## Predicted against measured\n\n")
        for name in images:
            f.write(f"![{name}]({name})\n")
    print(f"wrote {len(images)} plots to {folder}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
