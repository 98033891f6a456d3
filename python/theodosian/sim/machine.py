"""Machine descriptions: a GPU, optionally with HMC (or HBM-PIM-like) near-memory engines.

A machine file is a JSON document (format "theo-machine", version 1; docs/sim.md has every field):

    {"format": "theo-machine", "version": 1, "name": "...", "description": "...",
     "gpu": {"sms": 40, "clock_ghz": 1.29, "int_ops_per_clk_per_sm": 64, ...},
     "hmc": {"cubes": 4, "internal_bw_gbps": 320, "link_bw_gbps": 120, ...}}

Without "hmc" the GPU has its own memory ("gpu.mem_bw_gbps"). With "hmc" the cubes ARE the GPU's
memory: the GPU reaches them through their links, so its bandwidth is cubes x link_bw_gbps and
"gpu.mem_bw_gbps" must not be given. Bundled machines live in theodosian/sim/machines/ and are
found by name (``paper-gpu-hmc``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from .documents import bundled_names, find_document, package_file, read_json, require_header
from .errors import SimInputError, require_number, require_object, require_str

FORMAT = "theo-machine"
VERSION = 1


@dataclass(frozen=True)
class GPU:
    name: str
    sms: int
    clock_ghz: float
    int_ops_per_clk_per_sm: float   # thread-level 32-bit integer instructions per cycle per SM
    mem_bw_gbps: float              # memory (or external link) bandwidth, read + write, GB/s
    mem_latency_ns: float           # loaded DRAM latency (Little's law: bytes in flight / latency)
    max_threads_per_sm: int
    bytes_in_flight_per_thread: float
    launch_gap_us: float            # per kernel: GPU-side gap between dependent kernels (graph)
    stream_launch_us: float         # per kernel: least time of a kernel launched on a stream
    l2_mib: float
    l2_bw_gbps: float               # L2 read + write bandwidth, GB/s
    pj_per_int_op: float            # dynamic energy per thread integer instruction
    pj_per_bit_mem: float           # per bit moved to or from memory (own memory only)
    static_w: float                 # static + idle power of the chip

    @property
    def int_ops_per_us(self) -> float:
        return self.sms * self.clock_ghz * 1e3 * self.int_ops_per_clk_per_sm

    @property
    def max_threads(self) -> int:
        return self.sms * self.max_threads_per_sm


@dataclass(frozen=True)
class HMC:
    cubes: int
    internal_bw_gbps: float         # per cube: vaults to the cube's logic layer
    link_bw_gbps: float             # per cube: its links to the GPU (read + write)
    intercube_bw_gbps: float        # per cube: to the other cubes
    link_latency_ns: float          # one inter-cube transfer
    local_latency_ns: float         # an engine's access to its own cube's DRAM
    engine_sms: int                 # per cube
    engine_clock_ghz: float
    engine_int_ops_per_clk_per_sm: float
    engine_max_threads_per_sm: int
    launch_gap_us: float            # per kernel offloaded (command packet + synchronization)
    pj_per_bit_internal: float      # DRAM access inside a cube
    pj_per_bit_link: float          # SerDes link, per bit sent
    pj_per_bit_link_idle: float     # idle link, per bit slot it could have carried
    pj_per_int_op: float
    static_w_per_cube: float

    @property
    def int_ops_per_us_per_cube(self) -> float:
        return self.engine_sms * self.engine_clock_ghz * 1e3 * self.engine_int_ops_per_clk_per_sm

    @property
    def internal_bytes_per_us(self) -> float:
        """All cubes together."""
        return self.cubes * self.internal_bw_gbps * 1e3


@dataclass(frozen=True)
class Machine:
    name: str
    description: str
    gpu: GPU
    hmc: HMC | None = None
    source: str = ""

    @property
    def gpu_mem_bytes_per_us(self) -> float:
        if self.hmc is not None:
            return self.hmc.cubes * self.hmc.link_bw_gbps * 1e3
        return self.gpu.mem_bw_gbps * 1e3

    @property
    def peak_int_ops_per_us(self) -> float:
        p = self.gpu.int_ops_per_us
        if self.hmc is not None:
            p += self.hmc.cubes * self.hmc.int_ops_per_us_per_cube
        return p

    def with_cubes(self, cubes: int) -> "Machine":
        """The same machine with another number of cubes (each with its own links, so the GPU's
        external bandwidth scales with them)."""
        if self.hmc is None:
            raise SimInputError(self.name, "hmc", "the machine has no HMC cubes to rescale")
        if cubes < 1:
            raise SimInputError(self.name, "hmc.cubes", f"must be >= 1, got {cubes}")
        return replace(self, name=f"{self.name}-x{cubes}", hmc=replace(self.hmc, cubes=cubes))

    def gpu_only(self) -> "Machine":
        """The GPU side alone, with the cubes' links as its memory bandwidth (no engines)."""
        if self.hmc is None:
            return self
        g = replace(self.gpu, mem_bw_gbps=self.gpu_mem_bytes_per_us / 1e3)
        return Machine(name=f"{self.name}-gpu-side", description="GPU side only", gpu=g)

    def summary(self) -> str:
        g = self.gpu
        s = (f"{self.name}: GPU {g.sms} SMs x {g.int_ops_per_clk_per_sm:g} int/clk @ "
             f"{g.clock_ghz:g} GHz = {g.int_ops_per_us / 1e6:.2f} Tint/s, memory "
             f"{self.gpu_mem_bytes_per_us / 1e6:.3f} TB/s")
        if self.hmc is not None:
            h = self.hmc
            s += (f"; {h.cubes} cubes x ({h.engine_sms} SMs = "
                  f"{h.int_ops_per_us_per_cube / 1e6:.3f} Tint/s, internal "
                  f"{h.internal_bw_gbps:g} GB/s, link {h.link_bw_gbps:g} GB/s); peak "
                  f"{self.peak_int_ops_per_us / 1e6:.2f} Tint/s")
        return s

    def to_json(self) -> dict:
        g = self.gpu
        gd = {k: getattr(g, k) for k in GPU.__dataclass_fields__}
        if self.hmc is not None:
            gd.pop("mem_bw_gbps")
        d: dict[str, Any] = {"format": FORMAT, "version": VERSION, "name": self.name,
                             "description": self.description, "gpu": gd}
        if self.hmc is not None:
            d["hmc"] = {k: getattr(self.hmc, k) for k in HMC.__dataclass_fields__}
        return d


def _gpu(source: str, d: dict, with_hmc: bool) -> GPU:
    p = "gpu"
    if with_hmc and "mem_bw_gbps" in d:
        raise SimInputError(source, "gpu.mem_bw_gbps", "must not be given with 'hmc': the GPU's "
                            "memory is the cubes, reached through hmc.cubes x hmc.link_bw_gbps")
    num = lambda k, **kw: require_number(source, d, k, p, **kw)  # noqa: E731
    return GPU(
        name=require_str(source, d, "name", p, default="gpu"),
        sms=num("sms", integer=True, positive=True),
        clock_ghz=num("clock_ghz", positive=True),
        int_ops_per_clk_per_sm=num("int_ops_per_clk_per_sm", positive=True),
        mem_bw_gbps=0.0 if with_hmc else num("mem_bw_gbps", positive=True),
        mem_latency_ns=num("mem_latency_ns", positive=True),
        max_threads_per_sm=num("max_threads_per_sm", integer=True, positive=True, default=2048),
        bytes_in_flight_per_thread=num("bytes_in_flight_per_thread", positive=True, default=16),
        launch_gap_us=num("launch_gap_us", minimum=0),
        stream_launch_us=num("stream_launch_us", minimum=0,
                             default=require_number(source, d, "launch_gap_us", p, minimum=0)),
        l2_mib=num("l2_mib", minimum=0, default=0),
        l2_bw_gbps=num("l2_bw_gbps", positive=True),
        pj_per_int_op=num("pj_per_int_op", minimum=0),
        pj_per_bit_mem=num("pj_per_bit_mem", minimum=0, default=0.0 if with_hmc else None),
        static_w=num("static_w", minimum=0),
    )


def _hmc(source: str, d: dict) -> HMC:
    p = "hmc"
    num = lambda k, **kw: require_number(source, d, k, p, **kw)  # noqa: E731
    return HMC(
        cubes=num("cubes", integer=True, positive=True),
        internal_bw_gbps=num("internal_bw_gbps", positive=True),
        link_bw_gbps=num("link_bw_gbps", positive=True),
        intercube_bw_gbps=num("intercube_bw_gbps", positive=True),
        link_latency_ns=num("link_latency_ns", minimum=0),
        local_latency_ns=num("local_latency_ns", positive=True, default=40),
        engine_sms=num("engine_sms", integer=True, positive=True),
        engine_clock_ghz=num("engine_clock_ghz", positive=True),
        engine_int_ops_per_clk_per_sm=num("engine_int_ops_per_clk_per_sm", positive=True),
        engine_max_threads_per_sm=num("engine_max_threads_per_sm", integer=True, positive=True,
                                      default=2048),
        launch_gap_us=num("launch_gap_us", minimum=0),
        pj_per_bit_internal=num("pj_per_bit_internal", minimum=0),
        pj_per_bit_link=num("pj_per_bit_link", minimum=0),
        pj_per_bit_link_idle=num("pj_per_bit_link_idle", minimum=0, default=0),
        pj_per_int_op=num("pj_per_int_op", minimum=0),
        static_w_per_cube=num("static_w_per_cube", minimum=0),
    )


def from_json(doc: Any, source: str = "<machine>") -> Machine:
    """Validates a parsed machine document; SimInputError names the first wrong field."""
    require_header(doc, source, FORMAT, VERSION)
    hmc_d = require_object(source, doc, "hmc", "", optional=True)
    gpu = _gpu(source, require_object(source, doc, "gpu", ""), hmc_d is not None)
    known = {"format", "version", "name", "description", "source", "gpu", "hmc", "notes"}
    for k in doc:
        if k not in known:
            raise SimInputError(source, k, f"unknown field (known: {', '.join(sorted(known))})")
    return Machine(name=require_str(source, doc, "name", ""),
                   description=require_str(source, doc, "description", "", default=""),
                   gpu=gpu, hmc=_hmc(source, hmc_d) if hmc_d is not None else None,
                   source=require_str(source, doc, "source", "", default=""))


def load_machine(path: str | os.PathLike) -> Machine:
    source = os.fspath(path)
    return from_json(read_json(source), source)


def machines_dir() -> str:
    return package_file("machines")


def bundled_machines() -> list[str]:
    return bundled_names(machines_dir())


def find_machine(name_or_path: str | os.PathLike) -> Machine:
    """A machine file path, or the name of a bundled machine."""
    return find_document(name_or_path, machines_dir(), "machine", load_machine)
