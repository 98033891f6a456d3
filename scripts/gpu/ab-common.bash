# shellcheck shell=bash disable=SC2154,SC2034
# Sourced by the A/B GPU scripts (architecture.sh, backend-split.sh): the old and the new binaries
# alternating per round, so that clock and thermal drift hit both alike, and their summary
# (ab_summary.py). Reads the caller's out, runs, rounds, old (empty: only new) and new; sets
# status=1 when a run fails (hence the shellcheck directive above: they are the caller's).

# ab_one LABEL DIR ROUND: Boot bootparam_40 (graph and eager, $runs bootstraps each) and the
# key-switching ops (theo_bench, where DIR has it) with the binaries in DIR.
# With BOOT=levers, Boot is theo_boot_levers' "baseline" config (every lever off) instead of
# theo_boot_demo, whose defaults move with the bootstrapping's levers: an A/B of a refactoring
# then compares the same circuit on both sides, and the output hashes say whether the words agree.
ab_one() {
  local label="$1" dir="$2" r="$3"
  if [[ "${BOOT:-demo}" == levers ]]; then
    "$dir/theo_boot_levers" --backend cuda --presets bootparam_40 --configs baseline \
      --reps "${REPS:-20}" --insecure --out "$out/levers-$label-$r.json" \
      >"$out/levers-$label-$r.log" 2>&1 || status=1
  else
    "$dir/theo_boot_demo" bootparam_40 --insecure --graph --runs "$runs" \
      >"$out/boot-graph-$label-$r.log" 2>&1 || status=1
    "$dir/theo_boot_demo" bootparam_40 --insecure --runs "$runs" \
      >"$out/boot-eager-$label-$r.log" 2>&1 || status=1
  fi
  if [[ -x "$dir/theo_bench" ]]; then
    "$dir/theo_bench" --backend cuda --ops keyswitch,hmult_rescale,hrot,rescale --limbs 14,25,47 \
      --reps 30 --warmup 5 --out "$out/ops-$label-$r.json" >"$out/ops-$label-$r.log" 2>&1 ||
      status=1
  fi
}

# ab_rounds: $rounds rounds of ab_one, old (when given) before new.
ab_rounds() {
  local r
  for r in $(seq 1 "$rounds"); do
    [[ -n "$old" ]] && ab_one old "$old" "$r"
    ab_one new "$new" "$r"
  done
}

# ab_summary [--verdict] [--tolerance PCT]: the summary of every round to stdout and
# $out/summary.txt (and $out/summary.json).
ab_summary() {
  python3 "$(dirname "${BASH_SOURCE[0]}")/ab_summary.py" "$out" "$@" ${old:+old} new |
    tee "$out/summary.txt"
}
