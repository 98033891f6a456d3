#!/usr/bin/env bash
# HMC simulator validation on the GPU (issue 22): measures what the simulator's GPU-only model is
# fitted on and checked against, on the lent card, then fits and validates it there.
#
#   scripts/gpu/hmc-validate.sh [BIN_DIR]     (run from the repository root; BIN_DIR holds
#                                              theo_bench, theo_boot_demo and theo_trace, default
#                                              build-cuda/{bench,apps})
# Build (on the build machine, ~15-20 min on 2 cores):
#   scripts/build build-cuda -DTHEO_CUDA=ON -DTHEO_STATIC_DEPS=ON -DTHEO_BUILD_TESTS=OFF \
#     -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
#   (or: cmake --build build-cuda --target theo_bench theo_boot_demo theo_trace)
# Needs on the GPU machine: python3 with numpy (no extension build: theodosian.sim is pure
# Python), ncu (Nsight Compute) on PATH or in /usr/local/cuda/bin.
#
# Steps (expected ~10 minutes in all, ncu ~3 of them; RESNET=0: ~7):
#   1. ring cases (single ops, CUDA events): the fit's data                      ~30 s
#   2. scheme ops keyswitch / hmult / hrot / ... at 14, 25, 35, 47 limbs          ~40 s
#   3. op traces recorded on the GPU itself (theo_trace --backend cuda), HELR included, for the
#      card's L2 and for the paper GPU's 6 MiB                                       ~90 s
#      and the library's ResNet-20 inference (min-keys layers)                        ~3 min
#   4. Boot bootparam_40, graph replay, 10 runs                                   ~30 s
#   5. ncu kernel times of one keyswitch at 47 and at 25 limbs                    ~60 s
#   6. ncu kernel times of one whole bootstrapping (profile range, 1 metric)     <= 180 s
#   7. python3 -m theodosian.sim fit + validate -> JSON                           ~20 s
# Writes $OUT/hmc-validate/: ring.json, ops.json, traces/, boot.log, ks47.csv, ks25.csv,
# boot_ncu.csv, model-fresh.json, h100-hmc-sim-validation-<date>.json (records
# {"record": "validation", "family", "workload", "measured_us", "simulated_us", "error_pct",
# "device"}), validate.log. Acceptance: |error| <= 15% per family, <= 10% for the whole Boot.
# Afterwards, on any CPU (no GPU needed, ~10 minutes), the study on these traces, HELR included:
#   PYTHONPATH=python python3 -m theodosian.sim study --traces $OUT/hmc-validate/traces \
#     --workloads boot hmult hrot helr resnet20 --out bench/results/h100-hmc-sim-study-<date>.json \
#     --plots DIR
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin="${1:-}"
out="${OUT:-$root/out}/hmc-validate"
mkdir -p "$out/traces"
find_bin() {  # name -> path
  local n="$1" d
  for d in "$bin" "$root/build-cuda/bench" "$root/build-cuda/apps" "$root/build-cuda"; do
    [[ -n "$d" && -x "$d/$n" ]] && { echo "$d/$n"; return 0; }
  done
  return 1
}
bench="$(find_bin theo_bench)" || { echo "hmc-validate: no theo_bench"; exit 2; }
boot="$(find_bin theo_boot_demo)" || { echo "hmc-validate: no theo_boot_demo"; exit 2; }
trace="$(find_bin theo_trace)" || { echo "hmc-validate: no theo_trace"; exit 2; }
ncu="$(command -v ncu || echo /usr/local/cuda/bin/ncu)"
py="${PYTHON:-python3}"
export PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  > "$out/gpu.txt" 2>&1 || true
cat "$out/gpu.txt"
device="$(sed -n 2p "$out/gpu.txt" | cut -d, -f1)"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
rc=0
t0=$SECONDS
step() { echo "== [$((SECONDS - t0)) s] $*"; }

step "1 ring cases"
timeout 120 "$bench" --backend cuda --ops ntt,intt,bconv,bconv_modup,key_mult,add,mul,mul_scalar,tensor,automorphism,automorphism_sum \
  --limbs 3,14,23,35,47 --reps 30 --warmup 5 --out "$out/ring.json" > "$out/ring.log" 2>&1 || rc=1

step "2 scheme ops"
timeout 180 "$bench" --backend cuda --ops keyswitch,hmult,hrot,hmult_rescale,rescale,pmult,hadd \
  --limbs 14,25,35,47 --reps 30 --warmup 5 --out "$out/ops.json" > "$out/ops.log" 2>&1 || rc=1

step "3 traces on the GPU"
timeout 240 "$trace" bootparam_40 --backend cuda --commit "$commit" \
  --workloads boot,keyswitch,hmult,hrot,hmult_rescale,rescale,pmult,hadd,helr \
  --out-dir "$out/traces" > "$out/trace.log" 2>&1 || rc=1
for l in 14 25 35; do
  mkdir -p "$out/traces/l$l"
  timeout 120 "$trace" bootparam_40 --backend cuda --limbs $l --commit "$commit" \
    --workloads keyswitch,hmult,hrot,hmult_rescale,rescale,pmult,hadd \
    --out-dir "$out/traces/l$l" >> "$out/trace.log" 2>&1 || rc=1
  for f in "$out/traces/l$l"/bootparam_40-*.json; do
    [[ -f "$f" ]] && mv "$f" "$out/traces/bootparam_40-l$l-$(basename "$f" | sed 's/^bootparam_40-//')"
  done
  rmdir "$out/traces/l$l" 2>/dev/null
done
# the same for the paper GPU's 6 MiB L2 (the study's paper setting), with the layer ops of the
# synthetic ResNet-20 at 14 limbs
mkdir -p "$out/traces/c6"
timeout 240 "$trace" bootparam_40 --backend cuda --cache-mib 6 --commit "$commit" \
  --workloads boot,hmult,hrot,keyswitch,helr --out-dir "$out/traces/c6" >> "$out/trace.log" 2>&1 || rc=1
mkdir -p "$out/traces/c6/l14"
timeout 120 "$trace" bootparam_40 --backend cuda --cache-mib 6 --limbs 14 --commit "$commit" \
  --workloads hrot,pmult,hadd,hmult_rescale,rescale --out-dir "$out/traces/c6/l14" \
  >> "$out/trace.log" 2>&1 || rc=1
for f in "$out/traces/c6"/bootparam_40-*.json; do
  [[ -f "$f" ]] && mv "$f" "$out/traces/bootparam_40-c6-$(basename "$f" | sed 's/^bootparam_40-//')"
done
for f in "$out/traces/c6/l14"/bootparam_40-*.json; do
  [[ -f "$f" ]] && mv "$f" "$out/traces/bootparam_40-c6-l14-$(basename "$f" | sed 's/^bootparam_40-//')"
done
rm -rf "$out/traces/c6"
if [[ "${RESNET:-1}" == 1 ]]; then
  # the library's own ResNet-20 (quadratic activation, 2 bootstrappings), min-keys layers so the
  # encoded weights and keys fit 80 GB: compiling encodes ~8500 weight diagonals (1-2 min)
  step "3b ResNet-20 trace (RESNET=0 skips it)"
  timeout 360 "$trace" bootparam_40 --backend cuda --commit "$commit" --workloads resnet20 \
    --resnet-min-keys --resnet-model "$root/examples/models/resnet20_digits.theocnn" \
    --out-dir "$out/traces" >> "$out/trace.log" 2>&1 || rc=1
fi
tail -n 14 "$out/trace.log"

step "4 Boot (graph replay)"
timeout 180 "$boot" bootparam_40 --graph --runs 10 --backend cuda > "$out/boot.log" 2>&1 || rc=1
grep -E "^bootstrap [0-9]+:" "$out/boot.log" | tail -n 3

if [[ -x "$ncu" ]]; then
  step "5 ncu: one keyswitch at 47 and at 25 limbs"
  for l in 47 25; do
    THEO_PROFILE_RANGE=1 timeout 150 "$ncu" --clock-control none --cache-control none \
      --profile-from-start off --csv --page raw \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum \
      "$bench" --backend cuda --ops keyswitch --limbs $l --reps 1 --warmup 1 \
      > "$out/ks$l.csv" 2> "$out/ks$l.err" || rc=1
  done
  if [[ "${NCU_BOOT:-1}" == 1 ]]; then
    step "6 ncu: one whole bootstrapping (eager, profile range, gpu__time_duration only; NCU_BOOT=0 skips it)"
    timeout 200 "$ncu" --clock-control none --cache-control none --profile-from-start off \
      --csv --page raw --metrics gpu__time_duration.sum \
      "$boot" bootparam_40 --runs 1 --profile --backend cuda \
      > "$out/boot_ncu.csv" 2> "$out/boot_ncu.err" || rc=1
    echo "boot kernels profiled: $(grep -c '^"' "$out/boot_ncu.csv" 2>/dev/null)"
  fi
else
  echo "hmc-validate: no ncu at $ncu: the per-family validation is skipped"; rc=1
fi

step "7 fit and validate"
date="$(date -u +%Y-%m-%d)"
# The bundled machine description of this card (theodosian/sim/machines/), H100 unless it is an
# H200; MACHINE overrides.
machine="${MACHINE:-$(echo "$device" | grep -oiE 'h200|h100' | head -n1 | tr '[:upper:]' '[:lower:]')}"
machine="${machine:-h100}"
args=(--machine "$machine" --device "$device" --traces "$out/traces" --ops "$out/ops.json"
      --boot-log "$out/boot.log")
[[ -s "$out/ks47.csv" ]] && args+=(--ncu-keyswitch "$out/ks47.csv")
[[ -s "$out/boot_ncu.csv" ]] && args+=(--boot-ncu "$out/boot_ncu.csv")
{
  fitargs=(--ring "$out/ring.json" --machine "$machine" --out "$out/model-fresh.json")
  [[ -s "$out/ks47.csv" ]] &&
    fitargs+=(--ncu "$out/ks47.csv" --trace "$out/traces/bootparam_40-keyswitch.json")
  "$py" -m theodosian.sim fit "${fitargs[@]}"
  echo "-- fitted on this run's ring cases"
  "$py" -m theodosian.sim validate "${args[@]}" --model "$out/model-fresh.json" \
    --out "$out/$machine-hmc-sim-validation-$date.json"
  if [[ -s "$out/ks25.csv" ]]; then
    "$py" -m theodosian.sim validate --machine "$machine" --device "$device" --traces "$out/traces" \
      --model "$out/model-fresh.json" --ncu-keyswitch "$out/ks25.csv" --ncu-limbs 25 \
      --out "$out/$machine-hmc-sim-validation-ks25-$date.json"
  fi
  echo "-- the committed model (theodosian/sim/model.json)"
  "$py" -m theodosian.sim validate "${args[@]}" --out "$out/$machine-hmc-sim-validation-committed-$date.json"
} > "$out/validate.log" 2>&1 || rc=1
cat "$out/validate.log"
step "done (rc $rc); results in $out"
exit $rc
