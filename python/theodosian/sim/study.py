"""The HMC-FHE study on this library's traces (docs/sim.md, "The study"):

* the paper's configuration (Table III): GPU only (paper-baseline: 56 SMs, 480 GB/s) against the
  GPU-HMC machine of equal peak compute and external bandwidth (paper-gpu-hmc: 40 SMs + 4 cubes
  of 4 SMs) under Serial (offload + BaCP), Pipe (+ pipelining) and full (+ kernel tuning), the
  paper's Fig. 11;
* scaling over 1, 2, 4, 8 cubes (each with its own links and engines; Fig. 13);
* per paper kernel, the summed op time GPU only vs full (Fig. 10(b));
* the same ablation for a modern GPU: the measured H100 alone vs the H100 with HBM-PIM-like
  engines in its five HBM3 stacks (h100-hbm-pim).

Each point is one JSON record {"record": "speedup", "workload", "machine", "techniques",
"hmc_count", "speedup", ...}; plots.py draws them.
"""

from __future__ import annotations

import datetime
import subprocess
from dataclasses import dataclass

from .affinity import cai, table
from .kernels import work
from .machine import Machine, find_machine
from .model import Model
from .schedule import Schedule, Techniques, simulate
from .trace import Trace

ABLATION = ("serial", "pipe", "full")
SCALING = (1, 2, 4, 8)


@dataclass
class Setting:
    """One comparison: a GPU-only baseline machine and a GPU + near-memory machine."""

    name: str
    baseline: Machine
    hetero: Machine


def paper_setting() -> Setting:
    return Setting("paper", find_machine("paper-baseline"), find_machine("paper-gpu-hmc"))


def h100_setting() -> Setting:
    return Setting("h100-pim", find_machine("h100"), find_machine("h100-hbm-pim"))


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _record(tr: Trace, s: Schedule, base: Schedule, setting: str, baseline: Machine,
            kernels: str) -> dict:
    return {"record": "speedup", "workload": tr.name, "synthetic": bool(tr.meta.get("synthetic")),
            "preset": tr.meta.get("preset"), "setting": setting, "kernels": kernels, "machine": s.machine.name, "baseline_machine": baseline.name,
            "techniques": s.techniques.label(),
            "hmc_count": s.machine.hmc.cubes if s.machine.hmc is not None else 0,
            "speedup": base.makespan_us / s.makespan_us, "time_us": s.makespan_us,
            "baseline_us": base.makespan_us, "energy_j": s.energy_j["total"],
            "baseline_energy_j": base.energy_j["total"],
            "energy_ratio": base.energy_j["total"] / s.energy_j["total"],
            "utilization": s.utilization(), "device": "simulated"}


def run_workload(tr: Trace, setting: Setting, model: Model, *, scaling: bool = True,
                 kernels: bool = False) -> tuple[list[dict], dict]:
    """The ablation (and scaling) records of one workload under one setting; extra: the
    schedules and per-kernel times for plots."""
    kv = model.variant
    base = simulate(tr, setting.baseline, model, Techniques.preset("baseline"))
    recs = [{**_record(tr, base, base, setting.name, setting.baseline, kv),
             "techniques": "baseline"}]
    extra: dict = {"baseline": base}
    for p in ABLATION:
        s = simulate(tr, setting.hetero, model, Techniques.preset(p))
        recs.append(_record(tr, s, base, setting.name, setting.baseline, kv))
        extra[p] = s
    if scaling and setting.hetero.hmc is not None:
        for c in SCALING:
            m = setting.hetero.with_cubes(c)
            s = simulate(tr, m, model, Techniques.preset("full"))
            r = _record(tr, s, base, setting.name, setting.baseline, kv)
            r["study"] = "scaling"
            recs.append(r)
    if kernels:
        b, f = base.per_kernel_us(), extra["full"].per_kernel_us()
        extra["kernels"] = {k: {"baseline_us": b[k], "full_us": f.get(k, 0.0),
                                "speedup": b[k] / f[k] if f.get(k) else None} for k in b}
        for k, v in extra["kernels"].items():
            recs.append({"record": "kernel_speedup", "workload": tr.name, "kernel": k,
                         "setting": setting.name, "kernels": kv,
                         "machine": setting.hetero.name, "techniques": "full", **v})
    return recs, extra


def affinity_records(traces: list[Trace], m: Machine, model: Model) -> list[dict]:
    works = [(work(o, model), o.count) for tr in traces for o in tr.ops if not o.is_marker]
    return [{"record": "affinity", "machine": m.name, "kernels": model.variant, "cai": cai(m),
             "c1": model.c1,
             "kernel": r.kernel, "calls": r.calls, "mai": r.mai, "smai": r.smai, "ratio": r.ratio,
             "theta": r.theta, "affinity": r.affinity} for r in table(works, m, model)]


def header(model: Model, notes: str = "") -> dict:
    return {"record": "header", "mode": "hmc-sim", "git_commit": git_commit(),
            "date": datetime.date.today().isoformat(), "device": "simulated (theodosian.sim)",
            "model": model.source, "notes": notes}


# HMC-FHE Fig. 10(b): per-kernel speedup of the full framework on ResNet-20.
PAPER_KERNEL_SPEEDUP = {"Add": 2.93, "TensorP": 2.79, "InnerP": 2.18, "AMorph": 2.38,
                        "iNTT": 1.0453, "NTT": 1.1239, "ConvU": 1.1446, "ConvD": 1.0968}
PAPER_GPU_KERNELS = ("iNTT", "NTT", "ConvU", "ConvD")


def kernel_busy_us(s: Schedule) -> dict[str, float]:
    """Per paper kernel: the summed durations of its tasks (both engines)."""
    out: dict[str, float] = {}
    for t in s.tasks:
        out[t.kernel] = out.get(t.kernel, 0.0) + (t.end - t.start)
    return out


def explain(tr: Trace, setting: Setting, model: Model, full_speedup: float) -> list[dict]:
    """Kernel by kernel: the baseline's time shares on this trace, and what the paper's own
    per-kernel speedups (Fig. 10(b)) would give on this kernel mix -- run one after another, and
    with the GPU kernels and the HMC kernels perfectly overlapped (an upper bound)."""
    base = simulate(tr, setting.baseline, model, Techniques.preset("baseline"))
    busy = kernel_busy_us(base)
    total = sum(busy.values())
    recs = []
    serial = gpu_side = hmc_side = 0.0
    for k, t in sorted(busy.items(), key=lambda x: -x[1]):
        sp = PAPER_KERNEL_SPEEDUP.get(k, 2.93 if k in ("Sub", "Copy") else 1.0)
        serial += t / sp
        if k in PAPER_GPU_KERNELS:
            gpu_side += t / sp
        else:
            hmc_side += t / sp
        recs.append({"record": "explain", "workload": tr.name, "kernels": model.variant,
                     "kernel": k, "baseline_share": t / total, "paper_kernel_speedup": sp,
                     "side": "GPU" if k in PAPER_GPU_KERNELS else "HMC"})
    recs.append({"record": "explain_bound", "workload": tr.name, "kernels": model.variant,
                 "gpu_side_share": sum(busy.get(k, 0.0) for k in PAPER_GPU_KERNELS) / total,
                 "paper_speedups_serial": total / serial,
                 "paper_speedups_perfect_overlap": total / max(gpu_side, hmc_side),
                 "simulated_full": full_speedup, "paper_reported": 2.22})
    return recs
