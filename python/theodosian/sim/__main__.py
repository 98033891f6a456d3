"""python -m theodosian.sim: the GPU + near-memory simulator's command line (docs/sim.md).

    python -m theodosian.sim machines
    python -m theodosian.sim run TRACE [--machine M] [--techniques full] [--launch graph]
                                       [--json out.json] [--timeline out.png]
    python -m theodosian.sim affinity [TRACE...] [--machine paper-gpu-hmc]
    python -m theodosian.sim study [--out results.json] [--plots DIR] [--prefix NAME]
    python -m theodosian.sim fit --ring OPS.json [--ncu KS.json --trace KS_TRACE]
                                 [--machine h100] [--out model.json]
    python -m theodosian.sim validate --machine h100 [--model M] [--ops OPS.json]
                                      [--ncu-keyswitch KS.json] [--boot-log LOG] [--boot-ncu CSV]
                                      [--traces DIR] [--out validation.json]
    python -m theodosian.sim synth resnet20 --out resnet20.json

TRACE / M: a file, or the name of a bundled trace / machine. Errors in input files name the field.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .._cli import run_subcommand
from . import affinity as aff
from . import calibrate, measured, study, synth
from .errors import SimInputError
from .kernels import work
from .machine import bundled_machines, find_machine
from .model import default_model_path, load_model
from .schedule import Techniques, simulate
from .trace import bundled_traces_dir, find_trace, load_trace


def _model(args):
    return load_model(getattr(args, "model", None), getattr(args, "model_variant", None))


def cmd_machines(args) -> int:
    for name in bundled_machines():
        m = find_machine(name)
        print(m.summary())
        if m.description:
            print(f"    {m.description}")
    return 0


def cmd_run(args) -> int:
    tr = find_trace(args.trace)
    m = find_machine(args.machine)
    model = _model(args)
    tech = Techniques.parse(args.techniques)
    s = simulate(tr, m, model, tech, launch=args.launch)
    print(f"{tr.name} on {m.summary()}")
    print(f"techniques {s.techniques.label()}: {s.makespan_us:.1f} us, {len(s.tasks)} tasks, "
          f"energy {s.energy_j['total'] * 1e3:.3f} mJ (dynamic {s.energy_j['dynamic'] * 1e3:.3f})")
    if m.hmc is not None and args.compare:
        base = simulate(tr, m, model, Techniques.parse("none"), launch=args.launch)
        print(f"  same machine, no technique: {base.makespan_us:.1f} us "
              f"({base.makespan_us / s.makespan_us:.2f}x)")
    util = s.utilization()
    print(f"  busy: GPU {s.busy_us['gpu']:.1f} us ({100 * util['gpu']:.0f}%), HMC "
          f"{s.busy_us['hmc']:.1f} us ({100 * util['hmc']:.0f}%)")
    print("  per paper kernel (execution time, us): " + ", ".join(
        f"{k} {v:.1f}" for k, v in sorted(s.per_kernel_us().items(), key=lambda x: -x[1])))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({**s.summary(), "per_kernel_us": s.per_kernel_us(),
                       "tasks": [{"op": t.op_index, "kernel": t.kernel, "queue": t.queue,
                                  "part": t.part, "start_us": t.start, "end_us": t.end}
                                 for t in s.tasks]}, f, indent=1)
    if args.timeline:
        from . import plots

        plots.timeline({s.techniques.label(): s}, args.timeline, f"{tr.name} on {m.name}")
    return 0


def cmd_affinity(args) -> int:
    m = find_machine(args.machine)
    model = _model(args)
    names = args.traces or [f[:-5] for f in sorted(os.listdir(bundled_traces_dir()))
                            if f.endswith(".json")]
    works = [(work(o, model), o.count) for n in names for o in find_trace(n).ops
             if not o.is_marker]
    print(aff.format_table(aff.table(works, m, model), m, model))
    return 0


def cmd_fit(args) -> int:
    m = find_machine(args.machine)
    model = _model(args)
    ring = {k: v for k, v in measured.bench_ops(args.ring).items() if k[0] in measured.RING_CASES}
    ks = load_trace(args.trace) if args.trace else None
    ncu = measured.ncu_kernels(args.ncu) if args.ncu else None
    sources = {"ring": args.ring, "ncu": args.ncu, "trace": args.trace}
    new, rep = calibrate.fit(model, m, ring, ks, ncu, sources)
    if args.c1_traces:
        hm = find_machine(args.c1_machine)
        works = [work(o, new) for n in args.c1_traces for o in find_trace(n).ops
                 if not o.is_marker]
        c1 = aff.fit_c1(works, hm, new)
        new.c1 = round(c1["c1"], 4)
        rep["c1"] = {**c1, "machine": hm.name, "traces": args.c1_traces}
    new.source = (f"fitted by python -m theodosian.sim fit on {m.name}: ring cases "
                  f"{args.ring}" + (f", instructions from {args.ncu}" if args.ncu else ""))
    new.fit = rep
    for f, r in rep.get("factors", {}).items():
        print(f"{f:<12} {r['factor']} {r[r['factor']]:.3f}, kernel_fixed {r['kernel_fixed_us']:.2f}"
              f" us, rms error {100 * r['rms_rel_error']:.1f}% over {len(r['points'])} cases")
    for f, r in rep.get("instructions", {}).items():
        print(f"{f:<12} instr_per_mac {r['instr_per_mac']:.2f}")
    if "c1" in rep:
        print(f"c1 {rep['c1']['c1']:.4g} (consistent interval {rep['c1']['interval']})")
    out = args.out or default_model_path()
    new.save(out)
    print(f"wrote {out}")
    return 0


def _trace_in(folder: str | None, name: str):
    if folder:
        p = os.path.join(folder, name + ".json")
        return load_trace(p) if os.path.exists(p) else None
    try:
        return find_trace(name)
    except SimInputError:
        return None


def cmd_validate(args) -> int:
    m = find_machine(args.machine)
    model = _model(args)
    device = args.device or m.gpu.name
    recs: list[dict] = [study.header(model, f"validation on {device}")]
    p = args.prefix
    if args.ncu_keyswitch:
        tr = _trace_in(args.traces, f"{p}-keyswitch" if args.ncu_limbs == 47
                       else f"{p}-l{args.ncu_limbs}-keyswitch")
        if tr is None:
            raise SimInputError(args.ncu_keyswitch, "--traces", "no keyswitch trace for it")
        fam = calibrate.validate_families(tr, measured.ncu_kernels(args.ncu_keyswitch), m, model,
                                          f"keyswitch@{args.ncu_limbs}", device,
                                          args.ncu_keyswitch)
        fitted_on = os.path.basename(str(model.fit.get("sources", {}).get("ncu") or ""))
        same = fitted_on and os.path.basename(args.ncu_keyswitch) == fitted_on
        for r in fam:
            r["in_sample"] = bool(same)  # the model was fitted on these kernels
        recs += fam
    if args.boot_ncu:
        tr = _trace_in(args.traces, f"{p}-boot")
        recs += calibrate.validate_families(tr, measured.ncu_kernels(args.boot_ncu), m, model,
                                            "boot", device, args.boot_ncu)
    if args.ops:
        ops = measured.bench_ops(args.ops)
        for (op, limbs), us in sorted(ops.items()):
            if op not in ("keyswitch", "hmult", "hrot", "hmult_rescale", "rescale", "pmult",
                          "hadd"):
                continue
            tr = _trace_in(args.traces, f"{p}-{op}" if limbs == 47 else f"{p}-l{limbs}-{op}")
            if tr is None:
                continue
            r = calibrate.validate_op(tr, us, m, model, f"{op}@{limbs}", device, args.ops,
                                      "stream")
            recs.append(r)
    if args.boot_log or args.boot_ms:
        ms = args.boot_ms or measured.boot_ms(args.boot_log)
        tr = _trace_in(args.traces, f"{p}-boot")
        recs.append({**calibrate.validate_op(tr, ms * 1e3, m, model, "boot", device,
                                             args.boot_log or "--boot-ms", "graph"),
                     "family": "Boot"})
    for r in recs[1:]:
        err = r.get("error_pct")
        print(f"{r['workload']:<22} {r['family']:<12} measured {r['measured_us']:10.1f} us  "
              f"simulated {r['simulated_us']:10.1f} us  "
              f"{'' if err is None else f'{err:+6.1f}%'}"
              f"{'  (fit data)' if r.get('in_sample') else ''}")
    for r in recs[1:]:
        r.setdefault("git_commit", recs[0]["git_commit"])
        r.setdefault("preset", args.prefix.split("-")[0])
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(recs, f, indent=1)
        print(f"wrote {args.out}")
    return 0


def cmd_study(args) -> int:
    base_model = _model(args)
    traces_h100 = {w: _trace_in(args.traces, f"{args.h100_prefix}-{w}") for w in args.workloads}
    traces_paper = {}
    for w in args.workloads:
        traces_paper[w] = _trace_in(args.traces, f"{args.paper_prefix}-{w}")
        if traces_paper[w] is None and traces_h100[w] is not None:
            print(f"study: no {args.paper_prefix}-{w}; the paper setting uses "
                  f"{args.h100_prefix}-{w} (batched for the other cache)", file=sys.stderr)
            traces_paper[w] = traces_h100[w]
    missing = [f"{args.paper_prefix}-{k}" for k, v in traces_paper.items() if v is None] + \
        [f"{args.h100_prefix}-{k}" for k, v in traces_h100.items() if v is None]
    if len(missing) == 2 * len(args.workloads):
        raise SimInputError(args.traces or bundled_traces_dir(), "--workloads",
                            f"no trace {missing}")
    for name in missing:
        print(f"study: no trace {name}, skipped", file=sys.stderr)
    traces_paper = {k: v for k, v in traces_paper.items() if v is not None}
    traces_h100 = {k: v for k, v in traces_h100.items() if v is not None}
    if args.resnet:
        traces_paper["resnet20-synthetic"] = synth.resnet20(
            f"{args.paper_prefix}-boot", f"{args.paper_prefix}-l14", args.traces)
        traces_h100["resnet20-synthetic"] = synth.resnet20(
            f"{args.h100_prefix}-boot", f"{args.h100_prefix}-l14", args.traces)
    recs: list[dict] = [study.header(base_model, "HMC-FHE study (simulated)")]
    for path in args.include:
        with open(path, encoding="utf-8") as f:
            recs += [r for r in json.load(f) if r.get("record") != "header"]
    extras: dict = {"timelines": {}}
    paper, h100 = study.paper_setting(), study.h100_setting()
    runs = [(paper, traces_paper, v) for v in args.paper_kernels] + \
        [(h100, traces_h100, v) for v in args.h100_kernels]
    for setting, trs, variant in runs:
        model = base_model.with_variant(variant)
        recs += study.affinity_records(list(trs.values()), setting.hetero, model)
        print(f"== {setting.name}, kernels {variant}", file=sys.stderr)
        print(aff.format_table(aff.table(
            [(work(o, model), o.count) for t in trs.values() for o in t.ops if not o.is_marker],
            setting.hetero, model), setting.hetero, model), file=sys.stderr)
        for w, tr in trs.items():
            print(f"{setting.name} / {variant}: {w} ({len(tr.ops)} ops) ...", file=sys.stderr,
                  flush=True)
            r, ex = study.run_workload(tr, setting, model, kernels=w.startswith("resnet20"))
            recs += r
            if setting is paper and w.startswith("resnet20"):
                full = next(x["speedup"] for x in r if x.get("record") == "speedup"
                            and x["techniques"] == "full" and x.get("study") != "scaling")
                ex_recs = study.explain(tr, setting, model, full)
                recs += ex_recs
                b = ex_recs[-1]
                print(f"{w} ({variant}): GPU-side kernels (NTT, iNTT, ConvU, ConvD) are "
                      f"{100 * b['gpu_side_share']:.0f}% of the GPU-only time; the paper's own "
                      f"per-kernel speedups on this mix give {b['paper_speedups_serial']:.2f}x "
                      f"run serially, {b['paper_speedups_perfect_overlap']:.2f}x perfectly "
                      f"overlapped; simulated full: {full:.2f}x (paper: 2.22x)", file=sys.stderr)
            if setting is paper and variant == args.paper_kernels[0] and w in ("hmult", "hrot"):
                extras["timelines"][f"{w}-paper-{variant}"] = {
                    "GPU only (56 SMs)": ex["baseline"], "Serial": ex["serial"],
                    "Pipe": ex["pipe"], "full": ex["full"]}
    print(f"{'setting':<9} {'kernels':<12} {'workload':<34} {'machine':<20} {'techniques':<9} "
          f"{'cubes':>5} {'speedup':>8} {'energy x':>8}")
    for r in recs:
        if r.get("record") == "speedup":
            print(f"{r['setting']:<9} {r['kernels']:<12} {r['workload']:<34} {r['machine']:<20} "
                  f"{r['techniques']:<9} {r['hmc_count']:>5} {r['speedup']:>8.2f} "
                  f"{r['energy_ratio']:>8.2f}")
    commit = recs[0]["git_commit"]
    for r in recs[1:]:
        r.setdefault("git_commit", commit)
        r.setdefault("preset", "bootparam_40")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("[\n" + ",\n".join(json.dumps(r) for r in recs) + "\n]\n")
        print(f"wrote {args.out}")
    if args.plots:
        from . import plots

        for p in plots.all_plots(recs, extras, args.plots, args.plot_prefix):
            print(f"wrote {p}")
    return 0


def cmd_synth(args) -> int:
    if args.workload != "resnet20":
        raise SimInputError("synth", "workload", f"unknown {args.workload!r} (known: resnet20)")
    tr = synth.resnet20(f"{args.prefix}-boot", f"{args.prefix}-l14", args.traces)
    tr.save(args.out)
    t = tr.totals()
    print(f"wrote {args.out}: {t['calls']} calls, {t['bytes'] / 1e9:.1f} GB, "
          f"{t['macs'] / 1e9:.1f} GMAC (synthetic: {synth.RESNET20_COUNTS})")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m theodosian.sim", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("machines", help="list the bundled machines")
    p.set_defaults(fn=cmd_machines)

    p = sub.add_parser("run", help="simulate one trace on one machine")
    p.add_argument("trace")
    p.add_argument("--machine", default="paper-gpu-hmc")
    p.add_argument("--techniques", default="full",
                   help="baseline|serial|pipe|full or a list of offload,bacp,pipeline,tuning")
    p.add_argument("--launch", default="graph", choices=("graph", "stream"))
    p.add_argument("--model")
    p.add_argument("--model-variant", help="a kernel variant of the model (e.g. lean-innerp)")
    p.add_argument("--compare", action="store_true", help="also without any technique")
    p.add_argument("--json")
    p.add_argument("--timeline", help="PNG Gantt chart of the schedule")
    p.set_defaults(fn=cmd_run)

    p = sub.add_parser("affinity", help="the per-kernel affinity table (paper Table II)")
    p.add_argument("traces", nargs="*")
    p.add_argument("--machine", default="paper-gpu-hmc")
    p.add_argument("--model")
    p.add_argument("--model-variant")
    p.set_defaults(fn=cmd_affinity)

    p = sub.add_parser("study", help="the HMC-FHE study: ablation, scaling, what-if")
    p.add_argument("--traces", help="folder of traces (default: the bundled ones)")
    p.add_argument("--workloads", nargs="+", default=["boot", "hmult", "hrot"])
    p.add_argument("--no-resnet", dest="resnet", action="store_false")
    p.add_argument("--paper-prefix", default="bootparam_40-c6")
    p.add_argument("--h100-prefix", default="bootparam_40")
    p.add_argument("--paper-kernels", nargs="+", default=["lean-innerp", "measured"],
                   help="model variants for the paper setting (first: the plotted timeline)")
    p.add_argument("--h100-kernels", nargs="+", default=["measured", "lean-innerp"])
    p.add_argument("--model")
    p.add_argument("--out")
    p.add_argument("--plots")
    p.add_argument("--plot-prefix", default="hmc-sim")
    p.add_argument("--include", nargs="*", default=[],
                   help="JSON record files (e.g. validate --out) to put in --out too")
    p.set_defaults(fn=cmd_study)

    p = sub.add_parser("fit", help="fit model.json to measured GPU data")
    p.add_argument("--ring", required=True, help="theo_bench JSON with ring cases")
    p.add_argument("--ncu", help="ncu of one keyswitch (ncu_stages JSON or raw CSV)")
    p.add_argument("--trace", help="the trace of that keyswitch")
    p.add_argument("--machine", default="h100")
    p.add_argument("--c1-traces", nargs="*", default=[])
    p.add_argument("--c1-machine", default="paper-gpu-hmc")
    p.add_argument("--model")
    p.add_argument("--out")
    p.set_defaults(fn=cmd_fit)

    p = sub.add_parser("validate", help="GPU-only prediction vs measured")
    p.add_argument("--machine", default="h100")
    p.add_argument("--model")
    p.add_argument("--device", help="the card's name in the records")
    p.add_argument("--traces", help="folder of traces (default: bundled)")
    p.add_argument("--prefix", default="bootparam_40")
    p.add_argument("--ops", help="theo_bench JSON of scheme ops (keyswitch, hmult, hrot, ...)")
    p.add_argument("--ncu-keyswitch")
    p.add_argument("--ncu-limbs", type=int, default=47)
    p.add_argument("--boot-ncu", help="raw ncu CSV of one whole bootstrapping")
    p.add_argument("--boot-log", help="theo_boot_demo --graph output")
    p.add_argument("--boot-ms", type=float)
    p.add_argument("--out")
    p.set_defaults(fn=cmd_validate)

    p = sub.add_parser("synth", help="build a synthetic workload trace")
    p.add_argument("workload", help="resnet20")
    p.add_argument("--traces")
    p.add_argument("--prefix", default="bootparam_40-c6")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_synth)

    return run_subcommand(ap.parse_args(argv), SimInputError, "error")


if __name__ == "__main__":
    sys.exit(main())
