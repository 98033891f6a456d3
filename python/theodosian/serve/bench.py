"""Load generator and benchmark of the evaluation server (reused by the multi-GPU scaling run).

For each operation (``boot``: bootstrapping, ``hmult``: products of pairs with relinearization and
rescale) and each number of concurrent clients, every client thread sends ``jobs`` jobs of
``batch`` operations and waits for each; the same load runs in-process (the library called
directly, one circuit at a time on the device, as a worker does) for the baseline. Records::

    {"op", "path": "server" | "in_process", "clients", "gpus", "batch", "jobs",
     "throughput_per_s" (operations/s), "p50_ms", "p99_ms", "median_ms" (per job),
     "device", "preset", "git_commit", "date", ...}

plus ``op: "transfer"`` records: serialization and transport overhead per ciphertext.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import os
import statistics
import subprocess
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

import theodosian as th

from . import circuits as circuit_registry
from . import wire
from .keys import ClientKeys

OPS = {"boot": "bootstrap", "hmult": "multiply"}


def git_commit() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("THEO_GIT_COMMIT")
    if env:
        return env
    try:
        return subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def percentile(values: Sequence[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p)) if values else float("nan")


@dataclasses.dataclass
class LoadResult:
    clients: int
    jobs: int
    ops: int
    seconds: float
    latencies_s: list[float]

    def record(self) -> dict[str, Any]:
        lat_ms = [x * 1e3 for x in self.latencies_s]
        return {"clients": self.clients, "jobs": self.jobs,
                "throughput_per_s": round(self.ops / self.seconds, 4),
                "p50_ms": round(percentile(lat_ms, 50), 3),
                "p99_ms": round(percentile(lat_ms, 99), 3),
                "median_ms": round(statistics.median(lat_ms), 3) if lat_ms else None,
                "wall_s": round(self.seconds, 3)}


def run_load(job: Callable[[int], Any], clients: int, jobs_per_client: int,
             warmup: int = 0) -> LoadResult:
    """`clients` threads each call job(client_index) `jobs_per_client` times (after `warmup` calls
    each, not timed); job returns the operations it did, or (operations, latency in s) when the
    job's latency is not the call's (a client with several jobs in flight: a call returns one
    job's results, submitted calls earlier). Throughput counts every timed job."""
    barrier = threading.Barrier(clients + 1)
    lat: list[list[float]] = [[] for _ in range(clients)]
    ops = [0] * clients
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            for _ in range(warmup):
                job(i)
        except BaseException as exc:  # noqa: BLE001 - reported after the join
            errors.append(exc)
        barrier.wait()
        if errors:
            return
        try:
            for _ in range(jobs_per_client):
                t0 = time.perf_counter()
                got = job(i)
                took = time.perf_counter() - t0
                if isinstance(got, tuple):
                    got, took = got
                ops[i] += got
                lat[i].append(took)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return LoadResult(clients, clients * jobs_per_client, sum(ops), wall,
                      [x for per in lat for x in per])


class Workload:
    """A context, one client's keys and the input ciphertexts of each operation. host_context:
    the Context whose host memory the clients' results land in (default: context)."""

    def __init__(self, context: th.Context, keys: ClientKeys, batch: int, boot_slots: int,
                 host_context: th.Context | None = None) -> None:
        self.context = context
        self.host_context = context if host_context is None else host_context
        self.keys = keys
        self.batch = batch
        rng = np.random.default_rng()
        enc = keys.encryptor()
        slots = boot_slots or context.slots
        self.inputs: dict[str, list[th.Ciphertext]] = {}
        if keys.bootstrapping_keys is not None:
            self.inputs["boot"] = [enc.encrypt(rng.uniform(-1, 1, slots), level=0)
                                   for _ in range(batch)]
        if keys.session_relin_key() is not None:
            self.inputs["hmult"] = [enc.encrypt(rng.uniform(-1, 1, context.slots))
                                    for _ in range(2 * batch)]
        self.session_keys = keys.session_keys()
        self.helpers = circuit_registry.HelperCache()
        # One circuit at a time on the device, as in a worker.
        self.device_lock = threading.Lock()

    @classmethod
    def generate(cls, preset: str, ops: Sequence[str], batch: int, boot_slots: int, *,
                 backend: str, allow_insecure: bool, threads: int, log: Callable[[str], None],
                 since: float) -> "Workload":
        """A client's Context of `preset`, its keys (relinearization, and bootstrapping when
        `ops` has "boot") and the inputs; logs the keys' size and the time since `since`."""
        ctx = th.Context(preset, backend=backend, allow_insecure=allow_insecure, threads=threads)
        # The clients' results land in ordinary host memory, as on a client machine without a GPU:
        # a CUDA Context's host ciphertexts are page-locked, and pinning every result in the one
        # process that plays all the clients would serialize them on the driver.
        host_ctx = ctx if ctx.backend.startswith("cpu") else th.Context(
            ctx.params, backend="cpu", allow_insecure=allow_insecure, threads=threads)
        boot = {"slots": boot_slots} if "boot" in ops else None
        keys = ClientKeys.generate(ctx, relin=True, bootstrap=boot)
        log(f"client keys: {keys.upload.describe()} ({time.perf_counter() - since:.1f} s)")
        return cls(ctx, keys, batch, boot_slots, host_context=host_ctx)

    def in_process(self, op: str) -> list[th.Ciphertext]:
        with self.device_lock:
            return circuit_registry.evaluate_in_process(OPS[op], self.context, self.session_keys,
                                                        self.inputs[op], helpers=self.helpers)


def _median_ms(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return round(statistics.median(times) * 1e3, 3), out


def transfer_overhead(session: Any, context: th.Context, ct: th.Ciphertext,
                      repeats: int) -> dict[str, Any]:
    """Serialization and transport of one ciphertext (a job's result: what a worker encodes and a
    client decodes): the whole encode / decode, their halves (device copies: to_host / to_device;
    CPU: HostCiphertext.to_bytes / from_bytes on one thread and on all), and a round trip through
    the server with the identity circuit (one ciphertext per job, so the whole path is counted:
    encode, put, schedule, fetch, decode, upload, download, encode, return, decode)."""
    rec: dict[str, Any] = {"level": ct.level}
    rec["serialize_ms"], blob = _median_ms(lambda: wire.encode(ct), repeats)
    rec["deserialize_ms"], _ = _median_ms(lambda: wire.decode(context, blob), repeats)
    rec["bytes"] = len(blob)
    rec["to_host_ms"], host = _median_ms(lambda: ct.to_host(), repeats)
    rec["to_device_ms"], _ = _median_ms(lambda: host.to_device(), repeats)
    for threads, tag in ((1, "1t"), (0, "all")):
        rec[f"host_to_bytes_{tag}_ms"], _ = _median_ms(lambda: host.to_bytes(threads=threads),
                                                       repeats)
        rec[f"host_from_bytes_{tag}_ms"], _ = _median_ms(
            lambda: th.HostCiphertext.from_bytes(context, blob.data, threads=threads), repeats)
    for key in ("serialize", "deserialize", "host_to_bytes_1t", "host_to_bytes_all",
                "host_from_bytes_1t", "host_from_bytes_all"):
        ms = rec[f"{key}_ms"]
        rec[f"{key}_GB_per_s"] = round(rec["bytes"] / ms / 1e6, 3) if ms > 0 else None
    rec["cpu_threads"] = os.cpu_count()
    rt = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        session.run("identity", [ct])
        rt.append(time.perf_counter() - t0)
    rec["round_trip_p50_ms"] = round(percentile([x * 1e3 for x in rt], 50), 3)
    rec["round_trip_p99_ms"] = round(percentile([x * 1e3 for x in rt], 99), 3)
    return rec


def run_benchmark(*, preset: str, ops: Sequence[str], clients: Sequence[int], gpus: int,
                  batch: int, jobs_per_client: Callable[[str, int], int], boot_slots: int = 0,
                  allow_insecure: bool = False, backend: str = "auto", threads: int = 0,
                  key_budget: int = 48 << 30, address: str | None = None,
                  object_store_mb: int | None = None, num_cpus: int | None = None,
                  transfer_repeats: int = 10, gpus_per_worker: float = 1.0,
                  chunk_groups: int = 4, device_results: bool = False,
                  check_every_result: bool = False, warmup_jobs: int = 0,
                  in_process_load: bool = True,
                  name: str = "theodosian-bench",
                  log: Callable[[str], None] = print,
                  on_record: Callable[[dict[str, Any]], None] | None = None
                  ) -> list[dict[str, Any]]:
    """The whole benchmark: starts a server with `gpus` workers (or uses the cluster at
    `address`), runs every (op, clients) through the server and in-process, checks that the
    server's results are bit-identical to in-process ones, and returns the records (each also
    handed to on_record as soon as it is measured). device_results: the clients load results
    onto their own device (by default they take checked host ciphertexts, as a client on another
    machine does: in this benchmark the clients share the workers' machine and GPU).
    check_every_result: every job's results are kept and compared after the timing (host memory:
    jobs x batch result ciphertexts, ~12 MB each for a bootstrapping at N = 2^16); by default
    each client's last job is. warmup_jobs: untimed jobs per client first (every worker loads
    its keys and builds its circuits before the timing). in_process_load: False skips the
    in-process throughput runs (the in-process results are still computed, for the checks)."""
    from . import Client, ServerConfig, start  # noqa: PLC0415

    t_start = time.perf_counter()
    work = Workload.generate(preset, ops, batch, boot_slots, backend=backend,
                             allow_insecure=allow_insecure, threads=threads, log=log,
                             since=t_start)
    ctx, keys, host_ctx = work.context, work.keys, work.host_context
    config = ServerConfig(workers=gpus, backend=backend, threads=threads, key_budget=key_budget,
                          gpus_per_worker=gpus_per_worker, chunk_groups=chunk_groups,
                          max_queue=max(4, 2 * max(clients) * max(1, -(-batch // max(
                              1, chunk_groups)))), allow_insecure=allow_insecure)
    server = start(config, address=address, name=name, object_store_mb=object_store_mb,
                   num_cpus=num_cpus, num_gpus=None)
    try:
        client = Client(name=name)
        session = client.open_session(keys)
        log(f"server: {len(server.metrics()['workers'])} workers "
            f"({time.perf_counter() - t_start:.1f} s)")
        device = ""
        # `gpus`: the devices the workers share (2 workers at 0.5 GPU each: 1 GPU).
        physical = max(1, math.ceil(gpus * gpus_per_worker - 1e-9))
        common = {"gpus": physical, "workers": gpus, "gpus_per_worker": gpus_per_worker,
                  "batch": batch, "chunk_groups": chunk_groups,
                  "client_results": "device" if device_results else "host", "preset": preset, "git_commit": git_commit(),
                  "date": datetime.date.today().isoformat()}
        records: list[dict[str, Any]] = []
        for op in ops:
            if op not in work.inputs:
                raise ValueError(f"op {op!r}: the keys do not support it")
            circuit = OPS[op]
            cts = work.inputs[op]
            ops_per_job = batch
            # Correctness first (this also loads the keys and builds the Bootstrapper).
            t0 = time.perf_counter()
            got = session.run(circuit, cts)
            want = work.in_process(op)
            want_bytes = [w.to_bytes() for w in want]
            identical = len(got) == len(want) and [g.to_bytes() for g in got] == want_bytes
            log(f"{op}: server result identical to in-process: {identical} "
                f"({time.perf_counter() - t0:.1f} s)")
            if not device:
                # The worker's backend, known once it made its Context.
                workers = server.metrics()["workers"]
                device = next((b for w in workers for b in w.get("backends", [])), ctx.backend)
            for n in clients:
                jobs = jobs_per_client(op, n)
                kept: dict[int, list[list[Any]]] = {i: [] for i in range(n)}

                def server_job(i: int) -> int:
                    out = session.run(circuit, cts, host=not device_results,
                                      host_context=None if device_results else host_ctx)
                    kept[i] = [*kept[i], out] if check_every_result else [out]
                    return len(out)

                res = run_load(server_job, n, jobs, warmup=warmup_jobs)
                # Checked after the timing: bit-identical results (every job's, or each client's
                # last), plus the correctness run above.
                outs = [out for per_client in kept.values() for out in per_client]
                same = all([o.to_bytes() for o in out] == want_bytes for out in outs)
                kept.clear()
                identical = identical and same
                rec = {"op": op, "path": "server", **res.record(), **common, "device": device,
                       "identical_to_in_process": identical, "checked_jobs": len(outs) + 1,
                       "checked": "every job" if check_every_result else "each client's last"}
                records.append(rec)
                log(json.dumps(rec))
                if on_record:
                    on_record(rec)
                if not in_process_load:
                    continue
                res = run_load(lambda _i: (work.in_process(op), ops_per_job)[1], n, jobs)
                rec = {"op": op, "path": "in_process", **res.record(), **common,
                       "device": ctx.backend}
                records.append(rec)
                log(json.dumps(rec))
                if on_record:
                    on_record(rec)
            over = transfer_overhead(session, ctx, want[0], transfer_repeats)
            rec = {"op": "transfer", "path": "server", "clients": 1, "output_of": op,
                   "log_n": ctx.log_n, **over, **common, "device": device,
                   "median_ms": over["round_trip_p50_ms"], "p50_ms": over["round_trip_p50_ms"],
                   "p99_ms": over["round_trip_p99_ms"],
                   # one client, one ciphertext per job, sequential
                   "throughput_per_s": round(1e3 / over["round_trip_p50_ms"], 3)}
            records.append(rec)
            log(json.dumps(rec))
            if on_record:
                on_record(rec)
        metrics = server.metrics()
        log("server metrics: " + json.dumps({k: metrics[k] for k in ("counters", "latency_ms")}))
        session.close()
        return records
    finally:
        server.stop()
