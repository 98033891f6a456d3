"""Measured GPU data the simulator is fitted and validated against (bench/results formats):

* theo_bench JSON records (one object per line, or the "runs" files of earlier sessions):
  ring-level single ops (ntt, intt, bconv, bconv_modup, key_mult, add, mul, tensor, ...) and
  scheme ops (keyswitch, hmult, hrot, ...), CUDA-event medians;
* Nsight Compute per-kernel times: bench/ncu_stages.py JSON, or a raw ``ncu --csv --page raw``
  file (kernel names and gpu__time_duration.sum) of one op or one whole bootstrapping;
* theo_boot_demo output ("bootstrap r: 16.4 ms, ...").

Ring cases become trace ops with the same shapes as bench/ring_cases.cpp and the same modelled
cost as src/model/traffic_model.cpp.
"""

from __future__ import annotations

import csv
import json
import math
import re
import statistics
from collections import defaultdict

from .errors import SimInputError
from .trace import Op

# Ring-level cases of bench/ring_cases.cpp the simulator can rebuild, by family.
RING_CASES = {
    "ntt": "NTT", "intt": "NTT", "bconv": "BConv", "bconv_modup": "BConv", "key_mult": "KeyMult",
    "add": "Elementwise", "mul": "Elementwise", "mul_add": "Elementwise",
    "mul_scalar": "Elementwise", "tensor": "Elementwise", "automorphism": "Elementwise",
    "automorphism_sum": "Elementwise",
}


def ring_case_op(case: str, limbs: int, n: int = 65536, alpha: int = 12, dnum: int = 0) -> Op:
    """The trace op of theo_bench's ring case ``case`` at ``limbs`` limbs."""
    L, N, w = limbs, n, 4.0
    log_n = n.bit_length() - 1
    d = dnum or (L + alpha - 1) // alpha
    if case in ("ntt", "intt"):
        return Op("", case, L, N, w * L * N, w * L * N, L * N / 2 * log_n, 1, w * L * N)
    if case == "bconv":
        s, t = L, alpha
    elif case == "bconv_modup":
        digit = (L + d - 1) // d
        s, t = digit, L - digit + alpha
    elif case == "key_mult":
        b = L + alpha
        return Op("", "key_mult", 2 * b, N, w * 3 * d * b * N, w * 2 * b * N, 2.0 * d * b * N, 2)
    else:
        ins, outs, macs = {"add": (2, 1, 0), "mul": (2, 1, 1), "mul_add": (3, 1, 1),
                           "mul_scalar": (1, 1, 1), "tensor": (4, 3, 4), "automorphism": (1, 1, 0),
                           "automorphism_sum": (8, 1, 0)}[case]
        return Op("", case, L * outs, N, w * ins * L * N, w * outs * L * N, macs * L * N, outs)
    # full bconv: const mult + matrix (traffic_model::bconv, with_const_mult)
    return Op("", "bconv", t, N, w * s * N, w * t * N, s * t * N + s * N, 1, w * (s * t + s))


def _records(path: str) -> list[dict]:
    """Every JSON object of a theo_bench output (JSON lines, a JSON array, or {"runs": {...}})."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    out: list[dict] = []

    def walk(x):
        if isinstance(x, dict):
            if "op" in x and "median_us" in x:
                out.append(x)
            else:
                for v in x.values():
                    walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


def bench_ops(path: str) -> dict[tuple[str, int], float]:
    """(op, limbs) -> median microseconds (the median over repeated records)."""
    acc: dict[tuple[str, int], list[float]] = defaultdict(list)
    for r in _records(path):
        lim = r.get("limbs", r.get("level_limbs"))
        if lim is None:
            continue
        acc[(str(r["op"]), int(lim))].append(float(r["median_us"]))
    if not acc:
        raise SimInputError(path, "(records)", "no theo_bench op records (op, limbs, median_us)")
    return {k: statistics.median(v) for k, v in acc.items()}


def kernel_family(name: str) -> str:
    """Validation family of a CUDA kernel name (src/backend/cuda)."""
    s = re.sub(r"^void ", "", name)
    s = re.sub(r"^(theo::cuda::)?(\(anonymous namespace\)::)?", "", s)
    if s.startswith("ntt_"):
        return "NTT"
    if s.startswith("bconv"):
        return "BConv"
    if s.startswith("key_mult"):
        return "KeyMult"
    return "Elementwise"


def ncu_kernels(path: str) -> list[dict]:
    """[{name, us, inst, stage?}] from a bench/ncu_stages.py JSON (its first section, or
    ``file.json#section``) or a raw ncu CSV (Kernel Name, gpu__time_duration.sum[,
    smsp__inst_executed.sum])."""
    path, _, section = path.partition("#")
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        sections = {k: v for k, v in doc.items() if isinstance(v, dict) and "kernels" in v}
        if not sections:
            raise SimInputError(path, "kernels", "no section with a 'kernels' list")
        if section and section not in sections:
            raise SimInputError(path, section, f"no such section (sections: {', '.join(sections)})")
        first = sections[section] if section else next(iter(sections.values()))
        return [{"name": k["name"], "us": float(k["us"]), "inst": float(k.get("inst", 0)),
                 "stage": k.get("stage", "")} for k in first["kernels"]]
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f if line.startswith('"')]
    rows = list(csv.reader(lines))
    if len(rows) < 3:
        raise SimInputError(path, "(csv)", "no ncu --csv --page raw rows")
    hdr, units, data = rows[0], rows[1], rows[2:]
    col = {h: i for i, h in enumerate(hdr)}
    if "gpu__time_duration.sum" not in col or "Kernel Name" not in col:
        raise SimInputError(path, "gpu__time_duration.sum", "column missing from the ncu CSV")
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
    ti = col["gpu__time_duration.sum"]
    ii = col.get("smsp__inst_executed.sum")
    out = []
    for r in data:
        us = float(r[ti].replace(",", "")) * scale.get(units[ti], 1.0)
        inst = float(r[ii].replace(",", "")) if ii is not None and r[ii] else 0.0
        out.append({"name": r[col["Kernel Name"]], "us": us, "inst": inst, "stage": ""})
    return out


def family_sums(kernels: list[dict]) -> dict[str, dict[str, float]]:
    """Per family: kernel time (us), launches, warp instructions."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"us": 0.0, "launches": 0, "inst": 0.0})
    for k in kernels:
        f = out[kernel_family(k["name"])]
        f["us"] += k["us"]
        f["launches"] += 1
        f["inst"] += k.get("inst", 0.0)
    return dict(out)


_BOOT_RE = re.compile(r"bootstrap \d+: ([0-9.]+) ms")
_BOOT_TXT_RE = re.compile(r"(?<![0-9.])([0-9]+\.[0-9]+)ms/[0-9.]+b")


def boot_ms(path: str) -> float:
    """Median bootstrapping time in a theo_boot_demo log (or the "16.4ms/21.0b" run logs); with
    several runs the first is dropped as warm-up when there are more than two."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    vals = [float(x) for x in _BOOT_RE.findall(text)]
    if len(vals) > 2:
        vals = vals[1:]
    if not vals:
        vals = [float(x) for x in _BOOT_TXT_RE.findall(text)]
    if not vals:
        raise SimInputError(path, "(log)", "no 'bootstrap r: t ms' lines")
    return statistics.median(vals)


def geomean(xs) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
