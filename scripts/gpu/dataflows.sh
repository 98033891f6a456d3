#!/usr/bin/env bash
# Key-switching dataflows on the GPU (issue 21), in one device call:
#  1. bit-exactness: test_cuda_dataflows (every dataflow and chunk count against the CPU, eager
#     and from a CUDA Graph) and test_cuda_pipeline (every scheduled mechanism under Auto);
#  2. tuning tables (theo_tune) in $OUT/dataflows/tuning: the top level of every secure cell of
#     the dataflow grid, and every level of bootparam_40;
#  3. the grid sweep (theo_bench --dataflows): HMult and KeySwitch under every fixed dataflow
#     and chunk count and under Auto (with the tables of step 2), one JSON record per
#     (cell, op, dataflow, chunks);
#  4. Boot bootparam_40 (graph, 10 runs each) with today's dataflow (DPOB fixed), Auto with the
#     table and Auto from the footprint model alone, interleaved twice; with BASE_BIN set, also
#     that directory's theo_boot_demo (e.g. a build of main) for an A/B against the old binary;
#  5. bench/plot_dataflows.py: the Fig. 4 / Fig. 7 heat map PNG and the acceptance summary
#     (needs matplotlib; without it the summary is still written and the PNG can be drawn
#     anywhere from the JSON: python3 bench/plot_dataflows.py <json> <png>).
#
#   scripts/gpu/dataflows.sh [BUILD_DIR]    (run from the repository root)
#
# Build (on the build machine; ~25-40 min on 2 cores for these targets without a warm ccache):
#   cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DTHEO_CUDA=ON \
#     -DTHEO_STATIC_DEPS=ON -DTHEO_BUILD_TESTS=ON \
#     -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache
#   cmake --build build-cuda -j2 --target test_cuda_dataflows test_cuda_pipeline theo_tune \
#     theo_bench theo_boot_demo
#   scripts/gpu/stage-dataflows build-cuda    (~2-6 min: strips and packs the five binaries,
#                                             ~74 MB, into .carry/dataflows/bin.tar.xz, ~16 MB,
#                                             and matplotlib into .carry/matplotlib/, ~16 MB)
# Carry .carry/dataflows and .carry/matplotlib (~32 MB together). The binaries are taken from
# BUILD_DIR, else build-cuda/, else .carry/dataflows/bin.tar.xz.
# Writes $OUT/dataflows/: gpu.txt, binaries.txt, tests.log, tuning/*.json (the tables),
# tune-*.json/log, <card>-dataflows-<date>.json (+ .log), boot-*.log, boot-summary.txt,
# <card>-dataflows-<date>.png, -keyswitch.png and -summary.json, plot*.log.
# Expected run time on an H100: about 3-4 minutes (tests ~30 s, tuning ~60 s, sweep ~60-80 s,
# Boot ~30 s); every step has its own time limit, the device steps together stop at
# DATAFLOWS_BUDGET_S (default 330 s) and the plots get 30 s more: under 6 minutes in all.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${OUT:-$root/out}/dataflows"
tables="$out/tuning"
mkdir -p "$out" "$tables"
cd "$root" || exit 2
# The binaries: BUILD_DIR, else build-cuda/, else the stripped copies scripts/gpu/stage-dataflows
# packed into .carry/dataflows/bin.tar.xz (unpacked here into a scratch folder).
if [[ $# -ge 1 ]]; then
  build="$1"
elif [[ -x "$root/build-cuda/bench/theo_bench" ]]; then
  build="$root/build-cuda"
elif [[ -f "$root/.carry/dataflows/bin.tar.xz" ]]; then
  build="$(mktemp -d)"
  tar -C "$build" -xJf "$root/.carry/dataflows/bin.tar.xz" || exit 2
  cp "$root/.carry/dataflows/MANIFEST.txt" "$out/binaries.txt" 2>/dev/null || true
  echo "dataflows: binaries from .carry/dataflows/bin.tar.xz ($(head -n1 "$out/binaries.txt" 2>/dev/null))"
else
  build="$root/build-cuda"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
  > "$out/gpu.txt" 2>&1 || true
card="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 |
  grep -oiE 'h100|h200|a100|l40s' | tr '[:upper:]' '[:lower:]')"
card="${card:-gpu}"
date="$(date -u +%Y-%m-%d)"
json="$out/$card-dataflows-$date.json"
rc=0
# The whole run stays inside DATAFLOWS_BUDGET_S (default 330 s): each step's limit is cut to what
# is left, and a step with less than 10 s left is skipped (reported, exit 1).
budget="${DATAFLOWS_BUDGET_S:-330}"
step() {  # name, time limit (s), command...
  local name="$1" limit="$2"; shift 2
  local t0=$SECONDS left=$((budget - SECONDS))
  if (( left < 10 )); then
    echo "== $name: skipped, the ${budget} s budget is spent"
    rc=1
    return 1
  fi
  (( limit > left )) && limit=$left
  echo "== $name (limit ${limit}s): $*"
  timeout "$limit" "$@"
  local r=$?
  echo "== $name: exit $r after $((SECONDS - t0)) s"
  [[ $r -eq 0 ]] || rc=1
  return $r
}
# TESTS=0 skips step 1 (a change that leaves the kernels as they are: the selection, the tuner)
# and does not need the two test binaries.
tests="${TESTS:-1}"
exes=(apps/theo_tune bench/theo_bench apps/theo_boot_demo)
[[ "$tests" != 0 ]] && exes+=(tests/cuda/test_cuda_dataflows tests/cuda/test_cuda_pipeline)
for exe in "${exes[@]}"; do
  [[ -x "$build/$exe" ]] || { echo "dataflows: no $build/$exe (see the build recipe above)"; exit 2; }
done

# 1. Bit-exactness against the CPU (the suite's other binaries are the lead's GPU suite).
if [[ "$tests" != 0 ]]; then
  {
    step test_cuda_dataflows 60 "$build/tests/cuda/test_cuda_dataflows"
    step test_cuda_pipeline 40 "$build/tests/cuda/test_cuda_pipeline"
  } > "$out/tests.log" 2>&1
  grep -E "^\[  (PASSED|FAILED) |^== |\[dataflows\]" "$out/tests.log"
else
  echo "== tests skipped (TESTS=0)"
fi

# 2. Tuning tables: the grid's top levels, then every level of bootparam_40.
step tune-grid 80 "$build/apps/theo_tune" --grid --dir "$tables" --reps 5 --warmup 1 \
  --json "$out/tune-grid.json" > "$out/tune-grid.log" 2>&1
tail -n 4 "$out/tune-grid.log"
step tune-bootparam_40 45 "$build/apps/theo_tune" --preset bootparam_40 --dir "$tables" \
  --reps 5 --warmup 1 --json "$out/tune-bootparam_40.json" > "$out/tune-bootparam_40.log" 2>&1
grep -E "^  +[0-9]+ " "$out/tune-bootparam_40.log" | tail -n 40

# 3. The sweep, Auto reading the tables of step 2.
step sweep 100 "$build/bench/theo_bench" --dataflows --backend cuda --tuning-dir "$tables" \
  --reps 10 --warmup 2 --out "$json" > "${json%.json}.log" 2>&1
grep -E "setup|failed" "${json%.json}.log" | head -n 60
echo "sweep: $(grep -c ': skipped (' "${json%.json}.log") grid cells skipped (insecure or unrealizable)"

# 4. Boot bootparam_40: today's DPOB, Auto with the table, Auto from the model; twice, interleaved.
boot() {  # label, binary dir, extra arguments...
  local label="$1" bin="$2"; shift 2
  step "boot-$label" 25 "$bin/theo_boot_demo" bootparam_40 --backend cuda --graph --runs 10 "$@" \
    >> "$out/boot-$label.log" 2>&1
}
for _ in 1 2; do  # twice, interleaved
  boot dpob "$build/apps" --dataflow DPOB
  boot auto "$build/apps" --tuning-dir "$tables"
  boot model "$build/apps" --no-tuning-table
  if [[ -n "${BASE_BIN:-}" && -x "${BASE_BIN}/theo_boot_demo" ]]; then
    boot base "$BASE_BIN"
  fi
done
{
  echo "# Boot bootparam_40 --graph --runs 10, twice each, on $(head -n 2 "$out/gpu.txt" | tail -n 1)"
  for f in "$out"/boot-*.log; do
    label="$(basename "$f" .log)"
    times="$(grep -oE 'bootstrap [0-9]+: [0-9.]+ ms' "$f" | awk '{print $3}' | sort -n)"
    n="$(echo "$times" | grep -c .)"
    median="$(echo "$times" | awk -v n="$n" 'NR == int((n + 1) / 2) {print}')"
    echo "$label: median ${median:-?} ms over $n runs; $(grep -m1 -oE 'key switching \(tuning table [a-z ]+' "$f")"
  done
} | tee "$out/boot-summary.txt"

# 5. Heat map and acceptance summary. Without matplotlib on this machine, the copy that
# scripts/gpu/stage-matplotlib put in MPL_SITE (default .carry/matplotlib/mpl-site.tar.xz) is
# unpacked onto PYTHONPATH for this step.
mpl_site="${MPL_SITE:-$root/.carry/matplotlib/mpl-site.tar.xz}"
if ! python3 -c 'import matplotlib' 2>/dev/null && [[ -f "$mpl_site" ]]; then
  mpl_dir="$(mktemp -d)"
  if tar -C "$mpl_dir" -xJf "$mpl_site" &&
     mpl_version="$(PYTHONPATH="$mpl_dir" MPLCONFIGDIR="$mpl_dir/.config" python3 -c \
       'import matplotlib; print(matplotlib.__version__)' 2>&1)"; then
    export PYTHONPATH="$mpl_dir${PYTHONPATH:+:$PYTHONPATH}" MPLCONFIGDIR="$mpl_dir/.config"
    echo "== matplotlib $mpl_version from $mpl_site"
  else
    echo "== matplotlib from $mpl_site does not load here ($(python3 --version 2>&1)); summary only"
  fi
fi
if [[ -f "$json" ]]; then
  budget=$((budget + 30))  # the plot runs on the host, after the device work
  step plot 30 python3 bench/plot_dataflows.py "$json" "${json%.json}.png" --table \
    > "$out/plot.log" 2>&1
  cat "$out/plot.log"
  python3 bench/plot_dataflows.py "$json" "${json%.json}-keyswitch.png" --op keyswitch \
    > "$out/plot-keyswitch.log" 2>&1 || true
fi
echo "dataflows: results in $out (exit $rc, $SECONDS s)"
exit $rc
