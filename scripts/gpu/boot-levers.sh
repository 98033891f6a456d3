#!/usr/bin/env bash
# Issue 31: bootstrapping with its levers one at a time, against the anchor in the same call.
# Runs prebuilt static binaries; expected time on an H100 / H200: 4-5 minutes (GPU test ~1 min,
# theo_boot_levers ~2 min, the anchor's two bootstrapping tests ~1-1.5 min).
#
#   scripts/gpu/boot-levers.sh BIN_DIR [ANCHOR_DIR]     (from the repository root)
#     BIN_DIR     a build folder holding bench/theo_boot_levers and
#                 tests/circuits/test_circuits_bootstrap_gpu (e.g. build-cuda)
#     ANCHOR_DIR  the anchor's folder (bin/boot_test, run.sh; e.g. .carry/cheddar); without it the
#                 anchor is not run and anchor_ms stays null
#
# Build (on the build machine, ~20-30 min on 2 cores with a warm ccache):
#   cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEO_CUDA=ON \
#         -DTHEO_STATIC_DEPS=ON -DTHEO_CUDA_ARCHS=90
#   cmake --build build-cuda --target theo_boot_levers test_circuits_bootstrap_gpu
#
# Environment: CONFIGS (theo_boot_levers --configs for bootparam_40), REPS (graph replays per
# config, default 20), SKIP_TESTS=1, SKIP_ANCHOR=1.
# Records of the ratio runs carry config "...@ratioNN" in the summary (message_ratio_bits).
#
# Writes under $OUT/boot-levers/: gpu.txt, test-bootstrap-gpu.log, levers.log and levers.json
# (theo_boot_levers: every record), anchor.log (+ .tsv), boot-<card>.json (the issue's records:
# op "boot", preset, mode, device, median_ms, precision_bits, phases_ms, effective_levels,
# anchor_ms, git_commit, one per preset, config and mode) and summary.txt (the table, printed
# last). Exit status 0 when everything ran, 1 otherwise, 2 without the binaries.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:?usage: scripts/gpu/boot-levers.sh BIN_DIR [ANCHOR_DIR]}"
anchor="${2:-}"
out="${OUT:-$root/out}/boot-levers"
mkdir -p "$out"
levers="$bin/bench/theo_boot_levers"
gputest="$bin/tests/circuits/test_circuits_bootstrap_gpu"
[[ -x "$levers" ]] || { echo "boot-levers: no $levers (build theo_boot_levers)"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm \
  --format=csv >"$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"
status=0

# 1. The GPU bootstrapping test (bootparam_40 / 35 / 30, 10 fresh inputs each, the anchor's
#    precision figures as floors; bit-exact ModRaise ring ops CPU vs CUDA).
if [[ "${SKIP_TESTS:-0}" != 1 && -x "$gputest" ]]; then
  echo "== test_circuits_bootstrap_gpu"
  timeout 240 "$gputest" >"$out/test-bootstrap-gpu.log" 2>&1 || status=1
  grep -E "^\[(  PASSED|  FAILED|==========)|precision" "$out/test-bootstrap-gpu.log" | tail -n 12
fi

# 2. The levers: bootparam_40 (baseline, each lever, the kept set), the two Table IV presets and
#    bootparam_35 (baseline and the kept set).
kept="inplace_constants+lazy_polynomial+slot_to_coeff_first"
configs40="${CONFIGS:-baseline,inplace_constants,lazy_polynomial,slot_to_coeff_first,batched_evalmod,inplace_constants+lazy_polynomial,$kept}"
run_levers() {  # name, then theo_boot_levers arguments
  local name="$1"; shift
  echo "== theo_boot_levers $name: $*"
  timeout 300 "$levers" --backend cuda --reps "${REPS:-20}" --insecure --out "$out/levers-$name.json" \
    "$@" >"$out/levers-$name.log" 2>&1 || status=1
  grep -E "^  " "$out/levers-$name.log"
}
run_levers b40 --presets bootparam_40 --configs "$configs40"
run_levers t4 --presets n16_s35_t4,n16_s35_t4_s55,bootparam_35 --configs "baseline,$kept"
# SlotToCoeff first at Delta = 2^35: the message ratio a bit lower and higher than the default
# 2^13 (less of EvalMod's noise amplified / less of sin's curvature).
run_levers t4r12 --presets n16_s35_t4,n16_s35_t4_s55 --configs "$kept" --ratio 12
run_levers t4r14 --presets n16_s35_t4,n16_s35_t4_s55 --configs "$kept" --ratio 14

# 3. The anchor, same call: bootparam_40 and bootparam_35 (Boot-Basic and Boot-MinKS each).
if [[ -n "$anchor" && "${SKIP_ANCHOR:-0}" != 1 ]]; then
  if [[ -x "$anchor/run.sh" ]]; then
    echo "== anchor ($anchor)"
    BASIC_FILTER='-*' BOOT_FILTER='*Bootstrap/bootparam_40_json:*Bootstrap/bootparam_35_json' \
      TIMEOUT_S=200 "$anchor/run.sh" "$out/anchor.log" >/dev/null 2>&1 || status=1
    grep -E "Boot" "$out/anchor.log.tsv" 2>/dev/null || echo "anchor: no timing rows"
  else
    echo "anchor: no run.sh in $anchor"; status=1
  fi
fi

# 4. The issue's records (anchor_ms filled in) and the table.
python3 - "$out" <<'PY' || status=1
import json, os, re, subprocess, sys
out = sys.argv[1]
anchor = {}
tsv = os.path.join(out, "anchor.log.tsv")
if os.path.exists(tsv):
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) == 4 and f[2] == "us" and "Basic" in f[1]:
            m = re.search(r"(bootparam_\d+)_json", f[0])
            if m:
                anchor[m.group(1)] = float(f[3]) / 1e3
card = "gpu"
try:
    name = open(os.path.join(out, "gpu.txt")).read()
    card = "h200" if "H200" in name else "h100" if "H100" in name else "gpu"
except OSError:
    pass
records = []
def fn_ratio(r):
    return r.get("source", "").startswith("levers-t4r")
for fn in sorted(os.listdir(out)):
    if not (fn.startswith("levers-") and fn.endswith(".json")):
        continue
    try:
        data = json.load(open(os.path.join(out, fn)))
    except (OSError, ValueError):
        continue
    for r in data:
        if r.get("op") != "boot":
            continue
        # The anchor's Table IV counterpart of our own Delta = 2^35 preset is its bootparam_35.
        ref = "bootparam_35" if r["preset"].startswith(("n16_s35_t4", "bootparam_35")) else r["preset"]
        r["source"] = fn
        r["anchor_ms"] = anchor.get(ref)
        r["anchor_preset"] = ref if ref in anchor else None
        if r["anchor_ms"]:
            r["ratio_to_anchor"] = r["median_ms"] / r["anchor_ms"]
        records.append(r)
with open(os.path.join(out, f"boot-{card}.json"), "w") as f:
    f.write("[\n" + ",\n".join("  " + json.dumps(r) for r in records) + "\n]\n")
lines = ["%-13s %-54s %-5s %8s %6s %6s %6s %6s %6s %6s %6s %5s %6s" % (
    "preset", "config", "mode", "ms", "bits", "xanch", "Raise", "CtS", "EvMod", "StC",
    "lvls", "in", "set-up")]
for r in records:
    p = r.get("phases_ms", {})
    ratio = r.get("ratio_to_anchor")
    label = r["config"] + ("@ratio%.0f" % r.get("message_ratio_bits", 0) if fn_ratio(r) else "")
    lines.append("%-13s %-54s %-5s %8.2f %6.2f %6s %6.2f %6.2f %6.2f %6.2f %6d %5d %6.2f" % (
        r["preset"], label[-54:], r["mode"], r["median_ms"], r["precision_bits"],
        "%.3f" % ratio if ratio else "-", p.get("ModRaise", 0), p.get("CoeffToSlot", 0),
        p.get("EvalMod", 0), p.get("SlotToCoeff", 0), r["effective_levels"], r["input_level"],
        r["setup_s"]))
for k, v in sorted(anchor.items()):
    lines.append(f"anchor {k}: {v:.2f} ms")
text = "\n".join(lines)
open(os.path.join(out, "summary.txt"), "w").write(text + "\n")
print(text)
PY
exit $status
