"""Analytic time, resource use and energy of one kernel (or part of one) on the GPU or on the
HMC engines (docs/sim.md, "Cost model").

GPU:

    t = launches * (gap + kernel_fixed_f + run / launches)
        (launched on a stream: each launch takes at least stream_launch_us)
    run = max(memory_factor_f * max(t_dram, t_l2), compute_factor_f * t_issue)
    t_dram  = DRAM bytes / min(memory bandwidth, bytes in flight / memory latency)
    t_l2    = all global bytes (every pass) / L2 bandwidth
    t_issue = instructions / (SMs * clock * int32 lanes per SM)

* L2 residency decides the DRAM bytes: the part of an op's reads the previous op just wrote
  (``rho_read``), the part of its writes the next op reads back on chip (``rho_write``), and a
  second pass over data that fits the L2 (the two-kernel NTT) come from the L2; the L2 holds
  model.json's ``l2_effective_fraction`` of its size. A family's ``l2_read_reuse`` scales the
  first: 0 for KeyMult, whose Nsight DRAM bytes exceed the bytes it requests (the digits the NTT
  just wrote are gone by the time the key stream reaches them).
* Little's law: T threads (words written / words_per_thread_f) keep at most
  min(T, SMs * threads per SM) * bytes_in_flight_per_thread bytes in flight, so a kernel over a
  few limbs cannot reach the memory bandwidth.
* ``compute_factor_f`` / ``memory_factor_f`` are what the roofline does not see (the issue rate or
  bandwidth a family's kernels reach: dependent arithmetic, barriers, tensor-core tile shapes);
  ``kernel_fixed_f`` is what every kernel costs however small (ramp-up, the dependent chain of
  one block, drain). They are fitted per family on measured single-op times (calibrate.py).

HMC engines under BaCP (the coefficient index interleaved over the cubes: every cube does
1/cubes of every kernel on its own residues):

    t = gap + kernel_fixed_f + max(memory_factor_f * t_mem, compute_factor_f * t_issue)
        + t_remote
    t_mem = (bytes / cubes) / a cube's internal bandwidth;  t_issue = (instr / cubes) / its rate
    t_remote = remote bytes per cube / inter-cube bandwidth + link latency (when any)

Remote bytes: the words an automorphism gathers from other cubes (kernels.
automorphism_remote_fraction, ~1 - 1/cubes). Without BaCP a kernel runs on the one cube that holds
its ciphertext and fetches the (1 - 1/cubes) of its inputs the other cubes hold over the links.

Each cost also carries its demand on the shared resources (the microseconds it would hold each
at full capacity): "gpu_issue", "gpu_l2", "gpu_mem" (the GPU's memory or its links to the cubes),
"hmc_dram" (all cubes' DRAM: the GPU's accesses to the cubes land there too), "hmc_issue",
"intercube". The scheduler slows concurrent tasks when their summed use of one exceeds it.

Energy: instructions x pJ per op + bits x pJ per bit on their path (the GPU's own memory; in a
GPU-HMC machine a cube's DRAM plus the SerDes link; for an engine its cube's DRAM, plus links for
remote words).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .kernels import Work, automorphism_remote_fraction
from .machine import Machine
from .model import Model


@dataclass(frozen=True)
class Cost:
    engine: str              # "gpu" or "hmc"
    us: float                # standalone duration
    dram_bytes: float        # DRAM bytes (the GPU's own, or the cubes')
    link_bytes: float        # bytes over GPU <-> cube links and between cubes
    instr: float
    dynamic_pj: float
    demand: dict[str, float] = field(default_factory=dict)


def l2_effective_bytes(m: Machine, model: Model) -> float:
    return m.gpu.l2_mib * 1048576.0 * model.l2_effective_fraction


def gpu_cost(w: Work, m: Machine, model: Model, *, frac: float = 1.0,
             passes: float | None = None, instr_frac: float | None = None,
             stream: bool = False, rho_read: float = 0.0, rho_write: float = 0.0) -> Cost:
    """``frac`` of the kernel's data on the GPU; ``passes`` overrides the passes over the data,
    ``instr_frac`` the fraction of its instructions (a 2-phase NTT's GPU phase). ``stream``: the
    kernels are launched one by one (each takes at least gpu.stream_launch_us), not replayed
    from a graph (gpu.launch_gap_us between dependent kernels). ``rho_read`` / ``rho_write``:
    the fractions of its data reads / writes served by the L2 (see the module doc)."""
    g = m.gpu
    fam = model.family(w.family)
    p = w.passes if passes is None else passes
    one = w.bytes * frac
    l2 = l2_effective_bytes(m, model)
    rho_pass = min(1.0, l2 / one) if one > 0 else 1.0
    rho_read *= fam.get("l2_read_reuse", 1.0)
    rho_write *= fam.get("l2_write_reuse", 1.0)
    dram = (w.read_bytes * (1.0 - rho_read) + w.write_bytes * (1.0 - rho_write)
            + w.table_bytes * (1.0 - rho_pass)) * frac + max(0.0, p - 1.0) * one * (1.0 - rho_pass)
    every = one * p
    instr = w.instr * (frac if instr_frac is None else instr_frac * frac)
    threads = max(1.0, w.words_out * frac / fam["words_per_thread"])
    inflight = min(threads, g.max_threads) * g.bytes_in_flight_per_thread
    mem_bw = m.gpu_mem_bytes_per_us
    t_dram = dram / min(mem_bw, inflight / (g.mem_latency_ns * 1e-3))
    t_l2 = every / (g.l2_bw_gbps * 1e3)
    t_issue = instr / g.int_ops_per_us
    launches = w.launches if passes is None else max(1, math.ceil(p))
    run = max(fam["memory_factor"] * max(t_dram, t_l2), fam["compute_factor"] * t_issue)
    per = g.launch_gap_us + fam.get("kernel_fixed_us", 0.0) + run / launches
    if stream:
        per = max(g.stream_launch_us, per)
    t = launches * per
    demand = {"gpu_issue": t_issue, "gpu_l2": t_l2, "gpu_mem": dram / mem_bw}
    if m.hmc is None:
        pj = instr * g.pj_per_int_op + dram * 8 * g.pj_per_bit_mem
        return Cost("gpu", t, dram, 0.0, instr, pj, demand)
    h = m.hmc
    demand["hmc_dram"] = dram / h.internal_bytes_per_us
    pj = instr * g.pj_per_int_op + dram * 8 * (h.pj_per_bit_internal + h.pj_per_bit_link)
    return Cost("gpu", t, dram, dram, instr, pj, demand)


def hmc_cost(w: Work, m: Machine, model: Model, *, frac: float = 1.0, bacp: bool = True,
             instr_frac: float | None = None) -> Cost:
    """``frac`` of the kernel's data on the cubes (one pass over it); ``instr_frac`` as gpu_cost."""
    h = m.hmc
    if h is None:
        raise ValueError("hmc_cost on a machine without HMC")
    fam = model.family(w.family)
    b = w.bytes * frac
    instr = w.instr * (frac if instr_frac is None else instr_frac * frac)
    cubes = h.cubes if bacp else 1
    if bacp:
        remote = w.permuted_bytes * frac * automorphism_remote_fraction(w.log_n, h.cubes)
    else:
        remote = (w.read_bytes + w.table_bytes) * frac * (1.0 - 1.0 / h.cubes)
    threads = max(1.0, w.words_out * frac / cubes / fam["words_per_thread"])
    inflight = min(threads, h.engine_sms * h.engine_max_threads_per_sm) * 16.0
    bw = min(h.internal_bw_gbps * 1e3, inflight / (h.local_latency_ns * 1e-3))
    t_mem = b / cubes / bw
    t_issue = instr / cubes / h.int_ops_per_us_per_cube
    t_remote = 0.0
    if remote > 0:
        t_remote = remote / cubes / (h.intercube_bw_gbps * 1e3) + h.link_latency_ns * 1e-3
    t = (h.launch_gap_us + fam.get("kernel_fixed_us", 0.0)
         + max(fam["memory_factor"] * t_mem, fam["compute_factor"] * t_issue) + t_remote)
    demand = {"hmc_dram": b / h.internal_bytes_per_us,
              "hmc_issue": instr / (h.cubes * h.int_ops_per_us_per_cube),
              "intercube": remote / (h.cubes * h.intercube_bw_gbps * 1e3)}
    pj = instr * h.pj_per_int_op + b * 8 * h.pj_per_bit_internal + remote * 8 * h.pj_per_bit_link
    return Cost("hmc", t, b, remote, instr, pj, demand)
