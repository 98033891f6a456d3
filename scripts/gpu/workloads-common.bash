# shellcheck shell=bash
# Sourced by scripts/gpu/workloads-*.sh: where the binary and the output folder are.

# workloads_setup TOPIC EXE [BIN_DIR]: sets root (the repository), out ($OUT/TOPIC, default
# out/TOPIC, made), exe (BIN_DIR/EXE; BIN_DIR defaults to build-cuda/bench) and rc=0; exits 2 when
# the binary is missing. The card's name, memory and clock go to $out/gpu.txt.
# shellcheck disable=SC2034  # rc is the sourcing script's exit status
workloads_setup() {
  local topic="$1" name="$2"
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  local bin="${3:-$root/build-cuda/bench}"
  out="${OUT:-$root/out}/$topic"
  mkdir -p "$out"
  exe="$bin/$name"
  [[ -x "$exe" ]] || { echo "$topic: no $exe (build $name first)"; exit 2; }
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$out/gpu.txt" 2>&1 || true
  rc=0
}
