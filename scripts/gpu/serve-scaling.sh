#!/usr/bin/env bash
# Issue 35: the evaluation server on 1, 2 and 4 GPUs of one host, in one call. Unpacks Ray and the
# CUDA extension staged by scripts/gpu/stage-serve, then for each GPU count starts a local Ray
# cluster with one worker actor per GPU and drives it with the server benchmark's load generator
# (`python -m theodosian.serve bench`): bootstrappings (bootparam_40) and HMult, CLIENTS concurrent
# clients, every job's results compared bit for bit with in-process evaluation after the timing
# (--check-every-result), one untimed warm-up job per client first (every worker has its keys and
# circuits before the clock starts). The in-process throughput runs only at 1 GPU (they use one
# device whatever the cluster's size).
# About 6-7 minutes on 4 H100s (set-up ~40 s per size; the 1-GPU size, with the in-process
# runs, ~3 minutes).
#
#   scripts/gpu/serve-scaling.sh [CARRY_DIR]      (default .carry/serve; from the repository root)
#
# Environment: GPU_COUNTS (default 1,2,4), CLIENTS (default 32: 8 per GPU at 4 GPUs, so every
# worker always has queued jobs), JOBS (jobs per client count, default 192,hmult=64: 6 and 2 per
# client), OPS
# (default boot,hmult), BATCH (default 16), CHUNK (default 4), PRESET (default bootparam_40),
# PART_LIMIT_S (seconds per GPU count, default 200), MACHINE (the lent kind, for the header;
# default nvidia-<card>-x<GPUs seen>), EXTRA_ARGS. A rehearsal without a GPU:
#   ALLOW_CPU=1 GPU_COUNTS=1,2 PRESET=test_n12 CLIENTS=2 JOBS=4 BATCH=2 CHUNK=1 OPS=hmult \
#     OBJECT_STORE_MB=300 EXTRA_ARGS="--allow-insecure --backend cpu --threads 1" \
#     scripts/gpu/serve-scaling.sh
# Writes $OUT/serve-scaling/: <card>-serve-scaling-<date>.json ({header, results}: op, path,
# clients, gpus, throughput_per_s, p50_ms, p99_ms, device, identical_to_in_process, checked_jobs,
# ...), part-<gpus>.json, bench.log, nvidia-smi.csv, cpu.txt, env.txt, summary.txt (printed last).
set -uo pipefail
# shellcheck source=scripts/gpu/serve-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/serve-common.bash"
serve_setup "${1:-}" serve-scaling

seen=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)
MACHINE="${MACHINE:-${card:+nvidia-$card-x$seen}}"
MACHINE="${MACHINE:-cpu}"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
  >"$OUTDIR/nvidia-smi.csv" 2>/dev/null &
smi=$!
# The host's CPU time every second (/proc/stat's first line, with the time): where a host-side
# limit shows.
(while :; do echo "$(date +%T) $(head -n1 /proc/stat)"; sleep 1; done) >"$OUTDIR/cpu.txt" &
cpu=$!

rc=0
IFS=, read -r -a counts <<<"${GPU_COUNTS:-1,2,4}"
for g in "${counts[@]}"; do
  inproc=()
  [[ "$g" == "${counts[0]}" ]] || inproc=(--no-in-process-load)
  say "gpus $g: preset ${PRESET:-bootparam_40}, ops ${OPS:-boot,hmult}, clients ${CLIENTS:-32}"
  # shellcheck disable=SC2086  # EXTRA_ARGS is a list of options
  timeout -s INT -k 10 "${PART_LIMIT_S:-200}" "$PY" -m theodosian.serve bench \
    --preset "${PRESET:-bootparam_40}" --ops "${OPS:-boot,hmult}" --clients "${CLIENTS:-32}" \
    --gpus "$g" --batch "${BATCH:-16}" --chunk-groups "${CHUNK:-4}" \
    --jobs "${JOBS:-192,hmult=64}" \
    --num-cpus "$(nproc)" --object-store-mb "${OBJECT_STORE_MB:-40000}" --transfer-repeats 3 \
    --check-every-result --warmup-jobs 1 "${inproc[@]}" --topic serve-scaling \
    --out "$OUTDIR/part-$g.json" ${EXTRA_ARGS:-} 2>&1 | grep -v 'Token authentication' |
    tee -a "$OUTDIR/bench.log"
  prc=${PIPESTATUS[0]}
  say "gpus $g exit $prc"
  [[ $prc -eq 0 ]] || rc=1
done
kill "$smi" "$cpu" 2>/dev/null

json="$OUTDIR/${card:-cpu}-serve-scaling-$(date -u +%F).json"
"$PY" - "$OUTDIR" "$json" "$MACHINE" <<'PY' | tee "$OUTDIR/summary.txt"
import glob, json, os, sys
outdir, out, machine = sys.argv[1:4]
parts = sorted(glob.glob(os.path.join(outdir, "part-*.json")),
               key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))
header, results = None, []
for p in parts:
    d = json.load(open(p))
    header = header or d["header"]
    for r in d["results"]:
        results.append({**r, "machine": machine})
if header is None:
    sys.exit("no part written")
header = {**header, "machine": machine, "workers": "per record (gpus)"}
json.dump({"header": header, "results": results}, open(out, "w"), indent=1)
base = {r["op"]: r["throughput_per_s"] for r in results
        if r["path"] == "server" and r["gpus"] == 1 and r["op"] != "transfer"}
print(f"{machine}: {header.get('device', '?')}")
print(f"{'op':6} {'path':10} {'gpus':>4} {'clients':>7} {'per s':>9} {'x 1 GPU':>7} "
      f"{'p50 ms':>9} {'p99 ms':>9}  checked")
for r in results:
    if r["op"] == "transfer":
        continue
    ratio = r["throughput_per_s"] / base[r["op"]] if r["path"] == "server" and base.get(r["op"]) \
        else float("nan")
    print(f"{r['op']:6} {r['path']:10} {r['gpus']:>4} {r['clients']:>7} "
          f"{r['throughput_per_s']:>9.1f} {ratio:>7.2f} {r['p50_ms']:>9.1f} {r['p99_ms']:>9.1f}  "
          f"{r.get('identical_to_in_process', '')} {r.get('checked_jobs', '')}")
print(f"records: {out}")
PY
rm -rf "$STAGE"
exit "$rc"
