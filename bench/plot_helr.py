#!/usr/bin/env python3
"""Plots theo_helr_bench's records (JSON lines): ms per iteration of each layout and mode,
stacked by phase, and each layout's time by limb count (the paper's Fig. 8b).

    python bench/plot_helr.py RECORDS.json [--out PNG]      (default: RECORDS with .png)

Needs matplotlib (pip install '.[plots]').
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

PHASES = ["bootstrap", "unpack", "inner_product", "sigmoid", "gradient", "update"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("records", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args()
    recs = [json.loads(line) for line in args.records.read_text().splitlines() if line.strip()]
    iters = [r for r in recs if r.get("op") == "helr_iteration"]
    profiles = [r for r in recs if r.get("op") == "helr_profile"]
    if not iters:
        print(f"{args.records}: no helr_iteration records", file=sys.stderr)
        return 1

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    ax = axes[0]
    labels = [f"{r['layout']}\n{r['mode']}" for r in iters]
    bottom = [0.0] * len(iters)
    for phase in PHASES:
        vals = [r["phase_ms_per_iteration"].get(phase, 0.0) for r in iters]
        ax.bar(labels, vals, bottom=bottom, label=phase.replace("_", " "))
        bottom = [b + v for b, v in zip(bottom, vals)]
    for i, r in enumerate(iters):
        ax.text(i, bottom[i], f"{r['mean_ms']:.1f} ms\n{r['bootstraps']} bootstrappings",
                ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("ms per iteration (total / iterations)")
    ax.set_title(f"HELR, {iters[0]['preset']}, {iters[0]['device']}", fontsize=9)
    ax.legend(fontsize=8)

    ax = axes[1]
    if profiles:
        bins = sorted({b for p in profiles for b in p["time_share_by_limbs_per_poly"]})
        left = [0.0] * len(profiles)
        names = [p["layout"] for p in profiles]
        for b in bins:
            vals = [p["time_share_by_limbs_per_poly"].get(b, 0.0) for p in profiles]
            ax.barh(names, vals, left=left, label=f"{b} limbs")
            left = [x + v for x, v in zip(left, vals)]
        ax.set_xlabel("share of the profiled time (eager, every op timed)")
        ax.set_title("time by limb count (Fig. 8b)", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    else:
        ax.set_axis_off()
    fig.tight_layout()
    out = args.out or args.records.with_suffix(".png")
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
