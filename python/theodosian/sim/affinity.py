"""The paper's kernel offloading model, equation (1) of HMC-FHE (Section IV-A):

    Affinity(x) = HMC  if  (1 - r) m + c1 r s < CAI,  else GPU

m = MAI, s = SMAI, r = SMI:TI ratio of kernel x (kernels.Work), CAI = the HMC engines' peak
integer rate / the GPU's memory bandwidth (instructions per byte), c1 = model.json's
affinity.c1, fitted by :func:`fit_c1` so that the rule picks, for every kernel of the calibration
traces, the engine the cost model finds faster for it alone.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from .cost import gpu_cost, hmc_cost
from .kernels import PAPER_KERNELS, Work
from .machine import Machine
from .model import Model


def cai(m: Machine) -> float:
    """Critical arithmetic intensity: HMC peak int rate / GPU memory bandwidth (instr/byte)."""
    if m.hmc is None:
        return 0.0
    return m.hmc.cubes * m.hmc.int_ops_per_us_per_cube / m.gpu_mem_bytes_per_us


def theta(w: Work, c1: float) -> float:
    r = w.ratio
    return (1.0 - r) * w.mai + c1 * r * w.smai


def choose_engine(w: Work, m: Machine, model: Model) -> str:
    if m.hmc is None:
        return "gpu"
    return "hmc" if theta(w, model.c1) < cai(m) else "gpu"


def level_ai(x: float) -> str:
    """Table II legend for MAI / SMAI: L < 1 <= M < 5 <= H."""
    return "L" if x < 1 else ("M" if x < 5 else "H")


def level_ratio(x: float) -> str:
    """Table II legend for the ratio: L < 0.1 <= M < 0.5 <= H."""
    return "L" if x < 0.1 else ("M" if x < 0.5 else "H")


@dataclass
class Row:
    kernel: str
    calls: int
    mai: float
    smai: float
    ratio: float
    theta: float
    hmc_share: float  # fraction of the calls the rule sends to the HMCs

    @property
    def affinity(self) -> str:
        if self.hmc_share >= 0.999:
            return "HMC"
        if self.hmc_share <= 0.001:
            return "GPU"
        return f"mixed ({100 * self.hmc_share:.0f}% HMC)"


def table(works: list[tuple[Work, int]], m: Machine, model: Model) -> list[Row]:
    """Per paper kernel: call-weighted mean m, s, r, theta and the share sent to the HMCs."""
    acc: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    c = cai(m)
    for w, count in works:
        a = acc[w.kernel]
        th = theta(w, model.c1)
        a[0] += count
        a[1] += count * w.mai
        a[2] += count * w.smai
        a[3] += count * w.ratio
        a[4] += count * th
        a[5] += count * (1.0 if (m.hmc is not None and th < c) else 0.0)
    rows = []
    for k in PAPER_KERNELS:
        if k not in acc:
            continue
        n, sm, ss, sr, st, sh = acc[k]
        rows.append(Row(k, int(n), sm / n, ss / n, sr / n, st / n, sh / n))
    return rows


def format_table(rows: list[Row], m: Machine, model: Model) -> str:
    lines = [f"Kernel affinity on {m.name} (CAI = {cai(m):.2f} instr/byte, c1 = {model.c1:.3g}; "
             "legend: MAI/SMAI L < 1 <= M < 5 <= H, ratio L < 0.1 <= M < 0.5 <= H)",
             f"{'kernel':<8} {'calls':>6} {'MAI':>10} {'SMAI':>10} {'SMI:TI':>11} "
             f"{'theta':>7}  affinity"]
    for r in rows:
        lines.append(f"{r.kernel:<8} {r.calls:>6} {r.mai:>7.2f} {level_ai(r.mai)}  "
                     f"{r.smai:>7.2f} {level_ai(r.smai)}  {r.ratio:>8.3f} {level_ratio(r.ratio)}  "
                     f"{r.theta:>7.2f}  {r.affinity}")
    return "\n".join(lines)


def fit_c1(works: list[Work], m: Machine, model: Model) -> dict:
    """The c1 interval in which rule (1) agrees with the faster engine (standalone cost model,
    BaCP) for every kernel in ``works``, and the chosen c1 (geometric middle of a finite interval,
    2x its lower end when unbounded above, 1 when every c1 works). Kernels without shared memory
    do not constrain c1; their disagreements are counted."""
    c = cai(m)
    lo, hi = 0.0, math.inf
    fixed_disagree = 0
    for w in works:
        faster = "hmc" if hmc_cost(w, m, model).us < gpu_cost(w, m, model).us else "gpu"
        r, s, mai = w.ratio, w.smai, w.mai
        if r <= 0 or s <= 0:
            rule = "hmc" if mai < c else "gpu"
            fixed_disagree += rule != faster
            continue
        bound = (c - (1 - r) * mai) / (r * s)  # rule says HMC iff c1 < bound
        if faster == "gpu":
            lo = max(lo, bound)
        else:
            hi = min(hi, bound)
    if lo >= hi:
        chosen = lo
        consistent = False
    elif hi == math.inf:
        chosen = max(1.0, 2.0 * lo) if lo > 0 else 1.0
        consistent = True
    elif lo <= 0:
        chosen = min(1.0, hi / 2.0)
        consistent = True
    else:
        chosen = math.sqrt(lo * hi)
        consistent = True
    return {"c1": chosen, "interval": [lo, hi if hi != math.inf else None],
            "consistent": consistent, "disagreements_without_shared_memory": fixed_disagree,
            "kernels": len(works), "cai": c}
