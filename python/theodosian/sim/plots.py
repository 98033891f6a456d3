"""PNG plots of a study (matplotlib, imported only here): the ablation (paper Fig. 11), the
scaling over cubes (Fig. 13), per-kernel speedups (Fig. 10(b)), and a GPU/HMC timeline."""

from __future__ import annotations

import os
from collections import defaultdict


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ablation(records: list[dict], path: str, setting: str, title: str, kernels: str) -> None:
    plt = _plt()
    rows = [r for r in records if r.get("record") == "speedup" and r["setting"] == setting
            and r.get("kernels") == kernels and r.get("study") != "scaling"]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    techs = ["baseline", "serial", "pipe", "full"]
    fig, ax = plt.subplots(figsize=(1.8 + 1.6 * len(workloads), 3.6))
    width = 0.8 / len(techs)
    for j, t in enumerate(techs):
        ys = [next((r["speedup"] for r in rows if r["workload"] == w and r["techniques"] == t),
                   0.0) for w in workloads]
        xs = [i + (j - 1.5) * width for i in range(len(workloads))]
        bars = ax.bar(xs, ys, width, label=t)
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", va="bottom", fontsize=7)
        del bars
    ax.set_xticks(range(len(workloads)))
    ax.set_xticklabels([w.replace("bootparam_40-", "") for w in workloads], fontsize=8)
    ax.set_ylabel("speedup over GPU only")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, ncol=4, loc="upper left")
    ax.set_ylim(0, max([r["speedup"] for r in rows] + [1]) * 1.25)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def scaling(records: list[dict], path: str, setting: str, title: str, kernels: str) -> None:
    plt = _plt()
    rows = [r for r in records if r.get("study") == "scaling" and r["setting"] == setting
            and r.get("kernels") == kernels]
    by = defaultdict(list)
    for r in rows:
        by[r["workload"]].append((r["hmc_count"], r["speedup"]))
    fig, ax = plt.subplots(figsize=(5.6, 3.8))
    for w, pts in by.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                label=w.replace("bootparam_40-", ""))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("cubes (each with its engines and links)")
    ax.set_ylabel("speedup over GPU only")
    ax.set_title(title, fontsize=7)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def kernels(records: list[dict], path: str, workload: str, title: str, setting: str,
            variant: str) -> None:
    plt = _plt()
    rows = [r for r in records if r.get("record") == "kernel_speedup" and r["workload"] == workload
            and r.get("speedup") and r["setting"] == setting and r.get("kernels") == variant]
    rows.sort(key=lambda r: -r["baseline_us"])
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.bar([r["kernel"] for r in rows], [r["speedup"] for r in rows], color="tab:green")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    for i, r in enumerate(rows):
        share = r["baseline_us"] / sum(x["baseline_us"] for x in rows)
        ax.text(i, r["speedup"] + 0.03, f"{r['speedup']:.2f}x\n{100 * share:.0f}%",
                ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("kernel speedup (full vs GPU only)")
    ax.set_title(title + "  (label: speedup, share of GPU-only time)", fontsize=8)
    ax.set_ylim(0, max([r["speedup"] for r in rows] + [1]) * 1.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def timeline(schedules: dict, path: str, title: str) -> None:
    """Gantt charts, one row per queue, of a few schedules of one workload."""
    plt = _plt()
    colors = {"NTT": "tab:blue", "iNTT": "tab:cyan", "ConvU": "tab:orange",
              "ConvD": "tab:brown", "InnerP": "tab:green", "TensorP": "tab:red",
              "Add": "tab:purple", "Sub": "tab:pink", "AMorph": "tab:olive", "Copy": "tab:gray"}
    fig, axes = plt.subplots(len(schedules), 1, figsize=(8, 1.3 + 1.0 * len(schedules)),
                             squeeze=False)
    for ax, (label, s) in zip(axes[:, 0], schedules.items()):
        rows = ["gpu", "gpu2", "hmc"]
        for t in s.tasks:
            y = rows.index(t.queue)
            ax.barh(y, t.end - t.start, left=t.start, color=colors.get(t.kernel, "k"),
                    edgecolor="white", linewidth=0.3)
        ax.set_yticks(range(3))
        ax.set_yticklabels(["GPU", "GPU 2nd", "HMC"], fontsize=7)
        ax.set_title(f"{label}: {s.makespan_us:.0f} us", fontsize=8, loc="left")
        ax.tick_params(axis="x", labelsize=7)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colors.values()]
    fig.legend(handles, list(colors), fontsize=6, ncol=10, loc="lower center")
    axes[-1, 0].set_xlabel("us", fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)


def all_plots(records: list[dict], extras: dict, out_dir: str, prefix: str) -> list[str]:
    os.makedirs(out_dir, exist_ok=True)
    out = []
    titles = {"paper": "GPU-HMC (Table III) vs 56-SM GPU of equal compute and external bandwidth",
              "h100-pim": "H100 + HBM-PIM-like engines vs H100 alone"}
    combos = dict.fromkeys((r["setting"], r.get("kernels", "measured")) for r in records
                           if r.get("record") == "speedup")
    for setting, kv in combos:
        t = f"{titles.get(setting, setting)}\n(kernels: {kv})"
        p = os.path.join(out_dir, f"{prefix}-ablation-{setting}-{kv}.png")
        ablation(records, p, setting, t, kv)
        out.append(p)
        p = os.path.join(out_dir, f"{prefix}-scaling-{setting}-{kv}.png")
        scaling(records, p, setting, t, kv)
        out.append(p)
    kcombos = dict.fromkeys((r["workload"], r["setting"], r.get("kernels", "measured"))
                            for r in records if r.get("record") == "kernel_speedup")
    for w, setting, kv in kcombos:
        p = os.path.join(out_dir, f"{prefix}-kernels-{setting}-{kv}.png")
        kernels(records, p, w, f"{w.replace('bootparam_40-', '')}: {setting}, kernels {kv}",
                setting, kv)
        out.append(p)
    for name, sch in extras.get("timelines", {}).items():
        p = os.path.join(out_dir, f"{prefix}-timeline-{name}.png")
        timeline(sch, p, f"{name}: GPU / HMC timelines")
        out.append(p)
    return out
