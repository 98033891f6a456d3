"""theodosian.sim: a GPU + near-memory (HMC / HBM-PIM) execution simulator driven by the
library's op traces -- the HMC-FHE study (Chen et al., TCAD 2024) on this library's own kernels.

Pure Python (numpy, matplotlib for plots); it imports without the compiled extension.

    from theodosian import sim
    tr = sim.find_trace("bootparam_40-boot")            # or sim.load_trace("my.json")
    base = sim.simulate(tr, sim.find_machine("paper-baseline"), sim.load_model())
    full = sim.simulate(tr, sim.find_machine("paper-gpu-hmc"), sim.load_model(),
                        sim.Techniques.preset("full"))
    print(base.makespan_us / full.makespan_us)

Command line: ``python -m theodosian.sim --help`` (docs/sim.md).
"""

from __future__ import annotations

from .affinity import cai, choose_engine, format_table, table
from .errors import SimInputError
from .kernels import FAMILIES, PAPER_KERNELS, family, paper_kernel, work
from .machine import Machine, bundled_machines, find_machine, load_machine
from .model import Model, load_model
from .schedule import Schedule, Techniques, simulate
from .trace import Op, Trace, find_trace, load_trace

__all__ = [
    "FAMILIES", "PAPER_KERNELS", "Machine", "Model", "Op", "Schedule", "SimInputError",
    "Techniques", "Trace", "choose_engine", "bundled_machines", "cai", "family", "find_machine",
    "find_trace", "format_table", "load_machine", "load_model", "load_trace", "paper_kernel",
    "simulate", "table", "work",
]
