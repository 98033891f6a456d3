# shellcheck shell=bash
# Sourced by scripts/gpu/serve.sh and scripts/gpu/serve-http.sh: unpacks what
# scripts/gpu/stage-serve staged (Ray with Serve, the CUDA extension) and sets the environment.

# serve_setup CARRY_DIR SUBDIR: sets ROOT (the repository), CARRY, OUTDIR ($OUT/SUBDIR, made),
# PY (PYTHON or python3), STAGE (the unpacked folders), card (h100, h200, ...; empty without a
# GPU), t0, and PYTHONPATH (the repository's package first, its staged extension, then the staged
# site); writes OUTDIR/env.txt and checks that Ray, Ray Serve and the extension import (exit 2
# when not). ALLOW_CPU=1 accepts an extension that sees no GPU (rehearsals).
serve_setup() {
  ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  CARRY="$(cd "${1:-$ROOT/.carry/serve}" && pwd)" || { echo "serve: no carry dir" >&2; exit 2; }
  OUTDIR="${OUT:-$ROOT/out}/${2:-serve}"
  PY="${PYTHON:-python3}"
  mkdir -p "$OUTDIR"
  t0=$SECONDS
  STAGE="${TMPDIR:-/tmp}/theo-serve"
  rm -rf "$STAGE" && mkdir -p "$STAGE/site" "$STAGE/ext"
  xz -dc -T0 "$CARRY/ray-site.tar.xz" | tar -C "$STAGE/site" -xf - ||
    { say "unpack ray failed"; exit 2; }
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
  THEO_GIT_COMMIT="${THEO_GIT_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null ||
    awk '/^git_commit/ {print substr($2, 1, 12)}' "$CARRY/MANIFEST.txt")}"
  export THEO_GIT_COMMIT
  say "unpacked ($(du -sh "$STAGE" | cut -f1)); commit $THEO_GIT_COMMIT"
  {
    nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv
    "$PY" --version
    df -h /dev/shm /tmp
    free -g
    lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|Socket|MHz|Flags' | cut -c1-400
    cat "$CARRY/MANIFEST.txt"
  } >"$OUTDIR/env.txt" 2>&1
  "$PY" - <<'PY' 2>&1 | tee -a "$OUTDIR/bench.log"
import os
import ray, theodosian as th
from ray import serve  # noqa: F401 - the HTTP API needs Ray Serve
import fastapi
print("ray", ray.__version__, "| fastapi", fastapi.__version__, "| theodosian", th.__version__,
      "| cuda_available", th.cuda_available())
assert th.cuda_available() or os.environ.get("ALLOW_CPU") == "1", "the CUDA backend sees no GPU"
PY
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { say "import check failed"; exit 2; }
  # shellcheck disable=SC2034  # card names the sourcing script's output file
  card="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 |
    grep -oiE 'h100|h200|a100|l40s' | tr '[:upper:]' '[:lower:]')"
}

# say MESSAGE: a timestamped line on stdout and in OUTDIR/bench.log.
say() { echo "[$(basename "$0") +$((SECONDS - ${t0:-0}))s] $*" | tee -a "${OUTDIR:-.}/bench.log"; }
