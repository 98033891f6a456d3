#!/usr/bin/env bash
# HELR training on the GPU (issue 20): 32 iterations of mini-batches of 1024 14 x 14 digits
# (3 vs 8), 128-bit secure parameters, ms per iteration with the phase breakdown, accuracy and
# weight precision against the plaintext reference, then a profiled pass (traffic-model bytes,
# key-switching share, time by limb count) over 4 iterations (one bootstrapping included).
#
#   scripts/gpu/workloads-helr.sh [BIN_DIR]      (run from the repository root; BIN_DIR holds
#                                                 theo_helr_bench, default build-cuda/bench)
# Build (on the build machine, ~15 min on 2 cores):
#   scripts/build build-cuda -DTHEO_CUDA=ON -DTHEO_STATIC_DEPS=ON -DTHEO_BUILD_TESTS=OFF \
#     -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
#   (or: cmake --build build-cuda --target theo_helr_bench)
# Writes $OUT/workloads-helr/{helr.json,*.log}. Expected run time: 3-6 minutes (key generation
# and batch encryption on the host dominate; the timed training is ~1 s per preset).
set -uo pipefail
# shellcheck source=scripts/gpu/workloads-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/workloads-common.bash"
workloads_setup workloads-helr theo_helr_bench "${1:-}"
data="$root/python/theodosian/data/digits14.bin"
run() {  # name, then arguments
  local name="$1"; shift
  echo "== $name: $*"
  timeout 900 "$exe" --backend cuda --data "$data" --json "$out/helr.json" "$@" \
    > "$out/$name.jsonl" 2> "$out/$name.log"
  local r=$?
  tail -n 3 "$out/$name.log"; cat "$out/$name.jsonl"
  [[ $r -eq 0 ]] || { echo "workloads-helr: $name failed (exit $r)"; rc=1; }
}
# The paper's parameter set (Cheddar's bootparam_40: N = 2^16, Delta = 2^40, secure), with the
# profiled pass.
run bootparam_40 --preset bootparam_40 --batch 1024 --iterations 32 --profile 4 --seed 1
# A/B: double-hoisted radix-4 reductions (same data, same seed).
run bootparam_40_radix4 --preset bootparam_40 --batch 1024 --iterations 32 --radix 4 --seed 1
# The library's own secure 25-30 prime system with the same level structure.
run n16_s40_boot --preset n16_s40_boot --batch 1024 --iterations 32 --seed 1
echo "workloads-helr: results in $out (helr.json: one record per line)"
exit $rc
