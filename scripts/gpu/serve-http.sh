#!/usr/bin/env bash
# The HTTP API's benchmark on a lent GPU machine (issue 33): unpacks Ray (with Serve, FastAPI) and
# the CUDA extension staged by scripts/gpu/stage-serve, starts a local Ray cluster with one worker
# on the GPU and the HTTP API in front of it (loopback, plain HTTP), uploads one client's
# bootparam_40 keys over HTTP, and measures bootstraps/s with p50/p99 latency per job of BATCH
# bootstrappings for 1 and 16 concurrent clients, three ways one after the other: in-process
# (the library called directly), through the Ray client, and through HTTP (each client its own
# HttpClient; results stream back chunk by chunk as the GPU finishes them), each Ray / HTTP
# configuration once per IN_FLIGHT value (jobs a client keeps submitted: 1, Session.run in a loop;
# 2 or 3, Session.map, the next jobs waiting on the server while the results of the jobs in flight
# download, each job's on a connection of its own). Every client's last result and each path's
# first are compared bit for bit with in-process evaluation.
# About 5 minutes on one H100 or H200 (set-up ~60 s, keys ~30 s, cluster and API ~30 s, the 4.4 GiB
# key upload over HTTP ~20-36 s, the measurements ~2 minutes with IN_FLIGHT=1,2,3: 14
# configurations of 16 jobs); JOBS=64 makes each configuration ~14-24 s, ~4-6 minutes of
# measurements, under 9 minutes in all. The benchmark stops at TIME_LIMIT_S (default 460 s, its
# own set-up included) keeping what it measured; the last configuration (16 clients, HTTP, the
# most in flight) is the first to go.
#
#   scripts/gpu/serve-http.sh [CARRY_DIR]     (default .carry/serve; run from anywhere in the repo)
#
# Writes $OUT/serve-http/: <card>-serve-<date>.json (bench/results format {header, results}; records
# with path http / ray / in_process, clients, in_flight, throughput_per_s, p50_ms, p99_ms,
# vs_in_process, device, git_commit), bench.log, nvidia-smi.csv (utilization and memory every
# second), env.txt, summary.txt (the table printed last, with the issue's targets: HTTP >= 0.9x
# in-process).
# Environment: CLIENTS (default 1,16), BATCH (operations per job, default 16), CHUNK (operations
# per chunk: the unit in which results stream back, default 1), JOBS (jobs per configuration split
# over the clients, default 16, at least MIN_JOBS=2 per client), PATHS (default
# in_process,ray,http), IN_FLIGHT (jobs in flight per Ray / HTTP client, a list, default 1,2,3),
# HTTP_REPLICAS (ingress replicas, default 1), PRESET (default
# bootparam_40), OBJECT_STORE_MB (default 40000: the key upload is kept twice and results are in
# flight), TIME_LIMIT_S (default 460), PYTHON (default python3), TOPIC (default serve), EXTRA_ARGS
# (more options of `python -m theodosian.serve bench-http`).
# A rehearsal without a GPU (stage with STAGE_CUDA=OFF):
#   ALLOW_CPU=1 PRESET=test_boot_n12 CLIENTS=1,2 BATCH=2 JOBS=2 MIN_JOBS=1 OBJECT_STORE_MB=400 \
#     EXTRA_ARGS="--allow-insecure --backend cpu --threads 1 --boot-slots 32" \
#     scripts/gpu/serve-http.sh
set -uo pipefail
# shellcheck source=scripts/gpu/serve-common.bash
source "$(dirname "${BASH_SOURCE[0]}")/serve-common.bash"
serve_setup "${1:-}" serve-http

json="$OUTDIR/${card:-gpu}-${TOPIC:-serve}-$(date -u +%F).json"
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv -l 1 \
  >"$OUTDIR/nvidia-smi.csv" 2>/dev/null &
smi=$!

say "bench-http: preset ${PRESET:-bootparam_40}, clients ${CLIENTS:-1,16}, batch ${BATCH:-16}," \
  "chunk ${CHUNK:-1}"
# shellcheck disable=SC2086  # EXTRA_ARGS is a list of options
timeout -s INT -k 10 "${TIME_LIMIT_S:-460}" "$PY" -m theodosian.serve bench-http \
  --preset "${PRESET:-bootparam_40}" --ops boot --clients "${CLIENTS:-1,16}" \
  --paths "${PATHS:-in_process,ray,http}" --gpus 1 --batch "${BATCH:-16}" \
  --chunk-groups "${CHUNK:-1}" --jobs "${JOBS:-16}" --min-jobs-per-client "${MIN_JOBS:-2}" \
  --num-cpus "$(nproc)" --object-store-mb "${OBJECT_STORE_MB:-40000}" --topic "${TOPIC:-serve}" \
  --http-replicas "${HTTP_REPLICAS:-1}" --in-flight "${IN_FLIGHT:-1,2,3}" \
  --out "$json" ${EXTRA_ARGS:-} 2>&1 | grep -v 'Token authentication' | tee -a "$OUTDIR/bench.log"
rc=${PIPESTATUS[0]}
say "bench-http exit $rc; results: $json"
kill "$smi" 2>/dev/null

if [[ -f "$json" ]]; then
  "$PY" - "$json" <<'PY' | tee "$OUTDIR/summary.txt"
import json, sys
doc = json.load(open(sys.argv[1]))
recs = [r for r in doc["results"] if r["op"] == "boot"]
print(f"device {doc['header'].get('device', '?')}, commit {recs[0]['git_commit'] if recs else '?'},"
      f" chunk {doc['header'].get('chunk_groups')} ops, batch {doc['header'].get('batch')}")
print(f"{'path':>10} {'clients':>7} {'in flight':>9} {'boots/s':>9} {'p50 ms':>9} {'p99 ms':>9}"
      f" {'vs in-proc':>10} {'bit-identical':>13}")
for r in recs:
    vs = r.get("vs_in_process")
    print(f"{r['path']:>10} {r['clients']:>7} {r.get('in_flight', ''):>9} "
          f"{r['throughput_per_s']:>9.2f} {r['p50_ms']:>9.1f} "
          f"{r['p99_ms']:>9.1f} {'' if vs is None else f'{vs:.3f}':>10} "
          f"{str(r.get('identical_to_in_process', '')):>13}")
for r in doc["results"]:
    if r["op"] == "transfer":
        print(f"HTTP round trip of one {r['bytes'] / 1e6:.2f} MB result: p50 {r['p50_ms']} ms, "
              f"p99 {r['p99_ms']} ms; key upload {r['key_upload_bytes'] / 2**30:.2f} GiB in "
              f"{r['key_upload_s']} s")
for n in sorted({r["clients"] for r in recs}):
    for h in [r for r in recs if r["path"] == "http" and r["clients"] == n]:
        ok = h["vs_in_process"] >= 0.9 and h.get("identical_to_in_process")
        print(f"target {n} HTTP client(s) >= 0.9x in-process, {h.get('in_flight', 1)} job(s) "
              f"in flight each: {'MET' if ok else 'NOT MET'} ({h['vs_in_process']:.3f})")
PY
fi
rm -rf "$STAGE"
exit "$rc"
