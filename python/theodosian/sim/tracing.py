"""Tracing a run from Python: the op trace of whatever runs inside the ``with`` block.

    import theodosian as th
    from theodosian.sim import tracing

    ctx = th.Context("bootparam_40", backend="cpu", trace=True)   # recorder wrapped, off
    ...keys, ciphertexts...
    with tracing.record(ctx, "my-workload") as rec:
        y = x * x + 0.5 * x << 3                                  # any library calls
    rec.trace.save("my-workload.json")                            # python -m theodosian.sim ...

Needs the compiled extension (theodosian._core). Ops are recorded from the thread that opened
the block (the scope is thread-local, as in the library).
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from .trace import Trace, from_json


@dataclass
class Recording:
    label: str
    trace: Trace | None = None


@contextmanager
def record(ctx, label: str = "trace", workload: str | None = None) -> Iterator[Recording]:
    """Records every backend op of ``ctx`` (a theodosian.Context made with trace=True) inside
    the block; ``.trace`` holds the validated Trace afterwards. ``label`` becomes the scope the
    ops are recorded under (key-switch stages nest inside it: "label/ModUp", ...)."""
    rec = Recording(label)
    ctx._trace_begin(label)
    try:
        yield rec
    finally:
        doc = ctx._trace_end(workload or label)
    rec.trace = from_json(json.loads(doc), f"<trace {label}>")
