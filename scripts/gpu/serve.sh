#!/usr/bin/env bash
# The evaluation server's benchmark on a lent GPU machine (issue 25; issue 26 reuses it with
# GPUS=N): unpacks Ray and the CUDA extension staged by scripts/gpu/stage-serve, starts a local Ray
# cluster with one worker actor per GPU, and measures bootstraps/s and HMult/s with p50/p99
# latency through the server for 1..16 concurrent clients against in-process calls, plus the
# serialization + transport overhead per N = 2^16 ciphertext. About 4 minutes on one H100.
#
#   scripts/gpu/serve.sh [CARRY_DIR]      (default .carry/serve; run from anywhere in the repo)
#
# Writes $OUT/serve/: <card>-serve-<date>.json (bench/results format: {header, results}),
# bench.log, nvidia-smi.csv (utilization and memory every second), env.txt.
# Environment: GPUS (workers, one per GPU; default 1), GPUS_PER_WORKER (default 1; 0.5 puts two
# workers on each GPU, issue 26's fallback on a one-GPU machine), CLIENTS (default 1,2,4,8,16), OPS
# (default boot,hmult), BATCH (operations per job, default 16), JOBS (jobs per configuration,
# default 8), PRESET (default bootparam_40), OBJECT_STORE_MB (default 20000), TIME_LIMIT_S
# (default 420), PYTHON (default python3), TOPIC (output file topic, default serve), EXTRA_ARGS
# (more `python -m theodosian.serve bench` options). A rehearsal without a GPU:
#   ALLOW_CPU=1 PRESET=test_n12 OPS=hmult CLIENTS=1,2 BATCH=2 JOBS=2 OBJECT_STORE_MB=200 \
#     EXTRA_ARGS="--allow-insecure --backend cpu --threads 1" scripts/gpu/serve.sh
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CARRY="$(cd "${1:-$ROOT/.carry/serve}" && pwd)" || { echo "serve.sh: no carry dir" >&2; exit 2; }
OUTDIR="${OUT:-$ROOT/out}/serve"
PY="${PYTHON:-python3}"
GPUS="${GPUS:-1}"
TOPIC="${TOPIC:-serve}"
mkdir -p "$OUTDIR"
t0=$SECONDS
say() { echo "[serve.sh +$((SECONDS - t0))s] $*" | tee -a "$OUTDIR/bench.log"; }

# ---- unpack (no network, no pip: plain folders on PYTHONPATH) ------------------------------------
STAGE="${TMPDIR:-/tmp}/theo-serve"
rm -rf "$STAGE" && mkdir -p "$STAGE/site" "$STAGE/ext"
xz -dc -T0 "$CARRY/ray-site.tar.xz" | tar -C "$STAGE/site" -xf - || { say "unpack ray failed"; exit 2; }
xz -dc -T0 "$CARRY/theodosian-cp312.tar.xz" | tar -C "$STAGE/ext" -xf - ||
  { say "unpack extension failed"; exit 2; }
# Bytecode now, in parallel: Ray gives its agents 15 s to start, and compiling ray's modules on
# their first import can take longer than that.
"$PY" -m compileall -q -j0 "$STAGE/site" >/dev/null 2>&1
# The repository's pure-Python package first; its extension is found in $STAGE/ext/theodosian.
export PYTHONPATH="$ROOT/python:$STAGE/ext:$STAGE/site${PYTHONPATH:+:$PYTHONPATH}"
export RAY_USAGE_STATS_ENABLED=0 RAY_DEDUP_LOGS=0
# NVLink multicast stays off on the lent machines (nothing here uses NCCL; set for any child).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export THEO_GIT_COMMIT="${THEO_GIT_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null ||
  awk '/^git_commit/ {print substr($2, 1, 12)}' "$CARRY/MANIFEST.txt")}"
say "unpacked ($(du -sh "$STAGE" | cut -f1)); commit $THEO_GIT_COMMIT"

{
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
  "$PY" --version
  df -h /dev/shm /tmp
  free -g
  cat "$CARRY/MANIFEST.txt"
} >"$OUTDIR/env.txt" 2>&1
"$PY" - <<'PY' 2>&1 | tee -a "$OUTDIR/bench.log"
import ray, theodosian as th
print("ray", ray.__version__, "| theodosian", th.__version__, "| cuda_available", th.cuda_available())
import os
assert th.cuda_available() or os.environ.get("ALLOW_CPU") == "1", "the CUDA backend sees no GPU"
PY
[[ ${PIPESTATUS[0]} -eq 0 ]] || { say "import check failed"; exit 2; }

card="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 |
  grep -oiE 'h100|h200|a100|l40s' | tr 'A-Z' 'a-z')"
json="$OUTDIR/${card:-gpu}-${TOPIC}-$(date -u +%F).json"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
  >"$OUTDIR/nvidia-smi.csv" 2>/dev/null &
smi=$!

say "bench: preset ${PRESET:-bootparam_40}, gpus $GPUS, clients ${CLIENTS:-1,2,4,8,16}"
timeout "${TIME_LIMIT_S:-420}" "$PY" -m theodosian.serve bench \
  --preset "${PRESET:-bootparam_40}" --ops "${OPS:-boot,hmult}" \
  --clients "${CLIENTS:-1,2,4,8,16}" --gpus "$GPUS" \
  --gpus-per-worker "${GPUS_PER_WORKER:-1}" --batch "${BATCH:-16}" --jobs "${JOBS:-8}" \
  --num-cpus "$(nproc)" --object-store-mb "${OBJECT_STORE_MB:-20000}" \
  --out "$json" ${EXTRA_ARGS:-} 2>&1 | grep -v 'Token authentication' | tee -a "$OUTDIR/bench.log"
rc=${PIPESTATUS[0]}
kill "$smi" 2>/dev/null
say "bench exit $rc; results: $json"
rm -rf "$STAGE"
exit "$rc"
