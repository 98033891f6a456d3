"""Throughput and latency of the HTTP API against the Ray client and in-process calls (issue 33).

One server (workers on the GPUs), one HTTP API in front of it on this machine (loopback), one
client key set. For each number of concurrent clients, the same load runs three ways, one after
the other: in-process (the library called directly, one circuit at a time on the device, as in a
worker), through the Ray client (serve.Client), and through HTTP (each client thread its own
serve.HttpClient and connection, one session shared). Every client sends `jobs` jobs of `batch`
operations and waits for each (in_flight 1: Session.run in a loop), or keeps `in_flight` of them
submitted (Session.map: the next jobs wait on the server while the results of the jobs in flight
download at once, each job's on a connection of its own; p50/p99 are then from a job's submission
to its results), once per value of `in_flight`; the results come
back as checked host ciphertexts (the clients share the workers' machine; a real client decrypts
elsewhere).
Records::

    {"op", "path": "http" | "ray" | "in_process", "clients", "throughput_per_s" (operations/s),
     "p50_ms", "p99_ms", "median_ms" (per job), "vs_in_process", "in_flight" (jobs per client),
     "device", "git_commit", ...}

The first result of each path and every client's last result of every configuration are compared
bit for bit with the in-process ones (`identical_to_in_process`). A `transfer` record gives the
key upload over HTTP (bytes, seconds) and the identity round trip of one result ciphertext.
"""

from __future__ import annotations

import collections
import datetime
import json
import math
import os
import socket
import tempfile
import time
from typing import Any, Callable, Iterator, Sequence

from . import apikeys
from .bench import OPS, Workload, git_commit, percentile, run_load

PATHS = ("in_process", "ray", "http")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _client_jobs(sessions: Sequence[Any], circuit: str, cts: Sequence[Any], host_ctx: Any,
                 in_flight: int, warmup: int, jobs: int, last: dict[int, list[Any]]
                 ) -> Callable[[int], Any]:
    """job(i) for run_load: client i's next job's results (kept in last[i]). The `warmup` calls
    and every call with in_flight 1 are Session.run (so no job is in flight when the timing
    starts: a job submitted ahead during the warm-up would run before the clock does). With more
    in flight, the timed calls read one Session.map per client over its `jobs` jobs, opened at the
    first of them; each reports its job's latency from the moment map took its inputs."""
    calls = [0] * len(sessions)
    submitted: list[collections.deque[float]] = [collections.deque() for _ in sessions]
    streams: list[Iterator[list[Any]] | None] = [None] * len(sessions)

    def inputs(i: int) -> Iterator[Sequence[Any]]:
        for _ in range(jobs):
            submitted[i].append(time.perf_counter())
            yield cts

    def job(i: int) -> Any:
        calls[i] += 1
        if in_flight <= 1 or calls[i] <= warmup:
            last[i] = sessions[i].run(circuit, cts, host=True, host_context=host_ctx)
            return len(last[i])
        stream = streams[i]
        if stream is None:
            stream = streams[i] = sessions[i].map(circuit, inputs(i), in_flight=in_flight,
                                                  host=True, host_context=host_ctx)
        last[i] = next(stream)
        return len(last[i]), time.perf_counter() - submitted[i].popleft()
    return job


def run_http_benchmark(*, preset: str, ops: Sequence[str], clients: Sequence[int], gpus: int,
                       batch: int, jobs_per_client: Callable[[int], int], boot_slots: int = 0,
                       allow_insecure: bool = False, backend: str = "auto", threads: int = 0,
                       key_budget: int = 48 << 30, object_store_mb: int | None = None,
                       num_cpus: int | None = None, chunk_groups: int = 4,
                       paths: Sequence[str] = PATHS, transfer_repeats: int = 5,
                       http_replicas: int = 1, in_flight: Sequence[int] = (1,),
                       name: str = "theodosian-bench-http",
                       log: Callable[[str], None] = print,
                       on_record: Callable[[dict[str, Any]], None] | None = None
                       ) -> list[dict[str, Any]]:
    from . import Client, HttpClient, HttpConfig, KeyLimits, ServerConfig  # noqa: PLC0415
    from . import start, start_http  # noqa: PLC0415

    unknown = set(paths) - set(PATHS)
    if unknown or "in_process" not in paths:
        raise ValueError(f"paths: in_process and any of ray, http (got {list(paths)})")
    t_start = time.perf_counter()
    work = Workload.generate(preset, ops, batch, boot_slots, backend=backend,
                             allow_insecure=allow_insecure, threads=threads, log=log,
                             since=t_start)
    ctx, keys, host_ctx = work.context, work.keys, work.host_context
    chunks_per_job = max(1, -(-batch // max(1, chunk_groups)))
    config = ServerConfig(workers=gpus, backend=backend, threads=threads, key_budget=key_budget,
                          chunk_groups=chunk_groups, allow_insecure=allow_insecure,
                          max_queue=max(8, 2 * max(clients) * chunks_per_job))
    server = start(config, address=None, name=name, object_store_mb=object_store_mb,
                   num_cpus=num_cpus, num_gpus=None)
    folder = tempfile.mkdtemp(prefix="theo-bench-http-")
    keyfile = os.path.join(folder, "keys.json")
    api_key, _ = apikeys.create(keyfile, "bench")
    upload_bytes = len(keys.upload.payload)
    http = None
    try:
        limits = KeyLimits(jobs_in_flight=(4 + max(in_flight)) * max(clients) + 8, sessions=8,
                           key_bytes=4 * upload_bytes + (1 << 30), requests_per_s=1e6,
                           burst=1 << 20)
        http = start_http(HttpConfig(
            port=_free_port(), api_keys=keyfile, parameter_sets=(preset,),
            allow_insecure=allow_insecure, max_body_bytes=8 << 30,
            max_upload_bytes=upload_bytes + (1 << 30), max_ciphertexts_per_job=4 * batch,
            key_limits=limits, server_name=name, replicas=http_replicas))
        log(f"server: {gpus} workers, HTTP at {http.url} ({time.perf_counter() - t_start:.1f} s)")
        t0 = time.perf_counter()
        http_session = HttpClient(http.url, api_key).open_session(keys)
        upload_s = time.perf_counter() - t0
        log(f"HTTP session: {upload_bytes / 2**20:.0f} MiB of keys uploaded in {upload_s:.1f} s")
        ray_session = Client(name=name).open_session(keys) if "ray" in paths else None
        physical = max(1, math.ceil(gpus - 1e-9))
        common = {"gpus": physical, "workers": gpus, "batch": batch,
                  "http_replicas": http_replicas,
                  "chunk_groups": chunk_groups, "client_results": "host", "preset": preset,
                  "git_commit": git_commit(), "date": datetime.date.today().isoformat()}
        device = ""
        records: list[dict[str, Any]] = []

        def emit(rec: dict[str, Any]) -> None:
            records.append(rec)
            log(json.dumps(rec))
            if on_record:
                on_record(rec)

        for op in ops:
            if op not in work.inputs:
                raise ValueError(f"op {op!r}: the keys do not support it")
            circuit, cts = OPS[op], work.inputs[op]
            # Correctness first (this also loads the keys and builds the Bootstrapper).
            want = [w.to_bytes() for w in work.in_process(op)]
            first = {"http": [h.to_bytes() for h in http_session.run(circuit, cts, host=True)]}
            if ray_session is not None:
                first["ray"] = [h.to_bytes() for h in ray_session.run(circuit, cts, host=True)]
            identical = {p: got == want for p, got in first.items()}
            log(f"{op}: identical to in-process: {identical}")
            if not device:
                workers = server.metrics()["workers"]
                device = next((b for w in workers for b in w.get("backends", [])), ctx.backend)
            for n in clients:
                jobs = jobs_per_client(n)
                base: dict[str, float] = {}
                for path in paths:
                    last: dict[int, list[Any]] = {}
                    if path == "in_process":
                        res = run_load(lambda _i: (work.in_process(op), batch)[1], n, jobs,
                                       warmup=1)
                        base["tp"] = res.ops / res.seconds
                        rec = {"op": op, "path": path, **res.record(), **common,
                               "device": ctx.backend}
                        emit(rec)
                        continue
                    for k in in_flight:
                        if path == "ray":
                            sessions = [ray_session] * n
                        else:
                            sessions = [HttpClient(http.url, api_key).session(http_session.id,
                                                                              keys)
                                        for _ in range(n)]
                        last.clear()
                        job = _client_jobs(sessions, circuit, cts, host_ctx, k, 1, jobs, last)
                        res = run_load(job, n, jobs, warmup=1)
                        same = all([o.to_bytes() for o in out] == want for out in last.values())
                        identical[path] = identical[path] and same
                        emit({"op": op, "path": path, **res.record(), **common,
                              "device": device, "in_flight": k,
                              "vs_in_process": round(res.ops / res.seconds / base["tp"], 4),
                              "identical_to_in_process": identical[path],
                              "checked_jobs": len(last) + 1})
            # One result ciphertext through HTTP and back (identity), and the key upload.
            one = [work.in_process(op)[0]]
            rt = []
            for _ in range(transfer_repeats):
                t0 = time.perf_counter()
                http_session.run("identity", one, host=True)
                rt.append((time.perf_counter() - t0) * 1e3)
            emit({"op": "transfer", "path": "http", "clients": 1, "output_of": op,
                  "bytes": len(one[0].to_bytes()), "level": one[0].level,
                  "p50_ms": round(percentile(rt, 50), 3), "p99_ms": round(percentile(rt, 99), 3),
                  "median_ms": round(percentile(rt, 50), 3),
                  "throughput_per_s": round(1e3 / percentile(rt, 50), 3),
                  "key_upload_bytes": upload_bytes, "key_upload_s": round(upload_s, 3),
                  **common, "device": device})
        m = server.metrics()
        log("server metrics: " + json.dumps({k: m[k] for k in ("counters", "latency_ms")}))
        http_session.close()
        if ray_session is not None:
            ray_session.close()
        return records
    finally:
        if http is not None:
            http.stop()
        server.stop()
