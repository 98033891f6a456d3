#!/usr/bin/env bash
# The evaluation server's benchmark on a lent GPU machine (issue 25), then issue 26's one-GPU
# fallback: unpacks Ray and the CUDA extension staged by scripts/gpu/stage-serve, starts a local Ray
# cluster with one worker actor per GPU, and measures bootstraps/s with p50/p99 latency through the
# server at 1, 4 and 16 concurrent clients against in-process calls, checking every client's last
# result bit for bit against in-process evaluation, plus the serialization + transport overhead per
# N = 2^16 ciphertext (<card>-serve-<date>.json); then two workers sharing the one GPU
# (GPUS_PER_WORKER=0.5) with the same load generator (<card>-serve-scaling-<date>.json).
# About 3.5 minutes on one H100 (each part stops at its TIME_LIMIT; what it measured is kept).
#
#   scripts/gpu/serve.sh [CARRY_DIR]      (default .carry/serve; run from anywhere in the repo)
#
# Writes $OUT/serve/: <card>-serve-<date>.json and <card>-serve-scaling-<date>.json
# (bench/results format: {header, results}), bench.log, nvidia-smi.csv (utilization and memory
# every second), env.txt.
# Environment: GPUS (workers, one per GPU; default 1), GPUS_PER_WORKER (default 1), CLIENTS
# (default 1,4,16), OPS (default boot; boot,hmult adds HMult), BATCH (operations per job, default
# 16), CHUNK (operations per chunk a worker pipelines, default 4), JOBS (jobs per configuration,
# default 8, at least 2 per client), PRESET (default bootparam_40), OBJECT_STORE_MB (default
# 20000), TIME_LIMIT_S (default 130), PYTHON (default python3), TOPIC (output file topic, default
# serve), EXTRA_ARGS (more `python -m theodosian.serve bench` options); SCALING (default 1: run the
# shared-GPU fallback after the main run; 0: skip it), SCALING_WORKERS (default 2),
# SCALING_GPUS_PER_WORKER (default 0.5), SCALING_CLIENTS (default 4,16), SCALING_TIME_LIMIT_S
# (default 90), TOTAL_S (default 230: the fallback gets what is left of it).
# A rehearsal without a GPU:
#   ALLOW_CPU=1 PRESET=test_boot_n12 CLIENTS=1,2 BATCH=2 CHUNK=1 JOBS=2 OBJECT_STORE_MB=300 \
#     SCALING_CLIENTS=2 EXTRA_ARGS="--allow-insecure --backend cpu --threads 1" scripts/gpu/serve.sh
set -uo pipefail
# shellcheck source=scripts/gpu/serve-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/serve-common.bash"
serve_setup "${1:-}" serve
GPUS="${GPUS:-1}"
TOPIC="${TOPIC:-serve}"

json="$OUTDIR/${card:-gpu}-${TOPIC}-$(date -u +%F).json"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
  >"$OUTDIR/nvidia-smi.csv" 2>/dev/null &
smi=$!

say "bench: preset ${PRESET:-bootparam_40}, gpus $GPUS, clients ${CLIENTS:-1,4,16}"
timeout -s INT -k 10 "${TIME_LIMIT_S:-130}" "$PY" -m theodosian.serve bench \
  --preset "${PRESET:-bootparam_40}" --ops "${OPS:-boot}" \
  --clients "${CLIENTS:-1,4,16}" --gpus "$GPUS" --chunk-groups "${CHUNK:-4}" \
  --gpus-per-worker "${GPUS_PER_WORKER:-1}" --batch "${BATCH:-16}" --jobs "${JOBS:-8}" \
  --num-cpus "$(nproc)" --object-store-mb "${OBJECT_STORE_MB:-20000}" --topic "$TOPIC" \
  --transfer-repeats 5 \
  --out "$json" ${EXTRA_ARGS:-} 2>&1 | grep -v 'Token authentication' | tee -a "$OUTDIR/bench.log"
rc=${PIPESTATUS[0]}
say "bench exit $rc; results: $json"

# Issue 26 on one GPU: several workers sharing it, the same load generator, bootstrapping.
# The whole script stays within TOTAL_S (default 230): the fallback gets what is left, up to
# SCALING_TIME_LIMIT_S, and is skipped below 40 s.
left=$(( ${TOTAL_S:-230} - (SECONDS - t0) ))
slimit=$(( left < ${SCALING_TIME_LIMIT_S:-90} ? left : ${SCALING_TIME_LIMIT_S:-90} ))
if [[ "${SCALING:-1}" == 1 && $slimit -lt 40 ]]; then
  say "scaling skipped: ${left} s left of TOTAL_S=${TOTAL_S:-230}"
elif [[ "${SCALING:-1}" == 1 ]]; then
  sjson="$OUTDIR/${card:-gpu}-serve-scaling-$(date -u +%F).json"
  say "scaling: ${SCALING_WORKERS:-2} workers at ${SCALING_GPUS_PER_WORKER:-0.5} GPU each, ${slimit} s"
  timeout -s INT -k 10 "$slimit" "$PY" -m theodosian.serve bench \
    --preset "${PRESET:-bootparam_40}" --ops boot --clients "${SCALING_CLIENTS:-4,16}" \
    --gpus "${SCALING_WORKERS:-2}" --gpus-per-worker "${SCALING_GPUS_PER_WORKER:-0.5}" \
    --batch "${BATCH:-16}" --chunk-groups "${CHUNK:-4}" --jobs "${JOBS:-8}" \
    --num-cpus "$(nproc)" --object-store-mb "${OBJECT_STORE_MB:-20000}" --transfer-repeats 3 \
    --topic serve-scaling \
    --out "$sjson" ${EXTRA_ARGS:-} 2>&1 | grep -v 'Token authentication' |
    tee -a "$OUTDIR/bench.log"
  src=${PIPESTATUS[0]}
  say "scaling exit $src; results: $sjson"
  [[ $rc -eq 0 ]] && rc=$src
fi
kill "$smi" 2>/dev/null
rm -rf "$STAGE"
exit "$rc"
