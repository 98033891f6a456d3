#!/usr/bin/env bash
# GPU check of the Backend refactor (issue 19, part B: checked public ops over per-backend
# implementations, backend/cuda/ split per op family, backend-parameterised tests): every GPU test
# binary, then Boot and the key-switching ops A/B against binaries of the commit before, in one
# device call. Logs and JSON under $OUT/backend-split/.
#
#   scripts/gpu/backend-split.sh NEW_DIR [OLD_DIR]
#
# NEW_DIR / OLD_DIR: binaries staged by `scripts/gpu-run --stage DIR BUILD` from builds configured
# with -DTHEO_STATIC_DEPS=ON -DTHEO_CUDA=ON (NEW: this branch; OLD: its merge base with main).
# Without OLD_DIR only NEW is measured. Runs in about 12 minutes on an H100 (tests ~7, A/B ~5).
# Environment: ROUNDS (A/B rounds, default 3), RUNS (bootstraps per run, default 10).
set -uo pipefail
# shellcheck source=scripts/gpu/ab-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/ab-common.bash"
new="$(cd "${1:?usage: scripts/gpu/backend-split.sh NEW_DIR [OLD_DIR]}" && pwd)"
old="${2:-}"
[[ -n "$old" ]] && old="$(cd "$old" && pwd)"
out="${OUT:?set OUT}/backend-split"
mkdir -p "$out"
rounds="${ROUNDS:-3}"; runs="${RUNS:-10}"
status=0

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1

# 1. Every GPU test binary (exit 77: skipped), with gtest's JSON report.
: >"$out/tests.txt"
for t in "$new"/test_*; do
  [[ -f "$t" && -x "$t" ]] || continue
  name="$(basename "$t")"
  start=$(date +%s)
  timeout 600 "$t" --gtest_output="json:$out/$name.json" >"$out/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' "$out/$name.log" | tr '\n' ' ')" \
    | tee -a "$out/tests.txt"
  [[ $rc -eq 0 || $rc -eq 77 ]] || status=1
done

# 2. A/B: Boot (graph and eager) and the key-switching ops, old and new alternating per round.
ab_rounds

# 3. Summary: median bootstrap (runs after the first) and op medians per binary, new / old.
# shellcheck disable=SC2119  # no --verdict here
ab_summary
exit $status
