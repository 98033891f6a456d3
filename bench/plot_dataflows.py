#!/usr/bin/env python3
"""Plots `theo_bench --dataflows` JSON in the form of Nozaki et al.'s Fig. 4 and Fig. 7, and checks
the acceptance of Dataflow::kAuto.

usage: bench/plot_dataflows.py RESULTS.json OUT.png [--op hmult|keyswitch] [--table]

Fig. 4 panel: one cell per (N, L, dnum) of the grid; its colour and first line name the fastest
fixed dataflow (DSOC / DPOC at their best chunk count), the second and third lines the time of
the second-best and of the worst dataflow relative to it (each dataflow at its best chunks), as
in the paper. Cells that are not run (above the 128-bit bound, or no alpha gives dnum digits of
L limbs) are grey. Fig. 7 panels: the best chunk count of DSOC and of DPOC per cell. Last panel:
Auto's time relative to the best fixed choice (table or model, as the run found it).

Also writes OUT-summary.json and prints: Auto against the best fixed choice and against DPOB
(today's default) per cell, the geometric-mean speedup of Auto over each fixed dataflow, and how
often the footprint model alone lands within 10% of the best (and where it misses). --table
prints the Markdown table for the README.
"""

import argparse
import json
import math
import os
import sys

DATAFLOWS = ["DSOB", "DPOB", "DSOC", "DPOC"]
COLORS = {"DSOB": "#d62728", "DPOB": "#ff7f0e", "DSOC": "#1f77b4", "DPOC": "#2ca02c"}
# The paper's grid (theo/math/parameter_grid.h); a run over other cells (the CPU smoke test's small
# ones) gets axes made of its own values instead.
PAPER_LOG_N = [14, 15, 16, 17]
PAPER_ROWS = [(limbs, dnum) for limbs in (10, 30, 50) for dnum in (2, 4, 6, 8)]


def grid_axes(keys):
    """The columns (log N) and rows ((limbs, dnum)) to draw for these (log_n, limbs, dnum) cells."""
    log_n, rows = set(PAPER_LOG_N), set(PAPER_ROWS)
    if all(k[0] in log_n and (k[1], k[2]) in rows for k in keys):
        return PAPER_LOG_N, PAPER_ROWS
    return sorted({k[0] for k in keys}), sorted({(k[1], k[2]) for k in keys})


def load(path, op):
    with open(path) as f:
        data = json.load(f)
    cells, skipped = {}, {}
    for r in data["results"]:
        key = (r["log_n"], r["levels"], r["dnum"])
        if r.get("record") in ("skipped", "failed"):
            skipped[key] = r.get("status", "failed")
            continue
        if r.get("record") != "op" or r["op"] != op:
            continue
        c = cells.setdefault(key, {"fixed": {}, "auto": None, "meta": r})
        choice = r["dataflow"] if r["dataflow"] in ("DSOB", "DPOB", "auto") else (
            "%s/%d" % (r["dataflow"], r["chunks"]))
        if r["dataflow"] == "auto":
            c["auto"] = r["median_us"]
        else:
            c["fixed"][choice] = r["median_us"]
    return data, cells, skipped


def per_dataflow(fixed):
    """Each dataflow's best time (over chunks) and the chunks that give it."""
    best = {}
    for choice, us in fixed.items():
        name, _, chunks = choice.partition("/")
        if name not in best or us < best[name][0]:
            best[name] = (us, int(chunks) if chunks else 1)
    return best


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def summarize(cells):
    out = {"cells": [], "acceptance": {}}
    auto_vs = {}
    model_hits, model_misses = 0, []
    for key in sorted(cells):
        c = cells[key]
        fixed, meta = c["fixed"], c["meta"]
        if not fixed:
            continue
        best_choice = min(fixed, key=fixed.get)
        best = fixed[best_choice]
        dpob = fixed.get("DPOB")
        model = meta.get("model_choice")
        model_us = fixed.get(model)
        by_flow = sorted(us for us, _ in per_dataflow(fixed).values())
        rec = {
            "log_n": key[0], "levels": key[1], "dnum": key[2],
            "best": best_choice, "best_us": best, "dpob_us": dpob,
            "second_over_best": by_flow[1] / by_flow[0] if len(by_flow) > 1 else None,
            "worst_over_best": by_flow[-1] / by_flow[0],
            "auto_us": c["auto"], "auto_choice": meta.get("auto_choice"),
            "auto_source": meta.get("auto_source"),
            "auto_over_best": c["auto"] / best if c["auto"] else None,
            "auto_over_dpob": c["auto"] / dpob if c["auto"] and dpob else None,
            "model_choice": model,
            "model_over_best": model_us / best if model_us else None,
        }
        out["cells"].append(rec)
        if c["auto"]:
            for name, (us, _) in per_dataflow(fixed).items():
                auto_vs.setdefault(name, []).append(us / c["auto"])
            for choice, us in fixed.items():
                auto_vs.setdefault("fixed " + choice, []).append(us / c["auto"])
        if model_us is not None:
            if model_us <= 1.10 * best:
                model_hits += 1
            else:
                model_misses.append("N=2^%d L=%d dnum=%d: model %s %.2fx best %s" % (
                    key[0], key[1], key[2], model, model_us / best, best_choice))
    runs = [r for r in out["cells"] if r["auto_over_best"] is not None]
    a = out["acceptance"]
    a["cells"] = len(out["cells"])
    a["auto_within_3pct_of_best"] = all(r["auto_over_best"] <= 1.03 for r in runs)
    a["auto_over_best_max"] = max((r["auto_over_best"] for r in runs), default=None)
    a["auto_not_slower_than_dpob_by_1pct"] = all(
        r["auto_over_dpob"] <= 1.01 for r in runs if r["auto_over_dpob"] is not None)
    a["auto_over_dpob_max"] = max(
        (r["auto_over_dpob"] for r in runs if r["auto_over_dpob"] is not None), default=None)
    a["geomean_speedup_of_auto_over"] = {k: gmean(v) for k, v in sorted(auto_vs.items())}
    total = model_hits + len(model_misses)
    a["model_within_10pct_fraction"] = model_hits / total if total else None
    a["model_within_10pct_ok"] = bool(total) and model_hits >= 0.8 * total
    a["model_misses"] = model_misses
    return out


def plot(cells, skipped, summary, out_png, op, device):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    log_ns, rows = grid_axes(list(cells) + list(skipped))
    fig, axes = plt.subplots(1, 4, figsize=(4 + 4.5 * len(log_ns), max(3.5, 1.5 + 0.62 * len(rows))),
                             gridspec_kw={"wspace": 0.35})
    titles = ["Fastest dataflow (%s)\n1st: best, 2nd: 2nd best / best, 3rd: worst / best" % op,
              "DSOC: best chunks", "DPOC: best chunks", "Auto / best fixed choice"]
    for ax, title in zip(axes, titles):
        ax.set_xlim(0, len(log_ns))
        ax.set_ylim(0, len(rows))
        ax.invert_yaxis()
        ax.set_xticks([i + 0.5 for i in range(len(log_ns))])
        ax.set_xticklabels(["$2^{%d}$" % n for n in log_ns])
        ax.set_yticks([i + 0.5 for i in range(len(rows))])
        ax.set_yticklabels(["L=%d, dnum=%d" % r for r in rows])
        ax.set_xlabel("N")
        ax.set_title(title, fontsize=10)
        ax.tick_params(length=0)
    auto_by_key = {(r["log_n"], r["levels"], r["dnum"]): r for r in summary["cells"]}
    for xi, log_n in enumerate(log_ns):
        for yi, (limbs, dnum) in enumerate(rows):
            key = (log_n, limbs, dnum)
            c = cells.get(key)
            if not c or not c["fixed"]:
                why = skipped.get(key, "not run")
                for ax in axes:
                    ax.add_patch(plt.Rectangle((xi, yi), 1, 1, color="#dddddd"))
                    ax.text(xi + 0.5, yi + 0.5, why, ha="center", va="center", fontsize=7,
                            color="#777777")
                continue
            best = per_dataflow(c["fixed"])
            order = sorted(best, key=lambda k: best[k][0])
            first = order[0]
            label = first + ("/%d" % best[first][1] if first in ("DSOC", "DPOC") else "")
            second = best[order[1]][0] / best[first][0] if len(order) > 1 else 1
            worst = best[order[-1]][0] / best[first][0]
            axes[0].add_patch(plt.Rectangle((xi, yi), 1, 1, color=COLORS[first], alpha=0.75))
            axes[0].text(xi + 0.5, yi + 0.5, "%s\n%.2f\n%.2f" % (label, second, worst),
                         ha="center", va="center", fontsize=8)
            for ax, name in ((axes[1], "DSOC"), (axes[2], "DPOC")):
                if name in best:
                    ch = best[name][1]
                    ax.add_patch(plt.Rectangle((xi, yi), 1, 1, color=COLORS[name],
                                               alpha=0.15 + 0.085 * ch))
                    ax.text(xi + 0.5, yi + 0.5, str(ch), ha="center", va="center", fontsize=10)
            r = auto_by_key.get(key)
            if r and r["auto_over_best"]:
                ratio = r["auto_over_best"]
                color = "#9bd39b" if ratio <= 1.03 else "#f4a3a3"
                axes[3].add_patch(plt.Rectangle((xi, yi), 1, 1, color=color))
                axes[3].text(xi + 0.5, yi + 0.5, "%.3f\n%s (%s)" % (
                    ratio, r["auto_choice"], r["auto_source"]), ha="center", va="center",
                    fontsize=7)
    axes[0].legend(handles=[Patch(color=COLORS[d], alpha=0.75, label=d) for d in DATAFLOWS],
                   loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=4, fontsize=8)
    acc = summary["acceptance"]
    fig.suptitle("Key-switching dataflows on %s: %s over the parameter grid. Auto within 3%% of "
                 "the best in every cell: %s; model alone within 10%%: %.0f%% of cells" % (
                     device, op, acc["auto_within_3pct_of_best"],
                     100 * (acc["model_within_10pct_fraction"] or 0)), fontsize=11)
    fig.savefig(out_png, dpi=120, bbox_inches="tight")


def markdown(summary):
    lines = ["| N | L | dnum | best | 2nd best / best | Auto (source) | Auto / best | "
             "Auto / DPOB | model | model / best |", "|" + "---|" * 10]
    for r in summary["cells"]:
        lines.append("| 2^%d | %d | %d | %s | %s | %s (%s) | %s | %s | %s | %s |" % (
            r["log_n"], r["levels"], r["dnum"], r["best"],
            "%.2f" % r["second_over_best"] if r["second_over_best"] else "-",
            r["auto_choice"], r["auto_source"],
            "%.3f" % r["auto_over_best"] if r["auto_over_best"] else "-",
            "%.3f" % r["auto_over_dpob"] if r["auto_over_dpob"] else "-",
            r["model_choice"], "%.3f" % r["model_over_best"] if r["model_over_best"] else "-"))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("out_png")
    ap.add_argument("--op", default="hmult", choices=["hmult", "keyswitch"])
    ap.add_argument("--table", action="store_true")
    args = ap.parse_args()
    data, cells, skipped = load(args.results, args.op)
    if not cells:
        sys.exit("plot_dataflows: no %s records in %s" % (args.op, args.results))
    summary = summarize(cells)
    device = next(iter(cells.values()))["meta"].get("device", "?")
    summary["device"] = device
    summary["op"] = args.op
    summary["git_commit"] = data["header"].get("git_commit")
    stem = os.path.splitext(args.out_png)[0]
    with open(stem + "-summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    acc = summary["acceptance"]
    print("%s, %s, %d cells" % (device, args.op, acc["cells"]))
    for r in summary["cells"]:
        print("  N=2^%d L=%2d dnum=%d  best %-8s %9.1f us  auto %-8s (%s) %s  vs DPOB %s  "
              "model %-8s %s" % (
                  r["log_n"], r["levels"], r["dnum"], r["best"], r["best_us"],
                  r["auto_choice"], r["auto_source"],
                  "%.3f" % r["auto_over_best"] if r["auto_over_best"] else "  -  ",
                  "%.3f" % r["auto_over_dpob"] if r["auto_over_dpob"] else "  -  ",
                  r["model_choice"],
                  "%.3f" % r["model_over_best"] if r["model_over_best"] else "-"))
    print("Auto within 3%% of the best fixed choice in every cell: %s (max %.3f)" % (
        acc["auto_within_3pct_of_best"], acc["auto_over_best_max"] or float("nan")))
    print("Auto never slower than DPOB by more than 1%%: %s (max %.3f)" % (
        acc["auto_not_slower_than_dpob_by_1pct"], acc["auto_over_dpob_max"] or float("nan")))
    print("geometric-mean speedup of Auto over:")
    for k, v in acc["geomean_speedup_of_auto_over"].items():
        if not k.startswith("fixed "):
            print("  %-6s %.3f" % (k, v))
    print("model alone within 10%% of the best: %.0f%% of cells (>= 80%%: %s)" % (
        100 * (acc["model_within_10pct_fraction"] or 0), acc["model_within_10pct_ok"]))
    for m in acc["model_misses"]:
        print("  miss: " + m)
    if args.table:
        print(markdown(summary))
    try:
        plot(cells, skipped, summary, args.out_png, args.op, device)
        print("wrote %s and %s-summary.json" % (args.out_png, stem))
    except ImportError as e:
        print("plot_dataflows: no plot (%s; pip install matplotlib); summary written" % e)


if __name__ == "__main__":
    main()
