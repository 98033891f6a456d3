#!/usr/bin/env bash
# GPU acceptance of an architecture change (issue 32: one door into key switching, a Context
# built in one go, the io layer), in one device call, from prebuilt binaries:
#   1. the GPU suite: every staged GPU test binary under ctest -L gpu (exit 77 = skipped);
#   2. Boot bootparam_40 A/B: the old and the new theo_boot_demo alternating, ROUNDS rounds of RUNS
#      bootstraps each (graph replay, then eager), plus theo_bench's key-switching ops (keyswitch,
#      hmult_rescale, hrot, rescale at 14, 25 and 47 limbs); the summary gives new / old and
#      whether each is within TOLERANCE percent (default 1) either way;
#   3. the environment knobs on the CUDA backend: THEO_PDL=0 / THEO_GRAPHS=0 / THEO_FUSION=0 change
#      how the work is launched, never the words (the same precision is printed).
# Logs, JSON and summary.{txt,json} under $OUT/architecture/.
#
#   scripts/gpu/architecture.sh [NEW_DIR] [OLD_DIR]      (from the repository root)
#
# NEW_DIR (default .carry/new): this branch's binaries, built with
#   scripts/build build-cuda -DTHEO_STATIC_DEPS=ON -DTHEO_CUDA=ON -DTHEO_CUDA_ARCHS=90
#   scripts/gpu-run --stage .carry/new build-cuda          (test_cuda_*, *_gpu tests, theo_bench)
#   cp build-cuda/apps/theo_boot_demo .carry/new/
# OLD_DIR (default .carry/base): theo_boot_demo and theo_bench built the same way from main before
# the change (for issue 32: main at 6b35d97). Without OLD_DIR's binaries only NEW is measured.
# Run time on an H100: about 13 minutes (tests ~7, A/B ~5, knobs ~1).
# Environment: BOOT=levers (Boot as theo_boot_levers --configs baseline: the same circuit on
# both sides, with output hashes), ROUNDS (A/B rounds, default 3), RUNS (bootstraps per run, default 10), TOLERANCE
# (percent, default 1), TESTS=0 to skip the suite, KNOBS=0 to skip the knobs.
set -uo pipefail
# shellcheck source=scripts/gpu/ab-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/ab-common.bash"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
new="${1:-$root/.carry/new}"
old="${2:-$root/.carry/base}"
[[ -d "$new" ]] || { echo "architecture: no binaries in $new (see the header)"; exit 2; }
new="$(cd "$new" && pwd)"
if [[ -x "$old/theo_boot_demo" ]]; then old="$(cd "$old" && pwd)"; else
  echo "architecture: no $old/theo_boot_demo: measuring the new binaries only"
  old=""
fi
out="${OUT:?set OUT}/architecture"
mkdir -p "$out"
rounds="${ROUNDS:-3}"
runs="${RUNS:-10}"
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
cat "$out/gpu.txt"

# 1. The GPU suite, through a CTestTestfile over the staged binaries (ctest -L gpu).
if [[ "${TESTS:-1}" != 0 ]]; then
  testdir="$(mktemp -d)"
  : >"$testdir/CTestTestfile.cmake"
  for t in "$new"/test_*; do
    [[ -f "$t" && -x "$t" ]] || continue
    name="$(basename "$t")"
    printf 'add_test(%s "%s" "--gtest_output=json:%s/%s.json")\n' "$name" "$t" "$out" "$name" \
      >>"$testdir/CTestTestfile.cmake"
    printf 'set_tests_properties(%s PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 420)\n' \
      "$name" >>"$testdir/CTestTestfile.cmake"
  done
  (cd "$testdir" && ctest -L gpu --output-on-failure 2>&1) | tee "$out/ctest.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  cp "$testdir/Testing/Temporary/LastTest.log" "$out/ctest-output.log" 2>/dev/null || true
fi

# 2. A/B, old and new alternating per round so that clock and thermal drift hit both alike.
ab_rounds

# 3. The knobs: the same precision with each, a changed launch only.
if [[ "${KNOBS:-1}" != 0 ]]; then
  : >"$out/knobs.txt"
  for knob in default THEO_PDL=0 THEO_GRAPHS=0 THEO_FUSION=0; do
    vars=()
    [[ "$knob" != default ]] && vars=("$knob")
    env "${vars[@]}" "$new/theo_boot_demo" bootparam_40 --insecure --graph --runs 3 \
      >"$out/knob-$knob.log" 2>&1 || status=1
    echo "$knob: $(grep -E '^bootstrap [0-9]+:' "$out/knob-$knob.log" | tail -1)" |
      tee -a "$out/knobs.txt"
  done
fi

# 4. Summary: median bootstrap (each run's first bootstrap dropped) and op medians, new / old.
ab_summary --verdict --tolerance "${TOLERANCE:-1}"
grep -E "tests passed|tests failed" "$out/ctest.log" 2>/dev/null | tee -a "$out/summary.txt"
exit $status
