#!/usr/bin/env python3
"""The roofline of one phase of a theo-trace (docs/trace-format.md), kernel family by family.

usage: bench/roofline.py TRACE.json [--scope Boot/EvalMod] [--machine h200] [--sim SIM.json]
                         [--measured-ms MS] [--json OUT.json]

TRACE is what `theo_trace PRESET --workloads boot --backend cost --cache-mib 60 --levers SPEC`
writes (every backend call with its bytes and multiply-adds); --scope keeps the calls whose scope
starts with it (an OpScope of Bootstrapper::bootstrap: Boot/ModRaise, Boot/CoeffToSlot,
Boot/EvalMod, Boot/SlotToCoeff). Per family (the backend op) and in total:

  * L2 floor: every byte the call reads and writes (tables included) at the L2 bandwidth;
  * DRAM floor: the compulsory DRAM bytes at the DRAM bandwidth: the key words a KeyMult reads
    (no key fits the L2 beside its operands, and each is read once per key switch);
  * issue floor: the integer instructions at the GPU's int32 issue rate, for the families with a
    measured instruction count (the NTT family: 10.8 per butterfly, the fit of docs/sim.md);
  * launch floor: the graph's per-node gap (0.505 us on the H200, measured) per call;
  * roofline: per call the largest of its floors, summed (each kernel bound by one resource, no
    two kernels overlapping): without the issue floor (bytes and launches only) and with it. The
    floors are the whole GPU's, so two streams do not divide them; what overlap can gain at most
    is the other bound printed, the largest of the resources' totals (every kernel overlapped
    with kernels bound by other resources);
  * `live set through DRAM`: the reads of ciphertexts made by earlier products (tensor operands,
    leaves, sums) also counted at DRAM bandwidth, the pessimistic end: EvalMod's two parts keep
    ~6 ciphertexts each (T_1..T_4, T_8, z) of 10-20 MB, more than the 60 MiB L2;
  * with --sim (the JSON of `python -m theodosian.sim run ... --json`), the simulator's time per
    family for the same calls; with --measured-ms, the measured phase time against the roofline.

No GPU is needed; the ceilings are the H200's / H100's measured ones (python/theodosian/sim/
machines).
"""

import argparse
import collections
import json
import sys

MACHINES = {
    # DRAM copy (read + write) and L2 read + write bandwidth, int32 issue rate, graph node gap.
    "h200": {"dram_gbps": 4268, "l2_gbps": 7229, "tint_per_s": 16.684e12, "launch_us": 0.505},
    "h100": {"dram_gbps": 3019, "l2_gbps": 7229, "tint_per_s": 16.684e12, "launch_us": 0.505},
}

# Instructions per multiply-add where a measurement gives one: the NTT family's butterflies
# (docs/sim.md: 10.8 instructions per butterfly, fitted on H100 Nsight data).
ISSUE_PER_MAC = {"ntt": 10.8, "intt": 10.8, "ntt_sub_mul_scalar": 10.8}
# Ops whose reads are ciphertexts made earlier (the live set), for the pessimistic DRAM end.
LIVE_READERS = {"tensor", "mul_scalar_sum", "add_batch", "sub_batch", "copy", "add", "sub",
                "mul_monomial", "linear_combination"}


def key_bytes(op):
    """Key words a KeyMult reads: 2 beta limbs-of-output rows per digit (beta digits)."""
    name, limbs, n, read = op["op"], op["limbs"], op["n"], op["bytes_read"]
    if limbs == 0 or n == 0:
        return 0
    per_limb = (limbs // 2) * n * 4  # limbs counts both output polys
    if name == "key_mult":
        # reads beta digit rows and 2 beta key rows per output limb
        return read * 2 // 3
    if name == "key_mult_add_scaled":
        beta = (read / per_limb - 2) / 3  # plus the two polys it adds into
        return int(2 * beta * per_limb)
    if name.startswith("key_mult"):
        return read  # rotations / sums: reads dominated by their keys (upper end)
    return 0


def roofline(ops, machine):
    m = MACHINES[machine]
    fam = collections.OrderedDict()
    for o in ops:
        if o["op"] in ("fork", "end_fork", "join"):
            continue
        f = fam.setdefault(o["op"], collections.Counter())
        l2 = o["bytes_read"] + o["bytes_written"] + o["table_bytes"]
        dram = key_bytes(o)
        live = dram + (o["bytes_read"] if o["op"] in LIVE_READERS else 0)
        t = {
            "l2_us": l2 / (m["l2_gbps"] * 1e3),
            "dram_us": dram / (m["dram_gbps"] * 1e3),
            "launch_us": m["launch_us"],
        }
        issue_us = o["macs"] * ISSUE_PER_MAC.get(o["op"], 0) / m["tint_per_s"] * 1e6
        live_us = live / (m["dram_gbps"] * 1e3)
        f["calls"] += 1
        f["l2_gb"] += l2 / 1e9
        f["dram_gb"] += dram / 1e9
        f["live_dram_gb"] += live / 1e9
        for k, v in t.items():
            f[k] += v
        f["issue_us"] += issue_us
        f["live_us"] += live_us
        f["roof_bytes_us"] += max(t.values())
        f["roof_us"] += max(max(t.values()), issue_us)
        f["roof_live_us"] += max(max(t.values()), issue_us, live_us)
    total = collections.Counter()
    for f in fam.values():
        total.update(f)
    # Every kernel overlapped with kernels bound by other resources: the busiest resource.
    total["overlap_us"] = max(total["l2_us"], total["dram_us"], total["issue_us"])
    return fam, total


def sim_family_us(sim, trace_ops, scope):
    """The simulator's busy time per family over the calls of `scope` (by op index)."""
    idx = {i for i, o in enumerate(trace_ops) if o["scope"].startswith(scope)}
    out = collections.Counter()
    for t in sim["tasks"]:
        if t["op"] in idx:
            out[trace_ops[t["op"]]["op"]] += t["end_us"] - t["start_us"]
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--scope", default="Boot/EvalMod")
    ap.add_argument("--machine", default="h200", choices=sorted(MACHINES))
    ap.add_argument("--sim")
    ap.add_argument("--measured-ms", type=float)
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    doc = json.load(open(a.trace))
    all_ops = doc["ops"]
    ops = [o for o in all_ops if o["scope"].startswith(a.scope)]
    if not ops:
        sys.exit(f"roofline: no call under scope {a.scope!r} in {a.trace}")
    fam, total = roofline(ops, a.machine)
    sim = sim_family_us(json.load(open(a.sim)), all_ops, a.scope) if a.sim else None
    meta = doc.get("meta", {})
    print(f"{meta.get('preset', '?')} {a.scope} on {a.machine}: {int(total['calls'])} calls, "
          f"{total['l2_gb']:.2f} GB through L2, {total['dram_gb']:.2f} GB of keys from DRAM")
    head = ("family", "calls", "L2 GB", "key GB", "L2 us", "DRAM us", "issue us", "launch us",
            "roof us", "sim us")
    print("%-22s %5s %7s %7s %8s %8s %8s %9s %8s %8s" % head)
    rows = sorted(fam.items(), key=lambda kv: -kv[1]["roof_us"])
    for name, f in rows + [("total", total)]:
        if sim:
            s = "%8.0f" % (sim.get(name, 0) if name != "total" else sum(sim.values()))
        else:
            s = "       -"
        print("%-22s %5d %7.2f %7.2f %8.0f %8.0f %8.0f %9.0f %8.0f %s" % (
            name, f["calls"], f["l2_gb"], f["dram_gb"], f["l2_us"], f["dram_us"], f["issue_us"],
            f["launch_us"], f["roof_us"], s))
    bounds = {
        "bytes and launches, no overlap": total["roof_bytes_us"],
        "with the issue floor, no overlap": total["roof_us"],
        "with the live set through DRAM too": total["roof_live_us"],
        "full overlap (busiest resource)": total["overlap_us"],
    }
    for k, v in bounds.items():
        x = f" (measured {a.measured_ms * 1e3 / v:.2f}x)" if a.measured_ms else ""
        print(f"roofline, {k}: {v / 1e3:.2f} ms{x}")
    if sim:
        print(f"simulator: {sum(sim.values()) / 1e3:.2f} ms of kernel time (both streams' busy "
              "time, summed)")
    if a.measured_ms:
        print(f"measured: {a.measured_ms:.2f} ms")
    if a.json:
        rec = {"op": "roofline", "trace": a.trace, "scope": a.scope, "machine": a.machine,
               "measured_ms": a.measured_ms, "bounds_us": bounds,
               "families": {k: dict(v) for k, v in fam.items()}, "total": dict(total),
               "sim_us": dict(sim) if sim else None}
        json.dump(rec, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
