#!/usr/bin/env bash
# Issue 23, phase 1: KeyMult at the bootparam_40 shapes with full switching keys against compact
# keys (the uniform halves expanded in the kernel from a seed, ChaCha8 / 12 / 20), alone and
# beside a DRAM-bound copy or an integer-bound kernel on a second stream; bit-exact against the
# CPU reference first (bench/compact_keys_probe.cu). Runs prebuilt binaries; expected time on an
# H100: about 1 minute (at most 4.5 minutes: 90 s + 180 s limits).
#
#   scripts/gpu/compact-keys.sh [BIN_DIR]        BIN_DIR holds theo_compact_keys_probe
#                                                (default: build-cuda/bench)
#
# Build (on a machine with CUDA, from the repository root; ~15-30 min on 2 cores):
#   cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEO_CUDA=ON \
#         -DTHEO_CUDA_ARCHS=90 -DTHEO_STATIC_DEPS=ON
#   cmake --build build-cuda --target theo_compact_keys_probe
# then carry build-cuda/bench/theo_compact_keys_probe to the GPU machine.
#
# Writes under $OUT/compact-keys/: gpu.txt (nvidia-smi), check.log (bit-exactness only, the GPU
# test), probe.json (every record: bit_exact, spill_pools, key_mult per variant and companion,
# expand_a), probe.log, summary.txt. Exit status: 0 when everything ran bit-exact, 1 otherwise,
# 77 without a usable GPU.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bin_dir="${1:-$here/build-cuda/bench}"
probe="$bin_dir/theo_compact_keys_probe"
out="${OUT:?set OUT to the output folder}/compact-keys"
mkdir -p "$out"
[[ -x "$probe" ]] || { echo "compact-keys: no executable $probe" | tee "$out/summary.txt"; exit 2; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.sm \
  --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

status=0
echo "== bit-exactness (--check) ==" | tee "$out/summary.txt"
timeout 90 "$probe" --check >"$out/check.log" 2>&1
rc=$?
echo "check rc=$rc" | tee -a "$out/summary.txt"
if [[ $rc -eq 77 ]]; then
  echo "compact-keys: no usable GPU, skipped" | tee -a "$out/summary.txt"
  exit 77
fi
[[ $rc -eq 0 ]] || status=1

echo "== benchmark ==" | tee -a "$out/summary.txt"
timeout 180 "$probe" --reps 20 --out "$out/probe.json" >"$out/probe.log" 2>&1
rc=$?
echo "probe rc=$rc" | tee -a "$out/summary.txt"
[[ $rc -eq 0 ]] || status=1

# One line per KeyMult measurement: shape, variant, companion, median and the time alone.
python3 - "$out/probe.json" 2>&1 <<'PY' | tee -a "$out/summary.txt" || true
import json, sys
recs = json.load(open(sys.argv[1]))
for r in recs:
    if r["op"] == "key_mult":
        print(f'L={r["limbs"]:2d}+{r["aux"]} d={r["digits"]} keys={r["keys"]} '
              f'{r["variant"]:10s} with {r["concurrent"]:4s}: {r["median_us"]:8.1f} us '
              f'(alone {r["alone_us"]:7.1f}, companion alone {r["companion_alone_us"]:7.1f})')
    elif r["op"] in ("spill_pools", "expand_a", "bit_exact"):
        print(json.dumps(r))
PY
exit $status
