#!/usr/bin/env bash
# Issue 31: bootstrapping with its levers, against the anchor in the same call.
# Runs prebuilt static binaries; expected time on an H100 / H200: 4-5 minutes with the default
# ANCHOR_PRESETS=bootparam_40 (the anchor ~2 min: ~115 s of host set-up, then its two
# bootstrappings; the GPU bootstrapping test ~20 s; theo_boot_levers ~1.5-2 min). Each further
# anchor preset adds ~2 min.
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
#   (ABLATION=1 also needs theo_bench)
#
# Order: the anchor first (each preset in its own run, ANCHOR_TIMEOUT seconds), so that a run cut
# short never loses it; then the GPU test; then the levers.
# Environment:
#   ANCHOR_PRESETS  anchor presets, comma-separated (default bootparam_40; bootparam_35 is the
#                   Table IV preset's counterpart)
#   ANCHOR_TIMEOUT  seconds per anchor preset (default 200)
#   CONFIGS         theo_boot_levers --configs for bootparam_40 (default below)
#   REPS            graph replays per config (default 20)
#   SKIP_TESTS=1, SKIP_ANCHOR=1
#   ABLATION=1      afterwards, theo_bench --ablation (every memory step and the kept levers,
#                   KeySwitch and Boot; ~5 more minutes) into ablation-<card>.json
# Records of the ratio runs carry config "...@ratioNN" in the summary (message_ratio_bits).
#
# Writes under $OUT/boot-levers/: gpu.txt, anchor-<preset>.log (+ .tsv), test-bootstrap-gpu.log,
# levers-*.log / .json (theo_boot_levers: every record), boot-<card>.json (the issue's records:
# op "boot", preset, mode, device, median_ms, precision_bits, phases_ms, effective_levels,
# anchor_ms (the anchor's time for the same preset or its counterpart, this call), git_commit,
# one per preset, config and mode) and summary.txt (the table, printed last). Exit status 0 when
# everything ran, 1 otherwise, 2 without the binaries.
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
t_start=$SECONDS

# 1. The anchor, first: each preset alone (Boot-Basic and Boot-MinKS).
if [[ -n "$anchor" && "${SKIP_ANCHOR:-0}" != 1 ]]; then
  if [[ -x "$anchor/run.sh" ]]; then
    IFS=',' read -r -a anchor_presets <<<"${ANCHOR_PRESETS:-bootparam_40}"
    for p in "${anchor_presets[@]}"; do
      echo "== anchor $p ($anchor, timeout ${ANCHOR_TIMEOUT:-200} s)"
      BASIC_FILTER='-*' BOOT_FILTER="*Bootstrap/${p}_json" TIMEOUT_S="${ANCHOR_TIMEOUT:-200}" \
        "$anchor/run.sh" "$out/anchor-$p.log" >/dev/null 2>&1 || status=1
      grep -E "Boot" "$out/anchor-$p.log.tsv" 2>/dev/null || echo "anchor $p: no timing rows"
    done
  else
    echo "anchor: no run.sh in $anchor"; status=1
  fi
fi
echo "   ($((SECONDS - t_start)) s)"

# 2. The GPU bootstrapping test (bootparam_40 / 35 / 30, 10 fresh inputs each, the anchor's
#    precision figures as floors; CPU = CUDA words for SlotToCoeff first with the EvalMod tail
#    merged and not).
if [[ "${SKIP_TESTS:-0}" != 1 && -x "$gputest" ]]; then
  echo "== test_circuits_bootstrap_gpu"
  timeout 240 "$gputest" >"$out/test-bootstrap-gpu.log" 2>&1 || status=1
  grep -E "^\[(  PASSED|  FAILED|==========)|precision|cpu .* bits" "$out/test-bootstrap-gpu.log" |
    tail -n 14
fi
echo "   ($((SECONDS - t_start)) s)"

# 3. The levers. bootparam_40: the baseline, call 1's kept set, that set with the merged EvalMod
#    tail (the new kept set), and the library's defaults (SlotToCoeff last, what the workloads run
#    until their planners place the input at Bootstrapper::input_level()). The Table IV presets
#    with the new kept set at message ratios 2^12..2^14, and bootparam_35.
kept="inplace_constants+lazy_polynomial+slot_to_coeff_first"
new="$kept+merged_evalmod_tail"
defaults="inplace_constants+lazy_polynomial+merged_evalmod_tail"
configs40="${CONFIGS:-baseline,$kept,$new,$defaults}"
run_levers() {  # name, then theo_boot_levers arguments
  local name="$1"; shift
  echo "== theo_boot_levers $name: $*"
  timeout 300 "$levers" --backend cuda --reps "${REPS:-20}" --insecure --out "$out/levers-$name.json" \
    "$@" >"$out/levers-$name.log" 2>&1 || status=1
  grep -E "^  " "$out/levers-$name.log"
}
run_levers b40 --presets bootparam_40 --configs "$configs40"
run_levers t4 --presets n16_s35_t4,n16_s35_t4_s55,bootparam_35 --configs "$new"
# SlotToCoeff first at Delta = 2^35: the ratio a bit higher (n16_s35_t4: sin's curvature, 2^-23
# at 2^13, matters next to the one rounding left) and lower (n16_s35_t4_s55: its EvalMod levels
# at 2^55 carry 3 bits more noise, which the ratio amplifies).
run_levers t4r14 --presets n16_s35_t4 --configs "$new" --ratio 14
run_levers t4r12 --presets n16_s35_t4_s55 --configs "$new" --ratio 12
echo "   ($((SECONDS - t_start)) s)"

# 4. Optionally the ablation (memory steps, then the kept levers; KeySwitch and Boot).
card="gpu"
grep -q H200 "$out/gpu.txt" && card=h200
grep -q H100 "$out/gpu.txt" && card=h100
if [[ "${ABLATION:-0}" == 1 ]]; then
  if [[ -x "$bin/bench/theo_bench" ]]; then
    echo "== theo_bench --ablation"
    timeout 540 "$bin/bench/theo_bench" --ablation --out "$out/ablation-$card.json" \
      >"$out/ablation.log" 2>&1 || status=1
    grep -E "^  Boot|bit-exact" "$out/ablation.log" | tail -n 24
  else
    echo "ablation: no $bin/bench/theo_bench"; status=1
  fi
fi

# 5. The issue's records (anchor_ms filled in) and the table.
python3 - "$out" "$card" <<'PY' || status=1
import glob, json, os, re, sys
out, card = sys.argv[1], sys.argv[2]
anchor = {}
for tsv in sorted(glob.glob(os.path.join(out, "anchor-*.log.tsv"))):
    for line in open(tsv):
        f = line.rstrip("\n").split("\t")
        if len(f) == 4 and f[2] == "us" and "Basic" in f[1]:
            m = re.search(r"(bootparam_\d+)_json", f[0])
            if m:
                anchor[m.group(1)] = float(f[3]) / 1e3
records = []
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
short = {"inplace_constants": "inpl", "lazy_polynomial": "lazy", "slot_to_coeff_first": "stc1",
         "merged_evalmod_tail": "merged", "batched_evalmod": "batched"}
lines = ["%-14s %-26s %-5s %8s %6s %6s %6s %6s %6s %6s %5s %5s %6s" % (
    "preset", "config", "mode", "ms", "bits", "worst", "xanch", "Raise", "CtS", "EvMod", "StC",
    "lvls", "in")]
for r in records:
    p = r.get("phases_ms", {})
    ratio = r.get("ratio_to_anchor")
    label = "+".join(short.get(x, x) for x in r["config"].split("+"))
    if r["source"].startswith("levers-t4r"):
        label += "@r%.0f" % r.get("message_ratio_bits", 0)
    lines.append("%-14s %-26s %-5s %8.2f %6.2f %6.2f %6s %6.2f %6.2f %6.2f %6.2f %5d %5d" % (
        r["preset"], label[-26:], r["mode"], r["median_ms"], r["precision_bits"],
        r.get("precision_min_bits", 0), "%.3f" % ratio if ratio else "-", p.get("ModRaise", 0),
        p.get("CoeffToSlot", 0), p.get("EvalMod", 0), p.get("SlotToCoeff", 0),
        r["effective_levels"], r["input_level"]))
for k, v in sorted(anchor.items()):
    lines.append(f"anchor {k}: {v:.2f} ms (Boot-Basic, this call)")
text = "\n".join(lines)
open(os.path.join(out, "summary.txt"), "w").write(text + "\n")
print(text)
PY
echo "boot-levers: $((SECONDS - t_start)) s"
exit $status
