"""Op traces: the "theo-trace" v1 JSON document (docs/trace-format.md).

A trace is the library's backend calls in issue order, each with its scope path and modelled cost
(theo/model/traffic.h: bytes read and written once, tables, core modular multiply-adds). The C++
tool ``theo_trace`` and :func:`theodosian.sim.tracing.record` write it; :func:`load_trace` reads
and validates it (errors name the field).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from .documents import find_document, package_file, read_json, require_header
from .errors import SimInputError, require_number, require_object, require_str

FORMAT = "theo-trace"
VERSION = 1

# Every backend op the recorder names (src/model/recording_backend.cpp). A trace with another name
# is rejected: the simulator would not know the kernel's family.
KNOWN_OPS = frozenset({
    "upload", "download", "copy", "fill_zero", "sample_uniform",
    "ntt", "intt", "ntt_sub_mul_scalar",
    "bconv", "bconv_matmul",
    "add", "sub", "add_batch", "sub_batch", "neg", "add_scalar",
    "mul", "mul_add", "mul_scalar", "mul_scalar_add", "sub_mul_scalar", "mul_scalar_sum",
    "tensor", "mul_monomial",
    "key_mult", "key_mult_add_scaled", "key_mult_automorphed", "key_mult_rotations",
    "key_mult_sums",
    "automorphism", "automorphism_sum",
    "graph_replay",
    # stream markers (no cost): the ops after "fork" run on a second stream, those after
    # "end_fork" on the first one concurrently, and those after "join" wait for both
    "fork", "end_fork", "join",
})


@dataclass(frozen=True)
class Op:
    """One backend call (``count`` identical consecutive calls when > 1)."""

    scope: str
    op: str
    limbs: int
    n: int
    bytes_read: float
    bytes_written: float
    macs: float
    polys: int = 0
    table_bytes: float = 0.0
    count: int = 1

    @property
    def is_marker(self) -> bool:
        return self.op in ("fork", "end_fork", "join")

    @property
    def stage(self) -> str:
        """The last scope component (e.g. "ModUp"), "" outside every scope."""
        return self.scope.rsplit("/", 1)[-1]

    def to_json(self) -> dict:
        d = {"scope": self.scope, "op": self.op, "polys": self.polys, "limbs": self.limbs,
             "n": self.n, "bytes_read": _num(self.bytes_read),
             "bytes_written": _num(self.bytes_written), "table_bytes": _num(self.table_bytes),
             "macs": _num(self.macs)}
        if self.count != 1:
            d["count"] = self.count
        return d


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else x


@dataclass
class Trace:
    """A validated trace: ``meta`` (free-form facts, ``n`` required) and ``ops`` in issue order."""

    meta: dict[str, Any]
    ops: list[Op]
    source: str = "<trace>"

    @property
    def n(self) -> int:
        return int(self.meta["n"])

    @property
    def log_n(self) -> int:
        return self.n.bit_length() - 1

    @property
    def name(self) -> str:
        w = self.meta.get("workload", "trace")
        p = self.meta.get("preset")
        return f"{p}-{w}" if p else str(w)

    def expanded(self) -> list[Op]:
        """The ops with every ``count`` > 1 unrolled into single calls."""
        out: list[Op] = []
        for o in self.ops:
            if o.count == 1:
                out.append(o)
            else:
                out.extend([replace(o, count=1)] * o.count)
        return out

    def totals(self) -> dict[str, float]:
        t = {"calls": 0, "bytes": 0.0, "table_bytes": 0.0, "macs": 0.0}
        for o in self.ops:
            if o.is_marker:
                continue
            t["calls"] += o.count
            t["bytes"] += o.count * (o.bytes_read + o.bytes_written)
            t["table_bytes"] += o.count * o.table_bytes
            t["macs"] += o.count * o.macs
        return t

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "meta": self.meta,
                "ops": [o.to_json() for o in self.ops]}

    def save(self, path: str | os.PathLike) -> None:
        """Writes the document, one op per line (as theo_trace does)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write('{"format": "%s", "version": %d,\n"meta": %s,\n"ops": [' %
                    (FORMAT, VERSION, json.dumps(self.meta)))
            for i, o in enumerate(self.ops):
                f.write(("\n" if i == 0 else ",\n") + json.dumps(o.to_json()))
            f.write("\n]}\n")


def concat(name: str, parts: Iterable[tuple[Trace, int, str]], meta: dict | None = None) -> Trace:
    """A trace made of other traces: each (trace, repeats, scope prefix) in order. Consecutive
    repeats of a whole trace are unrolled (the scheduler needs every call)."""
    ops: list[Op] = []
    n = None
    for tr, reps, prefix in parts:
        if n is None:
            n = tr.n
        elif tr.n != n:
            raise SimInputError(name, "meta.n", f"cannot concatenate traces of N = {n} and {tr.n}")
        body = [replace(o, scope=f"{prefix}/{o.scope}" if prefix and o.scope else (prefix or o.scope))
                for o in tr.ops]
        for _ in range(reps):
            ops.extend(body)
    m = {"n": n or 0, "workload": name, "synthetic": True}
    if meta:
        m.update(meta)
    return Trace(meta=m, ops=ops, source=name)


def from_json(doc: Any, source: str = "<trace>") -> Trace:
    """Validates a parsed trace document; SimInputError names the first wrong field."""
    require_header(doc, source, FORMAT, VERSION)
    meta = require_object(source, doc, "meta", "")
    n = require_number(source, meta, "n", "meta", integer=True, positive=True)
    if n & (n - 1):
        raise SimInputError(source, "meta.n", f"must be a power of two, got {n}")
    if "ops" not in doc:
        raise SimInputError(source, "ops", "missing (a list of ops is required)")
    raw = doc["ops"]
    if not isinstance(raw, list):
        raise SimInputError(source, "ops", f"must be a list, got {type(raw).__name__}")
    ops: list[Op] = []
    for i, o in enumerate(raw):
        path = f"ops[{i}]"
        if not isinstance(o, dict):
            raise SimInputError(source, path, f"must be an object, got {type(o).__name__}")
        name = require_str(source, o, "op", path)
        if name not in KNOWN_OPS:
            raise SimInputError(source, f"{path}.op", f"unknown backend op {name!r} (known: "
                                f"{', '.join(sorted(KNOWN_OPS))})")
        scope = require_str(source, o, "scope", path, default="")
        on = require_number(source, o, "n", path, integer=True, minimum=0, default=n)
        if on not in (0, n):
            raise SimInputError(source, f"{path}.n", f"is {on}, the trace's meta.n is {n}")
        op = Op(scope=scope, op=name,
                limbs=require_number(source, o, "limbs", path, integer=True, minimum=0),
                n=n,
                bytes_read=require_number(source, o, "bytes_read", path, minimum=0),
                bytes_written=require_number(source, o, "bytes_written", path, minimum=0),
                macs=require_number(source, o, "macs", path, minimum=0),
                polys=require_number(source, o, "polys", path, integer=True, minimum=0, default=0),
                table_bytes=require_number(source, o, "table_bytes", path, minimum=0, default=0),
                count=require_number(source, o, "count", path, integer=True, minimum=1, default=1))
        if op.op != "graph_replay":
            ops.append(op)
    return Trace(meta=dict(meta), ops=ops, source=source)


def load_trace(path: str | os.PathLike) -> Trace:
    """Reads and validates a trace file."""
    source = os.fspath(path)
    return from_json(read_json(source), source)


def bundled_traces_dir() -> str:
    return package_file("traces")


def find_trace(name_or_path: str | os.PathLike) -> Trace:
    """A trace file path, or the name of a bundled trace (``bootparam_40-boot``)."""
    return find_document(name_or_path, bundled_traces_dir(), "trace", load_trace)
