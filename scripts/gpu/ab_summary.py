"""A/B summary of the GPU scripts (architecture.sh, backend-split.sh): median bootstrap time (each
run's first bootstrap dropped) and op medians per binary, new / old.

    python3 scripts/gpu/ab_summary.py OUT [--verdict] [--tolerance PCT] LABEL...

Reads OUT/boot-{graph,eager}-LABEL-*.log (theo_boot_demo), OUT/levers-LABEL-*.json
(theo_boot_levers: the median of each round's median, and the output hashes) and
OUT/ops-LABEL-*.json (theo_bench),
prints one line per measurement and writes OUT/summary.json. --verdict: also judge each time
new/old against the tolerance, PCT percent either way (default 2), bootstraps and ops alike (the
"verdict" entry of summary.json).
"""
import glob
import json
import re
import statistics
import sys


def main(argv):
    out, rest = argv[0], argv[1:]
    with_verdict = "--verdict" in rest
    tolerance = 2.0
    if "--tolerance" in rest:
        at = rest.index("--tolerance")
        tolerance = float(rest[at + 1])
        rest = rest[:at] + rest[at + 2:]
    labels = [a for a in rest if a != "--verdict"]
    res = {}
    for label in labels:
        for kind in ("graph", "eager"):
            ms = []
            for f in sorted(glob.glob(f"{out}/boot-{kind}-{label}-*.log")):
                runs = [float(m) for m in re.findall(r"^bootstrap \d+: ([\d.]+) ms", open(f).read(), re.M)]
                ms += runs[1:]
            if ms:
                res.setdefault(label, {})[f"boot_{kind}_ms"] = statistics.median(ms)
        hashes = set()
        for f in sorted(glob.glob(f"{out}/levers-{label}-*.json")):
            try:
                records = json.load(open(f))
            except ValueError:
                continue
            for rec in records:
                if "median_ms" not in rec:  # the header record
                    continue
                key = f'boot_levers_{rec["mode"]}_ms'
                res.setdefault(label, {}).setdefault(key, []).append(rec["median_ms"])
                hashes.add(rec.get("output_hash"))
        for key, v in list(res.get(label, {}).items()):
            if isinstance(v, list):
                res[label][key] = statistics.median(v)
        if hashes:
            res.setdefault("output_hashes", {})[label] = sorted(h for h in hashes if h)
        ops = {}
        for f in sorted(glob.glob(f"{out}/ops-{label}-*.json")):
            try:
                data = json.load(open(f))
            except ValueError:
                continue
            for rec in data.get("results", []) if isinstance(data, dict) else data:
                ops.setdefault(f'{rec["op"]} L={rec.get("limbs")}', []).append(rec["median_us"])
        for k, v in ops.items():
            res.setdefault(label, {})[k + " us"] = statistics.median(v)
    verdict = {}
    for k in res.get("new", {}):
        n = res["new"][k]
        o = res.get("old", {}).get(k)
        line = f"{k:28s} new {n:9.2f}"
        if o:
            line += f"  old {o:9.2f}  new/old {n / o:.3f}"
            if with_verdict:
                ok = abs(n / o - 1) <= tolerance / 100
                verdict[k] = {"new_over_old": n / o, "tolerance_percent": tolerance, "within": ok}
                line += f"  within {tolerance:g}%" if ok else f"  OUTSIDE {tolerance:g}%"
        print(line)
    hashes = res.get("output_hashes", {})
    if len(hashes) > 1:
        same = len({tuple(v) for v in hashes.values()}) == 1
        print(f"Boot output hashes: {hashes} -> {'the same words' if same else 'DIFFERENT words'}")
    if with_verdict:
        res["verdict"] = verdict
    json.dump(res, open(f"{out}/summary.json", "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
