"""Trace -> schedule on a machine: tasks on the GPU (two streams) and the HMC engines, the four
HMC-FHE techniques each switchable, and a fluid simulation of concurrent tasks sharing resources.

Dependencies. A trace has no buffer names, so program order is the dependency: every op depends
on the op before it (a chain), except where the trace's stream markers say otherwise (the ops
between "fork" and "end_fork" run on the GPU's second stream after the ops before the fork; those
after "end_fork" run on the first stream concurrently; "join" waits for both: Backend::fork). The
techniques relax the chain only where the paper shows the data allows:

* (a) offload -- each op runs on the engine rule (1) picks (affinity.py); off: all on the GPU.
* (b) BaCP -- HMC kernels run on all cubes, each on its own residues (cost.hmc_cost); off: an
  HMC kernel runs on the one cube holding its ciphertext and fetches the rest over the links.
* (c) pipeline -- loose dependency 1: within a key switch (scopes ModUp / KeyMult / ModDown), the
  ModUp is the library's digit groups (one BConv + NTT each after the shared INTT); every KeyMult
  op is split into one part per group, which waits only for its group, so InnerP of group g runs
  on the HMCs while the GPU does the ModUp of group g + 1; ModDown waits for the KeyMult ops
  issued before it. Loose dependency 2: a TensorP right before a key switch computes d2 (the key
  switch's input) first, and d0, d1 while the key switch runs.
* (d) tuning -- every op outside those pipelined stages (ModDown included) is split between the
  GPU and the HMCs when that is faster than either alone: by data in the ratio of their speeds
  (equation (2)), or for an (I)NTT in two phases (the HMCs do the first stages, whose butterflies
  stay inside a cube under BaCP; the GPU the rest), pipelined over the limbs.

Queues execute in order (like streams): "gpu" (first stream), "gpu2" (second stream), "hmc". A
task starts when its queue is free and its dependencies are done. Concurrent tasks share the
resources of cost.py; when their summed use of one exceeds it, all slow down by the same factor
(a fluid model: two latency-bound kernels overlap, two bandwidth-bound ones take turns).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

from .affinity import choose_engine
from .cost import Cost, gpu_cost, hmc_cost, l2_effective_bytes
from .errors import SimInputError
from .kernels import Work, work
from .machine import Machine
from .model import Model
from .trace import Trace

KS_STAGES = ("ModUp", "KeyMult", "ModDown")
QUEUES = ("gpu", "gpu2", "hmc")


@dataclass(frozen=True)
class Techniques:
    offload: bool = True
    bacp: bool = True
    pipeline: bool = True
    tuning: bool = True

    PRESETS = ("baseline", "serial", "pipe", "full")

    @staticmethod
    def preset(name: str) -> "Techniques":
        """The paper's Fig. 11 combinations: baseline (GPU only: use a GPU-only machine),
        serial (offload + BaCP), pipe (+ pipelining), full (+ kernel tuning)."""
        if name == "baseline":
            return Techniques(False, False, False, False)
        if name == "serial":
            return Techniques(True, True, False, False)
        if name == "pipe":
            return Techniques(True, True, True, False)
        if name == "full":
            return Techniques(True, True, True, True)
        raise SimInputError("techniques", "preset", f"unknown {name!r} (known: "
                            f"{', '.join(Techniques.PRESETS)})")

    @staticmethod
    def parse(text: str) -> "Techniques":
        """A preset name, or a comma list of offload, bacp, pipeline, tuning ("none" = none)."""
        if text in Techniques.PRESETS:
            return Techniques.preset(text)
        names = {x.strip() for x in text.split(",") if x.strip() and x.strip() != "none"}
        known = {"offload", "bacp", "pipeline", "tuning"}
        bad = names - known
        if bad:
            raise SimInputError("techniques", "techniques", f"unknown {sorted(bad)} (a preset "
                                f"{Techniques.PRESETS} or a list of {sorted(known)})")
        return Techniques(*(k in names for k in ("offload", "bacp", "pipeline", "tuning")))

    def label(self) -> str:
        for p in self.PRESETS:
            if p != "baseline" and Techniques.preset(p) == self:
                return p
        on = [k for k in ("offload", "bacp", "pipeline", "tuning") if getattr(self, k)]
        return "+".join(on) if on else "none"


@dataclass
class Task:
    id: int
    op_index: int
    kernel: str
    family: str
    cost: Cost
    deps: tuple[int, ...]
    queue: str
    part: str = ""
    start: float = math.nan
    end: float = math.nan

    @property
    def engine(self) -> str:
        return self.cost.engine


@dataclass
class Schedule:
    trace: str
    machine: Machine
    techniques: Techniques
    tasks: list[Task]
    makespan_us: float
    busy_us: dict[str, float]
    energy_j: dict[str, float]
    op_kernel: list[str] = field(default_factory=list)

    def per_kernel_us(self) -> dict[str, float]:
        """Per paper kernel: the summed execution time of its ops (an op split over both engines
        counts its longer part; the parts of a pipelined op add up; queueing is not counted)."""
        per_op: dict[tuple[int, str], float] = defaultdict(float)
        for t in self.tasks:
            key = (t.op_index, t.part.split("/")[0] if t.part.endswith(("/gpu", "/hmc")) else
                   t.part)
            d = t.end - t.start
            if t.part.endswith(("/gpu", "/hmc")):
                per_op[key] = max(per_op[key], d)
            else:
                per_op[key] += d
        out: dict[str, float] = defaultdict(float)
        for (i, _), d in per_op.items():
            out[self.op_kernel[i]] += d
        return dict(out)

    def per_family_us(self) -> dict[str, float]:
        """Per validation family: the summed task durations (GPU only: kernel time)."""
        out: dict[str, float] = defaultdict(float)
        for t in self.tasks:
            out[t.family] += t.end - t.start
        return dict(out)

    def utilization(self) -> dict[str, float]:
        return {e: (self.busy_us[e] / self.makespan_us if self.makespan_us > 0 else 0.0)
                for e in self.busy_us}

    def summary(self) -> dict:
        return {"trace": self.trace, "machine": self.machine.name,
                "techniques": self.techniques.label(), "time_us": self.makespan_us,
                "tasks": len(self.tasks), "busy_us": self.busy_us,
                "utilization": self.utilization(), "energy_j": self.energy_j}


# ---- building the tasks ------------------------------------------------------------------------


class _Builder:
    def __init__(self, m: Machine, model: Model, tech: Techniques, log_n: int,
                 stream: bool) -> None:
        self.m = m
        self.model = model
        self.tech = tech if m.hmc is not None else Techniques(False, False, False, False)
        self.log_n = log_n
        self.stream = stream
        self.tasks: list[Task] = []
        self.queues: dict[str, list[int]] = {q: [] for q in QUEUES}
        self.lane = "gpu"  # the GPU queue of the ops being issued (second stream in a fork)
        self.rho: list[tuple[float, float]] = []  # per op: L2 (read, write) residency
        self.prev_on_gpu = True  # whether the previous op's output is in the GPU's L2

    # -- costs
    def engine_for(self, w: Work) -> str:
        if not self.tech.offload:
            return "gpu"
        return choose_engine(w, self.m, self.model)

    def gcost(self, i: int, w: Work, **kw) -> Cost:
        rr, rw = self.rho[i]
        return gpu_cost(w, self.m, self.model, stream=self.stream,
                        rho_read=rr if self.prev_on_gpu else 0.0, rho_write=rw, **kw)

    def hcost(self, w: Work, **kw) -> Cost:
        return hmc_cost(w, self.m, self.model, bacp=self.tech.bacp, **kw)

    def cost(self, i: int, w: Work, engine: str, frac: float = 1.0) -> Cost:
        return self.gcost(i, w, frac=frac) if engine == "gpu" else self.hcost(w, frac=frac)

    def add(self, i: int, w: Work, c: Cost, deps, part: str = "") -> int:
        tid = len(self.tasks)
        q = self.lane if c.engine == "gpu" else "hmc"
        self.tasks.append(Task(tid, i, w.kernel, w.family, c, tuple(sorted(set(deps))), q, part))
        self.queues[q].append(tid)
        return tid

    # -- one op
    def whole(self, i: int, w: Work, deps) -> list[int]:
        e = self.engine_for(w)
        tid = self.add(i, w, self.cost(i, w, e), deps)
        self.prev_on_gpu = e == "gpu"
        return [tid]

    def chain_op(self, i: int, w: Work, deps) -> list[int]:
        """An op outside the pipelined stages: whole, or split by tuning."""
        if not (self.tech.tuning and self.m.hmc is not None):
            return self.whole(i, w, deps)
        split = self.best_split(i, w)
        if split is None:
            return self.whole(i, w, deps)
        g, h, part = split
        out = [self.add(i, w, g, deps, f"{part}/gpu"), self.add(i, w, h, deps, f"{part}/hmc")]
        self.prev_on_gpu = False
        return out

    def local_stages(self) -> int:
        """NTT stages whose butterflies stay inside one cube under BaCP (stride divisible by the
        number of cubes)."""
        n, h = 1 << self.log_n, self.m.hmc.cubes
        return sum(1 for k in range(self.log_n) if (n >> (k + 1)) % h == 0)

    def best_split(self, i: int, w: Work):
        """(gpu cost, hmc cost, label) of the best GPU/HMC split of ``w``, or None when neither
        beats the faster engine alone."""
        t_g = self.gcost(i, w).us
        t_h = self.hcost(w).us
        alone = min(t_g, t_h)
        best = None
        if w.family == "NTT":
            if not self.tech.bacp:
                return None
            limbs = max(1.0, w.words_out / (1 << self.log_n))
            for s1 in range(1, self.local_stages() + 1):
                sigma = s1 / self.log_n
                h = self.hcost(w, instr_frac=sigma)
                passes = math.ceil(w.passes * (1.0 - sigma) - 1e-9)
                if passes < 1:
                    continue
                g = self.gcost(i, w, passes=passes, instr_frac=1.0 - sigma)
                fill = h.us / limbs  # the GPU's phase starts after the first limb's phase 1
                g = replace(g, us=g.us + fill)
                t = max(g.us, h.us)
                if t < alone and (best is None or t < best[3]):
                    best = (g, h, f"ntt-2phase s1={s1}", t)
        else:
            phi = t_g / (t_g + t_h)  # equation (2): data in the ratio of the two speeds
            g = self.gcost(i, w, frac=1.0 - phi)
            h = self.hcost(w, frac=phi)
            t = max(g.us, h.us)
            if t < alone:
                best = (g, h, f"split {100 * phi:.0f}% hmc", t)
        return None if best is None else best[:3]

    def crosses_engines(self, works: list[Work], stages: list[str]) -> bool:
        """Whether a key switch's ModUp and KeyMult run on different engines: only then does
        splitting KeyMult per digit group let the two overlap (on one engine it only adds
        launches)."""
        up = {self.engine_for(w) for w, s in zip(works, stages) if s == "ModUp"}
        km = {self.engine_for(w) for w, s in zip(works, stages) if s == "KeyMult"}
        return bool(up) and bool(km) and up != km

    # -- a key switch, pipelined (loose dependency 1)
    def key_switch(self, idx: list[int], works: list[Work], stages: list[str], deps,
                   d01: int | None) -> list[int]:
        modup = [k for k, s in enumerate(stages) if s == "ModUp"]
        keymult = [k for k, s in enumerate(stages) if s == "KeyMult"]
        moddown = [k for k, s in enumerate(stages) if s == "ModDown"]
        # digit groups: after the shared prologue (INTT), each BConv opens a group that its NTT
        # (and anything up to the next BConv) completes
        groups: list[list[int]] = []
        prologue: list[int] = []
        for k in modup:
            if works[k].family == "BConv":
                groups.append([k])
            elif groups:
                groups[-1].append(k)
            else:
                prologue.append(k)
        if not groups:
            groups = [prologue]
            prologue = []
        prev = list(deps)
        for k in prologue:
            prev = self.whole(idx[k], works[k], prev)
        group_end: list[list[int]] = []
        for grp in groups:
            for k in grp:
                prev = self.whole(idx[k], works[k], prev)
            group_end.append(prev)
        weight = [sum(works[k].words_out for k in grp if works[k].family == "NTT") or 1.0
                  for grp in groups]
        total = sum(weight)
        parts_of: dict[int, list[int]] = defaultdict(list)
        last_part: dict[str, int | None] = {"gpu": None, "hmc": None}
        for g, _grp in enumerate(groups):
            for k in keymult:
                w = works[k]
                e = self.engine_for(w)
                c = self.cost(idx[k], w, e, frac=weight[g] / total)
                d = list(group_end[g])
                if last_part[e] is not None:
                    d.append(last_part[e])
                tid = self.add(idx[k], w, c, d, f"group {g + 1}/{len(groups)}")
                last_part[e] = tid
                parts_of[k].append(tid)
        self.prev_on_gpu = all(self.engine_for(works[k]) == "gpu" for k in keymult)
        prev = group_end[-1]
        for k in moddown:
            before = [t for km in keymult if km < k for t in parts_of[km]]
            prev = self.chain_op(idx[k], works[k], list(prev) + before)
        exit_ = list(prev) + [t for km in keymult for t in parts_of[km]]
        if d01 is not None:
            exit_.append(d01)
        return exit_


def _parent(scope: str) -> str:
    return scope.rsplit("/", 1)[0] if "/" in scope else ""


def _segments(ops, stages: list[str]):
    """("op", i), ("mark", i) outside key switches, and ("ks", [i...]) for each key switch
    (markers inside it included)."""
    i, n = 0, len(ops)
    while i < n:
        if ops[i].is_marker or stages[i] not in KS_STAGES:
            yield ("mark" if ops[i].is_marker else "op"), i
            i += 1
            continue
        parent = _parent(ops[i].scope)
        run = [i]
        last_stage = stages[i]
        j = i + 1
        while j < n:
            if ops[j].is_marker:
                # a marker belongs to the key switch when a key-switch op of it follows
                k = j
                while k < n and ops[k].is_marker:
                    k += 1
                if k < n and stages[k] in KS_STAGES and _parent(ops[k].scope) == parent and not (
                        stages[k] == "ModUp" and last_stage != "ModUp"):
                    run.extend(range(j, k))
                    j = k
                    continue
                break
            if stages[j] not in KS_STAGES or _parent(ops[j].scope) != parent or (
                    stages[j] == "ModUp" and last_stage != "ModUp"):
                break
            run.append(j)
            last_stage = stages[j]
            j += 1
        yield "ks", run
        i = j


def _tensor_parts(w: Work) -> tuple[Work, Work]:
    """TensorP split for loose dependency 2: d2 = a1 b1 (reads 2 of 4 inputs, writes 1 of 3
    outputs, 1 of 4 products) first; then d0, d1 (reads all 4, writes 2, 3 products)."""
    d2 = replace(w, bytes=w.read_bytes / 2 + w.write_bytes / 3, read_bytes=w.read_bytes / 2,
                 write_bytes=w.write_bytes / 3, instr=w.instr / 4, words_out=w.words_out / 3,
                 words=w.words * 3 / 7)
    d01 = replace(w, bytes=w.read_bytes + w.write_bytes * 2 / 3, write_bytes=w.write_bytes * 2 / 3,
                  instr=w.instr * 3 / 4, words_out=w.words_out * 2 / 3, words=w.words * 6 / 7)
    return d2, d01


def _residency(ops, works, l2: float) -> list[tuple[float, float]]:
    """Per op: (fraction of its data reads, fraction of its writes) served by the L2, assuming
    each op reads what the op before it wrote while that fits the L2 (a chain)."""
    real = [k for k, o in enumerate(ops) if not o.is_marker]
    carry = {}
    prev = None
    for k in real:
        carry[k] = 0.0 if prev is None else min(l2, works[prev].write_bytes)
        prev = k
    out = [(0.0, 0.0)] * len(ops)
    for pos, k in enumerate(real):
        w = works[k]
        rr = min(1.0, carry[k] / w.read_bytes) if w.read_bytes > 0 else 0.0
        nxt = real[pos + 1] if pos + 1 < len(real) else None
        rw = min(1.0, carry[nxt] / w.write_bytes) if (nxt is not None and w.write_bytes > 0) \
            else 0.0
        out[k] = (rr, rw)
    return out


def build(trace: Trace, m: Machine, model: Model, tech: Techniques, launch: str = "graph",
          choose: bool = True):
    """The tasks and queues of ``trace``. With both pipelining and tuning on, each key switch
    is either pipelined or tuned op by op, whichever its own schedule (simulated alone) finds
    faster (``choose``; the paper's framework leaves the pipelined stages untuned)."""
    memo: dict[tuple, bool] = {}

    def _ks_pipelines(b: _Builder, run: list[int]) -> bool:
        real = [k for k in run if not ops[k].is_marker]
        if not b.crosses_engines([works[k] for k in real], [stages[k] for k in real]):
            return False
        if not (choose and b.tech.tuning):
            return True
        key = tuple((ops[k].op, ops[k].stage, ops[k].limbs, ops[k].bytes_read, ops[k].macs)
                    for k in real)
        if key not in memo:
            sub = Trace(meta={"n": trace.n}, ops=[ops[k] for k in real], source="key switch")
            t_pipe = simulate(sub, m, model, b.tech, launch, _choose=False).makespan_us
            t_tune = simulate(sub, m, model, replace(b.tech, pipeline=False), launch,
                              _choose=False).makespan_us
            memo[key] = t_pipe <= t_tune
        return memo[key]

    if launch not in ("graph", "stream"):
        raise SimInputError("simulate", "launch", f"must be 'graph' or 'stream', got {launch!r}")
    ops = trace.expanded()
    b = _Builder(m, model, tech, trace.log_n, stream=launch == "stream")
    works = [None if o.is_marker else work(o, model) for o in ops]
    b.rho = _residency(ops, works, l2_effective_bytes(m, model))
    stages = [o.stage for o in ops]
    segs = list(_segments(ops, stages))
    pipeline = b.tech.pipeline
    prev: list[int] = []
    fork_base: list[int] | None = None
    branch_end: list[int] | None = None

    def marker(k: int) -> None:
        nonlocal prev, fork_base, branch_end
        name = ops[k].op
        if name == "fork":
            fork_base, branch_end = list(prev), None
            b.lane = "gpu2"
        elif name == "end_fork" and fork_base is not None:
            branch_end = list(prev)
            prev = list(fork_base)
            b.lane = "gpu"
        elif name == "join" and fork_base is not None:
            prev = list(prev) + (branch_end if branch_end is not None else list(fork_base))
            fork_base, branch_end = None, None
            b.lane = "gpu"

    s = 0
    while s < len(segs):
        kind, val = segs[s]
        nxt = segs[s + 1] if s + 1 < len(segs) else None
        if (kind == "op" and pipeline and ops[val].op == "tensor" and nxt is not None
                and nxt[0] == "ks" and _ks_pipelines(b, nxt[1])
                and b.engine_for(works[val]) != b.engine_for(
                    works[next(k for k in nxt[1] if stages[k] == "ModUp")])):
            # loose dependency 2: d2 first, the key switch starts after it, d0/d1 alongside
            d2w, d01w = _tensor_parts(works[val])
            e = b.engine_for(works[val])
            t2 = b.add(val, d2w, b.cost(val, d2w, e), prev, "d2")
            t01 = b.add(val, d01w, b.cost(val, d01w, e), prev + [t2], "d0,d1")
            b.prev_on_gpu = e == "gpu"
            run = [k for k in nxt[1] if not ops[k].is_marker]
            prev = b.key_switch(run, [works[k] for k in run], [stages[k] for k in run], [t2], t01)
            s += 2
            continue
        if kind == "mark":
            marker(val)
        elif kind == "op":
            prev = b.chain_op(val, works[val], prev)
        elif pipeline and _ks_pipelines(b, val):
            run = [k for k in val if not ops[k].is_marker]
            prev = b.key_switch(run, [works[k] for k in run], [stages[k] for k in run], prev, None)
        else:
            for k in val:
                if ops[k].is_marker:
                    marker(k)
                else:
                    prev = b.chain_op(k, works[k], prev)
        s += 1
    op_kernel = [w.kernel if w is not None else "" for w in works]
    return b, op_kernel


# ---- simulating ---------------------------------------------------------------------------------


def _simulate(tasks: list[Task], queues: dict[str, list[int]]) -> float:
    done = [False] * len(tasks)
    head = {q: 0 for q in QUEUES}
    running: dict[str, list] = {}  # queue -> [task id, remaining fraction]
    t = 0.0
    remaining = len(tasks)
    while remaining:
        for q in QUEUES:
            if q in running or head[q] >= len(queues[q]):
                continue
            tid = queues[q][head[q]]
            if all(done[d] for d in tasks[tid].deps):
                running[q] = [tid, 1.0]
                tasks[tid].start = t
                head[q] += 1
        if not running:
            raise RuntimeError("schedule deadlock: no queue can start its next task")
        rate = 1.0
        if len(running) > 1:
            use: dict[str, float] = defaultdict(float)
            for tid, _ in running.values():
                c = tasks[tid].cost
                if c.us > 0:
                    for r, d in c.demand.items():
                        use[r] += min(1.0, d / c.us)
            peak = max(use.values(), default=0.0)
            if peak > 1.0:
                rate = 1.0 / peak
        dt = min(r[1] * tasks[r[0]].cost.us / rate for r in running.values())
        t += dt
        for q in list(running):
            tid, left = running[q]
            us = tasks[tid].cost.us
            left = left - (dt * rate / us if us > 0 else 1.0)
            if left <= 1e-9:
                tasks[tid].end = t
                done[tid] = True
                remaining -= 1
                del running[q]
            else:
                running[q][1] = left
    return t


def simulate(trace: Trace, m: Machine, model: Model, tech: Techniques | None = None,
             launch: str = "graph", _choose: bool = True) -> Schedule:
    """The schedule of ``trace`` on ``m`` with ``tech`` (default: all four techniques; on a
    machine without HMC none applies). ``launch``: "graph" (kernels replayed from a CUDA Graph,
    as a bootstrapping is timed) or "stream" (launched one by one, as theo_bench times ops)."""
    tech = tech or Techniques()
    b, op_kernel = build(trace, m, model, tech, launch, choose=_choose)
    makespan = _simulate(b.tasks, b.queues)
    busy = {"gpu": 0.0, "hmc": 0.0}
    dyn = 0.0
    link_bytes = 0.0
    for task in b.tasks:
        busy[task.engine] += task.end - task.start
        dyn += task.cost.dynamic_pj
        link_bytes += task.cost.link_bytes
    sec = makespan * 1e-6
    static = m.gpu.static_w * sec
    idle = 0.0
    if m.hmc is not None:
        h = m.hmc
        static += h.cubes * h.static_w_per_cube * sec
        capacity_bits = h.cubes * h.link_bw_gbps * 1e9 * 8 * sec
        idle = max(0.0, capacity_bits - link_bytes * 8) * h.pj_per_bit_link_idle * 1e-12
    energy = {"dynamic": dyn * 1e-12, "static": static, "link_idle": idle}
    energy["total"] = sum(energy.values())
    return Schedule(trace=trace.name, machine=m, techniques=b.tech, tasks=b.tasks,
                    makespan_us=makespan, busy_us=busy, energy_j=energy, op_kernel=op_kernel)
