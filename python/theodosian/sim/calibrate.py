"""Fitting the kernel model to measured GPU times, and validating the GPU-only prediction.

Fit (``python -m theodosian.sim fit``), on one card:

1. instructions per MAC, per family (NTT, BConv, KeyMult): Nsight Compute's warp instructions x 32
   over the kernels of one key switch, minus ``instr_per_word`` per word, divided by the trace's
   MACs of the same family (the same key switch traced with the same L2 batching);
2. per family, kernel_fixed_us and one efficiency factor -- compute_factor when the family's
   largest fitted case is issue-bound in the roofline, else memory_factor -- minimizing the
   squared relative error of the predicted times of (a) theo_bench's ring cases (ntt, intt,
   bconv_modup, key_mult, add, ...; single ops repeated on the same buffers, CUDA events, launched
   on a stream) over every measured size (FIT_CASES) and (b) the ops of that same key switch
   (Nsight kernel durations, the ops in their real context: inputs from the previous op, keys
   from DRAM).

Validation (``python -m theodosian.sim validate``) then compares the prediction with data the fit
did not use: per-family Nsight kernel time inside whole ops (a key switch, a bootstrapping), and
whole-op times (CUDA events) and a whole bootstrapping (graph replay).
"""

from __future__ import annotations

import math
from dataclasses import replace

from .cost import gpu_cost, l2_effective_bytes
from .kernels import FAMILIES, work
from .machine import Machine
from .measured import RING_CASES, family_sums, kernel_family, ring_case_op
from .model import Model
from .schedule import Techniques, build, simulate
from .trace import Trace

GPU_ONLY = Techniques(False, False, False, False)


def fit_instructions(ks_trace: Trace, ncu: list[dict], model: Model) -> dict[str, dict]:
    """Per family: measured thread instructions (ncu) and the fitted instr_per_mac."""
    meas = {f: 0.0 for f in FAMILIES}
    for k in ncu:
        meas[kernel_family(k["name"])] += 32.0 * k.get("inst", 0.0)
    out = {}
    for f in ("NTT", "BConv", "KeyMult"):
        macs = words = 0.0
        for o in ks_trace.expanded():
            if o.is_marker:
                continue
            w = work(o, model)
            if w.family == f:
                macs += o.macs
                words += w.words
        if macs <= 0 or meas[f] <= 0:
            continue
        per_word = model.family(f)["instr_per_word"]
        ipm = max(0.5, (meas[f] - per_word * words) / macs)
        out[f] = {"measured_thread_instr": meas[f], "macs": macs, "words": words,
                  "instr_per_mac": ipm}
    return out


def repeated_residency(footprint: float, l2: float) -> float:
    """L2 hit fraction of an op repeated on the same buffers: ~1 while its footprint fits the
    effective L2, ~0 once it exceeds it (a cyclic sweep larger than an LRU-like cache misses)."""
    if footprint <= 0:
        return 1.0
    return 1.0 / (1.0 + (footprint / l2) ** 8) if l2 > 0 else 0.0


def _predict_ring(case: str, limbs: int, m: Machine, model: Model) -> float:
    """theo_bench repeats the op on the same buffers: all of its data is L2-resident when its
    footprint fits."""
    w = work(ring_case_op(case, limbs), model)
    rho = repeated_residency(w.bytes, l2_effective_bytes(m, model))
    return gpu_cost(w, m, model, stream=True, rho_read=rho, rho_write=rho).us


def _bound(case: str, limbs: int, m: Machine, model: Model) -> str:
    """"compute" or "memory": which roofline term bounds the case (cost.gpu_cost's terms)."""
    w = work(ring_case_op(case, limbs), model)
    rho = repeated_residency(w.bytes, l2_effective_bytes(m, model))
    fam = model.family(w.family)
    dram = (w.read_bytes + w.write_bytes + w.table_bytes) * (1 - rho) + \
        max(0, w.passes - 1) * w.bytes * (1 - rho)
    t_mem = max(dram / m.gpu_mem_bytes_per_us, w.bytes * w.passes / (m.gpu.l2_bw_gbps * 1e3))
    t_issue = w.instr / m.gpu.int_ops_per_us
    del fam
    return "compute" if t_issue > t_mem else "memory"


def op_times(trace: Trace, ncu: list[dict], model: Model) -> list[tuple[int, float]]:
    """(op index, measured us) for each op of ``trace`` from the Nsight kernels of the same run:
    kernels in issue order, as many per op as it launches (two per NTT at N > 2^12). Empty when
    the counts do not match (a different op sequence)."""
    ops = [(i, o) for i, o in enumerate(trace.expanded()) if not o.is_marker]
    need = [work(o, model).launches for _, o in ops]
    if sum(need) != len(ncu):
        return []
    out, k = [], 0
    for (i, _o), n in zip(ops, need):
        out.append((i, sum(x["us"] for x in ncu[k:k + n])))
        k += n
    return out


def _predict_ops(trace: Trace, m: Machine, model: Model) -> dict[int, float]:
    """Per op index: its predicted kernel time (no launch gap), in the trace's context."""
    b, _ = build(trace, kernel_time_machine(m), model, GPU_ONLY, "graph")
    out: dict[int, float] = {}
    for t in b.tasks:
        out[t.op_index] = out.get(t.op_index, 0.0) + t.cost.us
    return out


def fit_factors(ring: dict[tuple[str, int], float], m: Machine, model: Model,
                cases: dict[str, tuple[str, ...]] | None = None,
                ks_trace: Trace | None = None, ks_ops: list[tuple[int, float]] | None = None
                ) -> dict:
    """Per family: kernel_fixed_us and compute_factor or memory_factor (see the module doc)
    minimizing sum (pred / measured - 1)^2 over the family's ring cases (``cases``: which cases
    fit each family; default all; the others are reported as held out) and the family's ops of
    one measured key switch (``ks_trace`` with ``ks_ops`` from op_times)."""
    out = {}
    ks_ops = ks_ops or []
    ks_fam = {}
    if ks_trace is not None:
        ops = ks_trace.expanded()
        ks_fam = {i: work(ops[i], model).family for i, _ in ks_ops}
    for f in FAMILIES:
        use = cases.get(f) if cases else None
        pts = [(c, lim, us) for (c, lim), us in ring.items()
               if RING_CASES.get(c) == f and (use is None or c in use)]
        kpts = [(i, us) for i, us in ks_ops if ks_fam.get(i) == f]
        if not pts and not kpts:
            continue
        if pts:
            big = max(pts, key=lambda p: p[1])
            bound = _bound(big[0], big[1], m, model)
        else:
            bound = "compute" if f in ("NTT", "BConv") else "memory"
        factor = "compute_factor" if bound == "compute" else "memory_factor"

        def with_(k: float, c0: float) -> Model:
            return replace(model, families={**model.families, f: {
                **model.families[f], factor: k, "kernel_fixed_us": c0}})

        def loss(k: float, c0: float) -> float:
            mm = with_(k, c0)
            e = sum((_predict_ring(c, lim, m, mm) / us - 1.0) ** 2 for c, lim, us in pts)
            if kpts:
                pred = _predict_ops(ks_trace, m, mm)
                e += KS_WEIGHT * sum((pred[i] / us - 1.0) ** 2 for i, us in kpts)
            return e

        def best_k(c0: float) -> tuple[float, float]:
            lo, hi = math.log(0.2), math.log(10.0)
            for _ in range(40):  # golden section on log k
                a = hi - (hi - lo) * 0.618
                b = lo + (hi - lo) * 0.618
                if loss(math.exp(a), c0) < loss(math.exp(b), c0):
                    hi = b
                else:
                    lo = a
            k = math.exp((lo + hi) / 2)
            return loss(k, c0), k

        grid = [x * 0.25 for x in range(0, 61)]
        l, k, c0 = min((*best_k(c), c) for c in grid)
        mm = with_(k, c0)

        def rows(ps):
            return [{"case": c, "limbs": lim, "measured_us": us,
                     "simulated_us": _predict_ring(c, lim, m, mm),
                     "error_pct": 100 * (_predict_ring(c, lim, m, mm) / us - 1)}
                    for c, lim, us in sorted(ps)]

        res = {"factor": factor, factor: k, "kernel_fixed_us": c0,
               "rms_rel_error": math.sqrt(l / max(1, len(pts) + KS_WEIGHT * len(kpts))),
               "points": rows(pts)}
        if kpts:
            pred = _predict_ops(ks_trace, m, mm)
            ops = ks_trace.expanded()
            res["keyswitch_ops"] = [{"op": ops[i].op, "scope": ops[i].scope, "limbs": ops[i].limbs,
                                     "measured_us": us, "simulated_us": pred[i],
                                     "error_pct": 100 * (pred[i] / us - 1)} for i, us in kpts]
        others = [(c, lim, us) for (c, lim), us in ring.items()
                  if RING_CASES.get(c) == f and use is not None and c not in use]
        if others:
            res["held_out"] = rows(others)
        out[f] = res
    return out


# Weight of a key-switch op against a ring case: the ops in context are what the model predicts
# (inputs from the op before, batched conversions, keys from DRAM); the ring cases mostly pin
# down how the time grows with the size.
KS_WEIGHT = 3.0

# The ring cases each family is fitted on: the shapes the key switch and bootstrapping run.
# "bconv" (L limbs onto alpha: many inputs, few outputs) is a shape they never run and the
# tensor-core BConv is ~2x slower per MAC on it; it is reported as held out.
FIT_CASES = {"NTT": ("ntt", "intt"), "BConv": ("bconv_modup",), "KeyMult": ("key_mult",),
             "Elementwise": ("add", "mul", "mul_add", "mul_scalar", "tensor", "automorphism",
                             "automorphism_sum")}


def fit(model: Model, m: Machine, ring: dict, ks_trace: Trace | None, ncu: list[dict] | None,
        sources: dict) -> tuple[Model, dict]:
    fams = {f: dict(v) for f, v in model.families.items()}
    report: dict = {"machine": m.name, "sources": sources}
    if ks_trace is not None and ncu:
        ins = fit_instructions(ks_trace, ncu, model)
        for f, r in ins.items():
            fams[f]["instr_per_mac"] = round(r["instr_per_mac"], 3)
        report["instructions"] = ins
    model2 = replace(model, families=fams)
    ks_ops = op_times(ks_trace, ncu, model2) if (ks_trace is not None and ncu) else []
    if ks_trace is not None and ncu and not ks_ops:
        report["warning"] = "the ncu kernels do not match the key-switch trace's launches"
    tf = fit_factors(ring, m, model2, FIT_CASES, ks_trace, ks_ops)
    for f, r in tf.items():
        fams[f][r["factor"]] = round(r[r["factor"]], 4)
        fams[f]["kernel_fixed_us"] = round(r["kernel_fixed_us"], 3)
    report["factors"] = tf
    return replace(model, families=fams, fit=report), report


# ---- validation ---------------------------------------------------------------------------------


def kernel_time_machine(m: Machine) -> Machine:
    """The GPU with no gap between kernels: what Nsight's per-kernel durations add up to."""
    return replace(m, gpu=replace(m.gpu, launch_gap_us=0.0, stream_launch_us=0.0), hmc=None)


def family_times(trace: Trace, m: Machine, model: Model) -> dict[str, float]:
    """Per family: the summed standalone kernel times -- what Nsight adds up, since it runs
    the kernels one at a time (the schedule's overlap of the two streams is not in it)."""
    b, _ = build(trace, kernel_time_machine(m), model, GPU_ONLY, "graph")
    out: dict[str, float] = {}
    for t in b.tasks:
        out[t.family] = out.get(t.family, 0.0) + t.cost.us
    return out


def validate_families(trace: Trace, ncu: list[dict], m: Machine, model: Model,
                      workload: str, device: str, source: str) -> list[dict]:
    meas = family_sums(ncu)
    sim = family_times(trace, m, model)
    out = []
    for f in FAMILIES:
        if f not in meas and f not in sim:
            continue
        mu, su = meas.get(f, {}).get("us", 0.0), sim.get(f, 0.0)
        out.append({"record": "validation", "kind": "family", "family": f, "workload": workload,
                    "measured_us": mu, "simulated_us": su,
                    "error_pct": 100 * (su / mu - 1) if mu > 0 else None,
                    "launches": meas.get(f, {}).get("launches", 0), "device": device,
                    "source": source, "timing": "Nsight kernel durations (no launch gaps)"})
    return out


def validate_op(trace: Trace, measured_us: float, m: Machine, model: Model, workload: str,
                device: str, source: str, launch: str) -> dict:
    su = simulate(trace, replace(m, hmc=None), model, GPU_ONLY, launch=launch).makespan_us
    return {"record": "validation", "kind": "op", "family": "whole op", "workload": workload,
            "measured_us": measured_us, "simulated_us": su,
            "error_pct": 100 * (su / measured_us - 1), "device": device, "source": source,
            "timing": "CUDA Graph replay" if launch == "graph" else "CUDA events, stream launches"}
