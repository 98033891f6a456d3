#!/usr/bin/env bash
# Encrypted ResNet-20 inference on the GPU (issue 20): 128-bit secure parameters (bootparam_40:
# N = 2^16, Delta = 2^40, 16 levels fresh, 13 after each bootstrapping), 100 test images
# (scikit-learn digits upscaled to 32x32x3), each encrypted -> 19 convolutions + 19 quadratic
# activations + 2 bootstrappings (placed by the level planner) -> decrypted; class agreement with
# the plaintext model (same weights, same activation), logits precision in bits, accuracies,
# ms per image (median), then a profiled image (phase breakdown: bootstrapping share,
# key-switching share, time by limb-count range as the paper's Fig. 8b, traffic-model bytes).
#
#   scripts/gpu/workloads-resnet.sh [BIN_DIR]     (run from the repository root; BIN_DIR holds
#                                                  theo_resnet, default build-cuda/bench)
# Build (on the build machine, ~15 min on 2 cores; only this target is needed):
#   cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEO_CUDA=ON \
#     -DTHEO_STATIC_DEPS=ON -DTHEO_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
#     -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache && cmake --build build-cuda -j2 --target theo_resnet
# Needs examples/models/resnet20_digits.theocnn and examples/models/digits_test8x8.json (in the
# repository). Writes $OUT/workloads-resnet/{resnet.json,*.log,*.jsonl,gpu.txt}.
#
# Runs, in this order:
#   1. min-keys layers (~30 shared power-of-two rotation keys, weights over Q_l: 26 GB of
#      weights + ~12 GB of keys; fits an 80 GB H100): 100 images + profile;
#   2. the fast layers (double-hoisted BSGS, one key per distinct rotation: 51.6 GB of weights
#      over Q_l u P + ~25 GB of keys at 124 MB each): only on a card with >= 120 GB (H200);
#      FAST=1 forces it (on 80 GB it ends in OutOfMemoryError after ~1 min).
# The 8456 weight diagonals (stem 36, stage-1 convs 144, stage-2 256/392, stage-3 648/900,
# shortcuts 16, FC 160) sit at the levels the planner gives (stem 16; blocks at 14/10/6, then
# 13/9/5 after each bootstrapping; FC at 1).
# Expected run time: 6-12 minutes (per run: compile = encoding ~9000 weight diagonals on the
# host and the GPU, 1-2 min; keys < 1 min; 100 images at 0.1-0.5 s each; the profiled image
# synchronizes every op, ~10 s).
set -uo pipefail
# shellcheck source=scripts/gpu/workloads-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/workloads-common.bash"
workloads_setup workloads-resnet theo_resnet "${1:-}"
model="$root/examples/models/resnet20_digits.theocnn"
images="$root/examples/models/digits_test8x8.json"
cat "$out/gpu.txt"
run() {  # name, then arguments
  local name="$1"; shift
  echo "== $name: $*"
  timeout 900 "$exe" --backend cuda --model "$model" --images "$images" --out "$out/resnet.json" \
    "$@" > "$out/$name.jsonl" 2> "$out/$name.log"   # a later --model overrides this one
  local r=$?
  grep -v "bootstrap keys\]" "$out/$name.log" | tail -n 25; cat "$out/$name.jsonl"
  [[ $r -eq 0 ]] || { echo "workloads-resnet: $name failed (exit $r)"; rc=1; }
  nvidia-smi --query-gpu=memory.used --format=csv >> "$out/gpu.txt" 2>&1 || true
}
# A quick functional check first (the reduced network on the small insecure preset, seconds).
run smoke --model "$root/examples/models/resnet8_tiny_digits.theocnn" --preset test_boot_n12 \
  --insecure --count 3
run min_keys --preset bootparam_40 --count 100 --profile --min-keys
mem_mib="$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -n1)"
if [[ "${FAST:-0}" == 1 || "${mem_mib:-0}" -ge 120000 ]]; then
  run fast --preset bootparam_40 --count 100 --profile
else
  echo "workloads-resnet: skipping the fast layers (${mem_mib:-?} MiB < 120000: weights + keys ~77 GB)"
fi
echo "workloads-resnet: results in $out (resnet.json: one record per line)"
exit $rc
