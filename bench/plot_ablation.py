#!/usr/bin/env python3
"""Plots `theo_bench --ablation` JSON: the shape of Theodosian's Fig. 7a, 8a and 7b.

usage: bench/plot_ablation.py results/h200-ablation-2026-11-21.json out.png [--table]

Left: KeySwitch time per step at each measured level (device clock, CUDA events). Middle: Boot
time per step for each preset (host clock around bootstrap + synchronize, the anchor's measure).
Right: batched key switches at L = 12, time per key switch against B, with the footprint model's
bytes and the device's L2 size. Steps whose mechanism is not in the build ("n/a") are left
empty; the bootstrapping levers (steps with `boot_only`) have Boot rows only. --table also prints
the README's Markdown table (one row per step, "-" where a step has no KeySwitch row).
"""

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def device_clock(data):
    for s in data["keyswitch"]:
        for rec in s.get("levels", []):
            return rec["time"]["clock"].replace("_", " ")
    return "?"


def keyswitch_series(data):
    steps = [s["step"] for s in data["keyswitch"]]
    levels = {}
    for i, s in enumerate(data["keyswitch"]):
        for rec in s.get("levels", []):
            key = rec["limbs"]
            levels.setdefault(key, [None] * len(steps))[i] = rec["time"]["median_us"]
    return steps, levels


def boot_series(data):
    series = {}
    steps = None
    for preset, recs in data.get("boot", {}).items():
        steps = [r["step"] for r in recs]
        series[preset] = [r["boot"]["wall_ms"] if "boot" in r else None for r in recs]
    return steps, series


def bars(ax, steps, series, unit, title):
    width = 0.8 / max(1, len(series))
    for k, (label, values) in enumerate(series.items()):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(steps))]
        ys = [v if v is not None else 0 for v in values]
        rects = ax.bar(xs, ys, width, label=label)
        for r, v in zip(rects, values):
            text = "n/a" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.1f}"
            ax.annotate(text, (r.get_x() + r.get_width() / 2, r.get_height()), ha="center",
                        va="bottom", fontsize=6)
    ax.set_xticks(range(len(steps)))
    ax.set_xticklabels(steps, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def plot(data, out):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    steps, levels = keyswitch_series(data)
    bars(axes[0], steps, {f"L = {k}": v for k, v in sorted(levels.items())},
         f"us ({device_clock(data)})", "KeySwitch, optimizations added in turn")
    bsteps, boot = boot_series(data)
    if boot:
        bars(axes[1], bsteps, boot, "ms (wall clock)", "Boot (full slots), optimizations added in turn")
    sweep = data["batching"]
    b = [p["batch"] for p in sweep["points"]]
    per = [p["per_keyswitch_us"] for p in sweep["points"]]
    foot = [p["footprint_bytes"] / 1e6 for p in sweep["points"]]
    ax = axes[2]
    ax.plot(b, per, "o-", color="tab:blue", label="time per key switch")
    ax.set_xlabel("batch size B")
    ax.set_ylabel(f"us per key switch ({device_clock(data)})", color="tab:blue")
    ax.set_title(f"Batched key switches, L = {sweep['limbs']} (planner: B = "
                 f"{sweep['planner_batch']})", fontsize=9)
    ax2 = ax.twinx()
    ax2.plot(b, foot, "s--", color="tab:orange", label="footprint model")
    ax2.axhline(sweep["l2_bytes"] / 1e6, color="tab:red", linestyle=":", label="L2 size")
    ax2.set_ylabel("MB", color="tab:orange")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=7, loc="upper center")
    fig.suptitle(f"theo_bench --ablation on {data['header']['device']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


def table(data):
    steps, levels = keyswitch_series(data)
    bsteps, boot = boot_series(data)
    rows = bsteps if bsteps and len(bsteps) > len(steps) else steps
    cols = [f"KeySwitch L={k} (us)" for k in sorted(levels)] + [f"Boot {p} (ms)" for p in boot]
    print("| step | " + " | ".join(cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for i, s in enumerate(rows):
        cells = []
        for k in sorted(levels):
            if s not in steps:
                cells.append("-")
                continue
            v = levels[k][steps.index(s)]
            cells.append("n/a" if v is None else f"{v:.1f}")
        for p in boot:
            v = boot[p][i] if i < len(boot[p]) else None
            cells.append("n/a" if v is None else f"{v:.2f}")
        print(f"| {s} | " + " | ".join(cells) + " |")


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        data = json.load(f)
    plot(data, argv[2])
    if "--table" in argv:
        table(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
