#!/usr/bin/env python3
"""Per-kernel and per-stage roofline of one op from Nsight Compute.

Reads `ncu --csv --page raw` output (metrics below) of the kernels of ONE op (theo_bench with
THEO_PROFILE_RANGE=1 and ncu --profile-from-start off: bench/timing.h) and prints, per kernel and
per key-switching stage, the measured kernel time, the bytes the kernels moved through the L2
(lts__t_sectors_srcunit_tex x 32: the requests of the SMs, the paper's "global memory
transactions", Theodosian Table III; lts__t_bytes when that metric is absent), the DRAM bytes,
and three floors: L2 bytes / L2 bandwidth, DRAM bytes / DRAM bandwidth, and the issue floor
(warp instructions / (4 schedulers x SMs x SM clock): the time at one instruction per scheduler
per cycle). Stages split at the key_mult kernels: before them ModUp, the key_mult kernels
KeyMult, after them ModDown (a KeySwitch or HRot; for other ops the stage column is approximate).

  ncu --clock-control none --cache-control none --profile-from-start off --csv --page raw \\
      --metrics gpu__time_duration.sum,lts__t_sectors_srcunit_tex.sum,dram__bytes.sum,\\
smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second \\
      env THEO_PROFILE_RANGE=1 theo_bench --backend cuda --ops keyswitch --limbs 47 > ks.csv
  bench/ncu_stages.py ks.csv [--sms 132] [--l2-tbps 7.0] [--dram-tbps 4.27] [--json out.json]
"""
import argparse
import csv
import json
import re
import sys


def short(name):
    name = re.sub(r"\(.*", "", name)
    name = re.sub(r"^void ", "", name)
    name = re.sub(r"^(theo::cuda::)?<?(unnamed>|\(anonymous namespace\))::", "", name)
    return name[:60]


def num(v):
    try:
        return float(v.replace(",", ""))
    except (AttributeError, ValueError):
        return 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--l2-tbps", type=float, default=7.0)
    ap.add_argument("--dram-tbps", type=float, default=4.27)
    ap.add_argument("--json")
    a = ap.parse_args()
    lines = [l for l in open(a.csv) if l.startswith('"')]
    rows = list(csv.reader(lines))
    hdr, data = rows[0], rows[2:]  # row 1 holds the units
    col = {h: i for i, h in enumerate(hdr)}

    # ncu states each metric's unit in row 1; scale every value to bytes, microseconds, hertz.
    scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "KB": 1e3, "MB": 1e6, "GB": 1e9,
             "ns": 1e-3, "nsecond": 1e-3, "us": 1, "usecond": 1, "ms": 1e3, "msecond": 1e3,
             "hz": 1, "Hz": 1, "Khz": 1e3, "KHz": 1e3, "Mhz": 1e6, "MHz": 1e6, "Ghz": 1e9,
             "GHz": 1e9, "cycle/second": 1, "cycle/usecond": 1e6, "cycle/nsecond": 1e9}

    def get(r, m):
        if m not in col:
            return 0.0
        return num(r[col[m]]) * scale.get(rows[1][col[m]], 1)

    kernels = []
    for r in data:
        t_us = get(r, "gpu__time_duration.sum")
        # Requests from the SMs only: lts__t_bytes also counts the traffic between the two L2
        # partitions of an H100 / H200 (a far-partition access is seen at two slices).
        if "lts__t_sectors_srcunit_tex.sum" in col:
            l2 = 32 * get(r, "lts__t_sectors_srcunit_tex.sum")
        else:
            l2 = get(r, "lts__t_bytes.sum")
        dram = get(r, "dram__bytes.sum")
        clk = get(r, "sm__cycles_elapsed.avg.per_second")
        inst = get(r, "smsp__inst_executed.sum")
        kernels.append(dict(name=short(r[col["Kernel Name"]]), us=t_us, l2=l2, dram=dram,
                            inst=inst, clk=clk))

    stage = "ModUp"
    seen_km = False
    for k in kernels:
        if k["name"].startswith("key_mult"):
            stage, seen_km = "KeyMult", True
        elif seen_km:
            stage = "ModDown"
        k["stage"] = stage

    def floors(k):
        issue = k["inst"] / (4 * a.sms * k["clk"]) * 1e6 if k["clk"] > 0 else 0
        return k["l2"] / (a.l2_tbps * 1e6), k["dram"] / (a.dram_tbps * 1e6), issue

    print(f"{'kernel':60s} {'stage':8s} {'us':>7s} {'L2 MB':>8s} {'DRAM MB':>8s} "
          f"{'L2 lb':>7s} {'DRAM lb':>7s} {'issue':>7s} {'x L2':>5s}")
    for k in kernels:
        l2b, db, ib = floors(k)
        print(f"{k['name']:60s} {k['stage']:8s} {k['us']:7.2f} {k['l2']/1e6:8.1f} "
              f"{k['dram']/1e6:8.1f} {l2b:7.2f} {db:7.2f} {ib:7.2f} {k['us']/max(l2b,1e-9):5.2f}")
    out = {"kernels": kernels, "stages": {}}
    print()
    print(f"{'stage':10s} {'kernels':>7s} {'us':>8s} {'L2 MB':>8s} {'DRAM MB':>8s} {'L2 lb':>7s} "
          f"{'DRAM lb':>7s} {'issue':>7s} {'x L2':>5s} {'x issue':>7s}")
    for s in ("ModUp", "KeyMult", "ModDown", "all"):
        ks = [k for k in kernels if s == "all" or k["stage"] == s]
        if not ks:
            continue
        us = sum(k["us"] for k in ks)
        l2 = sum(k["l2"] for k in ks)
        dram = sum(k["dram"] for k in ks)
        fl = [floors(k) for k in ks]
        l2b, db, ib = (sum(f[i] for f in fl) for i in range(3))
        print(f"{s:10s} {len(ks):7d} {us:8.2f} {l2/1e6:8.1f} {dram/1e6:8.1f} {l2b:7.2f} {db:7.2f} "
              f"{ib:7.2f} {us/max(l2b,1e-9):5.2f} {us/max(ib,1e-9):7.2f}")
        out["stages"][s] = dict(kernels=len(ks), kernel_us=us, l2_bytes=l2, dram_bytes=dram,
                                bound_l2_us=l2b, bound_dram_us=db, issue_floor_us=ib)
    if a.json:
        json.dump(out, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
