"""theodosian.sim: trace and machine validation, exact schedule properties on recorded traces,
every technique switchable, the CLI. Pure Python: runs with or without the compiled extension
(the tracing test needs it and is skipped without it)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import pytest

from theodosian import sim
from theodosian.sim import __main__ as cli
from theodosian.sim import kernels, measured, schedule, synth
from theodosian.sim.trace import Op, Trace

# The paper's kernel intensities (Table II: InnerP low): the lean-InnerP variant. The library's
# own key_mult kernel, as measured, is "M" and stays on the GPU (MEASURED below).
MODEL = sim.load_model(variant="lean-innerp")
MEASURED = sim.load_model()
PAPER = sim.find_machine("paper-gpu-hmc")
BASE = sim.find_machine("paper-baseline")
# A small recorded trace: HMult (tensor, key switch in 4 digit groups, adds) at 47 limbs of
# bootparam_40, traced for a 6 MiB cache (theo_trace --cache-mib 6).
HMULT = sim.find_trace("bootparam_40-c6-hmult")
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def sched(tr, m=PAPER, tech="full", **kw):
    return sim.simulate(tr, m, MODEL, sim.Techniques.parse(tech), **kw)


# ---- inputs -------------------------------------------------------------------------------------


def test_bundled_traces_and_machines_load():
    for f in os.listdir(sim.trace.bundled_traces_dir()):
        tr = sim.find_trace(f[:-5])
        assert tr.n == 65536 and tr.ops
    for name in sim.bundled_machines():
        m = sim.find_machine(name)
        assert m.gpu.sms > 0


def test_recorded_hmult_has_the_expected_shape():
    ops = [o.op for o in HMULT.ops]
    assert ops[0] == "tensor"
    assert ops.count("key_mult") == 2  # the P part and the Q part
    assert ops.count("bconv_matmul") == 5  # 4 ModUp digit groups + ModDown
    assert {"fork", "end_fork", "join"} <= set(ops)
    assert {o.stage for o in HMULT.ops} >= {"ModUp", "KeyMult", "ModDown"}


def _doc():
    return json.loads(json.dumps(HMULT.to_json()))


def _refusal(from_json, doc, mutate, source):
    """The SimInputError of from_json on doc after mutate(doc)."""
    mutate(doc)
    with pytest.raises(sim.SimInputError) as e:
        from_json(doc, source)
    return e.value


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("format"), "format"),
    (lambda d: d.update(version=2), "version"),
    (lambda d: d["meta"].pop("n"), "meta.n"),
    (lambda d: d["meta"].update(n=1000), "meta.n"),
    (lambda d: d["ops"][3].update(bytes_read=-1), "ops[3].bytes_read"),
    (lambda d: d["ops"][2].update(op="frobnicate"), "ops[2].op"),
    (lambda d: d["ops"][1].pop("macs"), "ops[1].macs"),
    (lambda d: d["ops"][0].update(limbs="47"), "ops[0].limbs"),
    (lambda d: d["ops"][0].update(n=4096), "ops[0].n"),
    (lambda d: d.update(ops={}), "ops"),
])
def test_malformed_trace_names_the_field(mutate, field):
    e = _refusal(sim.trace.from_json, _doc(), mutate, "t.json")
    assert e.field == field
    assert f"'{field}'" in str(e)


def _machine_doc():
    with open(os.path.join(sim.machine.machines_dir(), "paper-gpu-hmc.json")) as f:
        return json.load(f)


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["hmc"].update(cubes=0), "hmc.cubes"),
    (lambda d: d["hmc"].pop("internal_bw_gbps"), "hmc.internal_bw_gbps"),
    (lambda d: d["gpu"].update(mem_bw_gbps=480), "gpu.mem_bw_gbps"),
    (lambda d: d["gpu"].update(sms=40.5), "gpu.sms"),
    (lambda d: d["gpu"].update(clock_ghz="fast"), "gpu.clock_ghz"),
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d.pop("gpu"), "gpu"),
])
def test_malformed_machine_names_the_field(mutate, field):
    assert _refusal(sim.machine.from_json, _machine_doc(), mutate, "m.json").field == field


def test_gpu_only_machine_needs_its_bandwidth():
    d = _machine_doc()
    d.pop("hmc")
    with pytest.raises(sim.SimInputError) as e:
        sim.machine.from_json(d, "m.json")
    assert e.value.field == "gpu.mem_bw_gbps"


def test_trace_round_trip(tmp_path):
    p = tmp_path / "t.json"
    HMULT.save(p)
    back = sim.load_trace(p)
    assert back.ops == HMULT.ops and back.meta == HMULT.meta


# ---- the affinity model -------------------------------------------------------------------------


def test_paper_constants_put_innerp_on_the_hmcs_and_ntt_on_the_gpu():
    rows = {r.kernel: r for r in sim.table(
        [(sim.work(o, MODEL), 1) for o in HMULT.ops if not o.is_marker], PAPER, MODEL)}
    for k in ("InnerP", "TensorP", "Add"):
        assert rows[k].affinity == "HMC", k
    for k in ("NTT", "iNTT", "ConvU", "ConvD"):
        assert rows[k].affinity == "GPU", k
    s = sched(HMULT, tech="serial")
    engines = {t.kernel: t.engine for t in s.tasks}
    assert engines["InnerP"] == "hmc" and engines["NTT"] == "gpu" and engines["ConvU"] == "gpu"


def test_table_ii_levels_match_the_paper():
    from theodosian.sim.affinity import level_ai, level_ratio

    rows = {r.kernel: r for r in sim.table(
        [(sim.work(o, MODEL), 1) for o in HMULT.ops if not o.is_marker], PAPER, MODEL)}
    for k in ("Add", "InnerP"):
        assert (level_ai(rows[k].mai), level_ai(rows[k].smai), level_ratio(rows[k].ratio)) == \
            ("L", "L", "L"), k
    for k in ("NTT", "iNTT", "ConvU", "ConvD"):
        assert level_ai(rows[k].mai) in ("M", "H") and rows[k].smai > 1 and rows[k].ratio > 0


def test_measured_key_mult_is_too_dense_for_table_iii_engines():
    rows = {r.kernel: r for r in sim.table(
        [(sim.work(o, MEASURED), 1) for o in HMULT.ops if not o.is_marker], PAPER, MEASURED)}
    assert rows["InnerP"].theta > sim.cai(PAPER)
    assert rows["InnerP"].affinity == "GPU"


# ---- exact schedule properties ------------------------------------------------------------------


def _chain_trace(ops) -> Trace:
    return Trace(meta={"n": 65536}, ops=ops, source="handmade")


def _elementwise(op="add", scope="", limbs=47):
    w = 65536 * limbs * 4
    return Op(scope, op, limbs, 65536, 2 * w, w, 0 if op == "add" else w, 1)


def test_gpu_only_chain_is_the_sum_of_its_kernels():
    tr = sim.find_trace("bootparam_40-c6-keyswitch")
    tr = _chain_trace([o for o in tr.ops if not o.is_marker])
    s = sched(tr, BASE, "baseline")
    assert all(t.engine == "gpu" for t in s.tasks)
    assert s.makespan_us == pytest.approx(sum(t.cost.us for t in s.tasks), rel=1e-12)
    for a, b in zip(s.tasks, s.tasks[1:]):
        assert b.start == pytest.approx(a.end)


def test_fork_lanes_run_concurrently():
    a, b, c = _elementwise(limbs=4), _elementwise(limbs=4), _elementwise(limbs=4)
    mk = lambda name: Op("", name, 0, 0, 0, 0, 0)  # noqa: E731
    seq = _chain_trace([a, b, c])
    forked = _chain_trace([a, mk("fork"), b, mk("end_fork"), c, mk("join")])
    s1, s2 = sched(seq, BASE, "baseline"), sched(forked, BASE, "baseline")
    assert {t.queue for t in s2.tasks} == {"gpu", "gpu2"}
    assert s2.makespan_us < s1.makespan_us
    # b (second stream) and c (first stream) both start when a ends
    assert s2.tasks[1].start == pytest.approx(s2.tasks[0].end)
    assert s2.tasks[2].start == pytest.approx(s2.tasks[0].end)


BUNDLED = ["bootparam_40-c6-hmult", "bootparam_40-c6-hrot", "bootparam_40-c6-keyswitch",
           "bootparam_40-hmult", "bootparam_40-hrot", "bootparam_40-l14-hmult_rescale",
           "bootparam_40-c6-l14-hrot"]


@pytest.mark.parametrize("name", BUNDLED)
@pytest.mark.parametrize("cubes", [1, 2, 4, 8])
def test_pipelining_never_lengthens_the_schedule(name, cubes):
    tr = sim.find_trace(name)
    m = PAPER.with_cubes(cubes)
    serial, pipe = sched(tr, m, "serial"), sched(tr, m, "pipe")
    assert pipe.makespan_us <= serial.makespan_us * (1 + 1e-9)
    tuned = sched(tr, m, "offload,bacp,tuning")
    full = sched(tr, m, "full")
    assert full.makespan_us <= tuned.makespan_us * (1 + 1e-9)


def test_pipelining_splits_keymult_per_digit_group_and_overlaps():
    s = sched(HMULT, tech="pipe")
    parts = [t for t in s.tasks if t.kernel == "InnerP"]
    assert len(parts) == 2 * 4  # 2 KeyMult ops x 4 ModUp digit groups
    assert {t.part for t in parts} == {f"group {g}/4" for g in range(1, 5)}
    # the first group's InnerP runs on the HMCs while the GPU does a later group's ModUp
    first = min(parts, key=lambda t: t.start)
    gpu_busy = [t for t in s.tasks if t.engine == "gpu" and t.start < first.end
                and t.end > first.start]
    assert gpu_busy
    # loose dependency 2: the tensor product is split, d2 first
    tens = [t for t in s.tasks if t.kernel == "TensorP"]
    assert [t.part for t in tens] == ["d2", "d0,d1"]
    assert s.tasks[[t.kernel for t in s.tasks].index("iNTT")].deps == (tens[0].id,)


def test_each_technique_switches():
    no = sched(HMULT, tech="none")
    assert all(t.engine == "gpu" for t in no.tasks)
    assert not any(t.part for t in no.tasks)
    off = sched(HMULT, tech="bacp,pipeline,tuning")
    assert not any(t.engine == "hmc" for t in off.tasks if not t.part)
    serial = sched(HMULT, tech="serial")
    assert any(t.engine == "hmc" for t in serial.tasks)
    assert not any(t.part for t in serial.tasks)
    nobacp = sched(HMULT, tech="offload")
    inner = lambda s: sum(t.cost.us for t in s.tasks if t.kernel == "InnerP")  # noqa: E731
    assert inner(nobacp) > 2 * inner(serial)  # one cube instead of four, inputs over links
    pipe = sched(HMULT, tech="pipe")
    assert any(t.part.startswith("group") for t in pipe.tasks)
    full = sched(HMULT, tech="full")
    assert any(t.part.endswith("/hmc") for t in full.tasks)  # tuned splits
    assert not any(t.part.endswith("/hmc") for t in pipe.tasks)
    assert full.makespan_us < pipe.makespan_us < serial.makespan_us


def test_no_technique_applies_without_cubes():
    a = sched(HMULT, BASE, "full")
    b = sched(HMULT, BASE, "baseline")
    assert a.makespan_us == b.makespan_us
    assert a.techniques.label() == "none"


def test_bacp_automorphism_crosses_cubes():
    assert kernels.automorphism_remote_fraction(16, 1) == 0.0
    f4 = kernels.automorphism_remote_fraction(16, 4)
    assert 0.6 < f4 <= 0.75
    hrot = sim.find_trace("bootparam_40-c6-hrot")
    s = sched(hrot, tech="serial")
    moved = [t for t in s.tasks if t.engine == "hmc" and t.cost.link_bytes > 0]
    assert moved, "the rotation's automorphism must move words between cubes"


def test_energy_is_reported_and_positive():
    s = sched(HMULT)
    assert s.energy_j["total"] > 0 and s.energy_j["dynamic"] > 0 and s.energy_j["static"] > 0
    b = sched(HMULT, BASE, "baseline")
    assert b.energy_j["link_idle"] == 0


def test_launch_mode_and_l2():
    h100 = sim.find_machine("h100")
    tr = sim.find_trace("bootparam_40-keyswitch")
    g = sched(tr, h100, "baseline", launch="graph").makespan_us
    st = sched(tr, h100, "baseline", launch="stream").makespan_us
    assert st >= g
    with pytest.raises(sim.SimInputError):
        sched(tr, h100, "baseline", launch="eager")


def test_ring_cases_match_the_traffic_model():
    o = measured.ring_case_op("key_mult", 47)
    assert o.bytes_read == 3 * 4 * 59 * 65536 * 4 and o.macs == 2 * 4 * 59 * 65536
    assert measured.kernel_family("void ntt_rows_reg<4, 1, 1, 2>(...)") == "NTT"
    assert measured.kernel_family("bconv_tensor_batch_kernel<0>") == "BConv"
    assert measured.kernel_family("key_mult_rotations_kernel<1>") == "KeyMult"
    assert measured.kernel_family("ew_kernel<3>") == "Elementwise"


def test_ncu_kernel_names_of_every_demangler_spelling():
    # Nsight Compute 2025's raw CSV writes the anonymous namespace as "unnamed>::"; older ones
    # "(anonymous namespace)::" or "<unnamed>::"; ncu_stages.py JSON keeps the base name only
    for prefix in ("void unnamed>::", "void (anonymous namespace)::", "void <unnamed>::",
                   "void theo::cuda::(anonymous namespace)::", ""):
        assert measured.kernel_family(prefix + "ntt_cols_reg<4, 0, 0, 0, 3>(RingTables)") == "NTT"
        assert measured.kernel_family(
            prefix + "bconv_tensor_batch_kernel<1>(unnamed>::TensorBatchArgs, unsigned int)") \
            == "BConv"
        assert measured.kernel_family(prefix + "key_mult_kernel<4, 0>(ConstPtrs)") == "KeyMult"
        assert measured.kernel_family(prefix + "add_kernel(unsigned int *)") == "Elementwise"
    assert measured.kernel_base_name("ntt_cols_reg") == "ntt_cols_reg"


def test_real_ncu_csv_excerpt_splits_into_families():
    # five kernels of one 47-limb key switch, ncu --csv --page raw on the H100 (columns cut)
    ks = measured.ncu_kernels(os.path.join(DATA, "h100-ncu-keyswitch-excerpt.csv"))
    assert [k["us"] for k in ks] == pytest.approx([19.744, 16.416, 19.936, 8.672, 64.384])
    fam = measured.family_sums(ks)
    assert set(fam) == {"NTT", "BConv", "KeyMult"}
    assert fam["NTT"]["launches"] == 2 and fam["NTT"]["us"] == pytest.approx(28.416)
    assert fam["BConv"]["inst"] == 8028160
    assert fam["KeyMult"]["us"] == pytest.approx(84.32)


def test_synthetic_resnet20_is_labelled():
    tr = synth.resnet20("bootparam_40-boot", "bootparam_40-l14")
    assert tr.meta["synthetic"] is True
    boots = {o.scope.split("/")[0] for o in tr.ops if o.scope.split("/")[1:2] == ["Boot"]}
    assert len(boots) == synth.RESNET20_COUNTS["bootstraps"]


# ---- command line -------------------------------------------------------------------------------


def test_cli_run_and_errors(tmp_path, capsys):
    assert cli.main(["run", "bootparam_40-c6-hmult", "--machine", "paper-gpu-hmc",
                     "--techniques", "full", "--json", str(tmp_path / "s.json")]) == 0
    out = json.loads((tmp_path / "s.json").read_text())
    assert out["techniques"] == "full" and out["time_us"] > 0
    bad = tmp_path / "bad.json"
    d = _doc()
    d["ops"][5]["macs"] = "many"
    bad.write_text(json.dumps(d))
    assert cli.main(["run", str(bad)]) == 2
    assert "ops[5].macs" in capsys.readouterr().err
    assert cli.main(["run", "bootparam_40-c6-hmult", "--machine", "no-such-machine"]) == 2
    assert cli.main(["affinity", "bootparam_40-c6-hmult"]) == 0
    assert "InnerP" in capsys.readouterr().out


# ---- tracing from Python (needs the extension) --------------------------------------------------


def test_tracing_records_a_run():
    th = pytest.importorskip("theodosian")
    if getattr(th, "_core", None) is None:
        pytest.skip("theodosian._core is not built")
    from theodosian.sim import tracing

    ctx = th.Context("test_n12", backend="cpu", allow_insecure=True, trace=True)
    kg = th.KeyGenerator(ctx)
    sk = kg.secret_key()
    ctx.relin_key = kg.relin_key(sk)
    enc = th.Encryptor(ctx, kg.public_key(sk))
    x = enc.encrypt([0.5] * ctx.slots)
    with tracing.record(ctx, "Square") as r:
        th.Evaluator(ctx).multiply(x, x, ctx.relin_key)
    tr = r.trace
    assert tr.n == ctx.n and tr.ops
    assert {o.stage for o in tr.ops} >= {"ModUp", "KeyMult", "ModDown"}
    assert all(o.scope.startswith("Square") for o in tr.ops)
    s = sim.simulate(tr, PAPER, MODEL)
    assert s.makespan_us > 0
    plain = th.Context("test_n12", backend="cpu", allow_insecure=True)
    with pytest.raises(ValueError):
        with tracing.record(plain):
            pass


# ---- calibration --------------------------------------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_committed_model_is_what_the_fit_gives():
    from theodosian.sim import calibrate

    ring_path = os.path.join(ROOT, "bench/results/h100-ops-2026-11-25.json")
    ncu_path = os.path.join(ROOT, "bench/results/h100-ncu-keyswitch-2026-11-25c.json")
    if not (os.path.exists(ring_path) and os.path.exists(ncu_path)):
        pytest.skip("bench/results not in this checkout")
    ring = {k: v for k, v in measured.bench_ops(ring_path).items() if k[0] in measured.RING_CASES}
    ncu = measured.ncu_kernels(ncu_path)
    ks = sim.find_trace("bootparam_40-keyswitch")
    assert len(calibrate.op_times(ks, ncu, MEASURED)) == 10  # 15 kernels onto 10 ops
    new, rep = calibrate.fit(MEASURED, sim.find_machine("h100"), ring, ks, ncu, {})
    for f, fam in new.families.items():
        for k in ("compute_factor", "memory_factor", "kernel_fixed_us", "instr_per_mac"):
            assert fam[k] == pytest.approx(MEASURED.families[f][k], rel=1e-3), (f, k)
    # in-sample sanity: the fitted key switch's families within 15%
    for r in calibrate.validate_families(ks, ncu, sim.find_machine("h100"), new, "ks", "h100", ""):
        assert abs(r["error_pct"]) < 15, r


def test_keyswitch_families_validate_on_the_recorded_h100_run():
    from theodosian.sim import calibrate

    path = os.path.join(ROOT, "bench/results/h100-ncu-keyswitch-2026-11-25d.json")
    if not os.path.exists(path):
        pytest.skip("bench/results not in this checkout")
    ks = sim.find_trace("bootparam_40-l25-keyswitch")
    rows = calibrate.validate_families(ks, measured.ncu_kernels(path + "#limbs_25"),
                                       sim.find_machine("h100"), MEASURED, "ks25", "h100", path)
    assert {r["family"] for r in rows} == {"NTT", "BConv", "KeyMult"}
    assert all(r["measured_us"] > 0 and abs(r["error_pct"]) < 15 for r in rows), rows


def test_measurement_readers(tmp_path):
    csv_ = tmp_path / "ks.csv"
    csv_.write_text(
        "==PROF== Connected\n"
        '"ID","Kernel Name","gpu__time_duration.sum","smsp__inst_executed.sum"\n'
        '"","","usecond","inst"\n'
        '"0","ntt_cols_reg<4, 0, 0, 0, 3>(...)","16.99","8265984"\n'
        '"1","key_mult_kernel<4, 0>(...)","20.064","4,331,520"\n'
        '{"record": "op"}\n')
    ks = measured.ncu_kernels(str(csv_))
    assert [k["us"] for k in ks] == [16.99, 20.064]
    assert ks[1]["inst"] == 4331520  # ncu's thousands separators
    assert measured.family_sums(ks)["KeyMult"]["launches"] == 1
    log = tmp_path / "boot.log"
    log.write_text("bootstrap 0: 17.0 ms, level 0 -> 13\nbootstrap 1: 16.4 ms\n"
                   "bootstrap 2: 16.6 ms\n")
    assert measured.boot_ms(str(log)) == pytest.approx(16.5)
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps({"header": {}, "results": [
        {"op": "hrot", "limbs": 47, "median_us": 310.0},
        {"op": "hrot", "limbs": 47, "median_us": 312.0}]}))
    assert measured.bench_ops(str(ops)) == {("hrot", 47): 311.0}
    with pytest.raises(sim.SimInputError):
        measured.ncu_kernels(str(tmp_path / "boot.log"))
