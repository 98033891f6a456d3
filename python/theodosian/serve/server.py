"""The server: a controller actor (sessions, scheduling, retries, metrics) and one worker actor per
GPU. Start it with :func:`start` (or ``python -m theodosian.serve start``), talk to it with
:class:`theodosian.serve.Client`.

Data path: a client puts each serialized ciphertext (wire.Blob, out-of-band bytes) into Ray's
object store and sends the controller references only; the controller hands them to a worker,
which fetches them (zero-copy), checks them into host memory, holds the device only for the
uploads, the circuit and the downloads, encodes the results on a thread pool and returns them as
an object the client fetches directly. The controller sees metadata, never ciphertext bytes.

Trust: the Ray cluster is the trust boundary (anyone who can connect to it can run code on it).
Sessions protect clients of the API from each other: ids and client tokens are 256-bit secrets,
every request is checked against both, and metrics never show them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import itertools
import secrets
import time
from typing import Any

from . import circuits as circuit_registry
from .config import NAMESPACE, SERVER_NAME, ServerConfig
from .errors import (BusyError, JobError, LimitError, ServeError, ServerUnavailableError,
                     SessionError)
from .jobs import StreamJobs
from .keys import KeyUpload, parameters_fingerprint
from .limits import KeyLimits, OwnerQuotas
from .worker import Worker


def _tag(session_id: str) -> str:
    """A short, non-reversible name of a session for logs and metrics."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:10]


def _token_digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


@dataclasses.dataclass
class _Session:
    token_digest: bytes
    fingerprint: str
    params_json: str
    key_ref: Any  # ObjectRef of the KeyUpload, owned by the controller
    key_bytes: int
    #: The API key that opened it over HTTP (its quotas count this session), else None.
    owner: str | None = None
    upload_bytes: int = 0
    functions: dict[str, tuple[Any, int, bool]] = dataclasses.field(default_factory=dict)
    created: float = dataclasses.field(default_factory=time.time)
    last_used: float = dataclasses.field(default_factory=time.time)
    jobs: int = 0


@dataclasses.dataclass
class _WorkerSlot:
    worker_id: str
    handle: Any
    node_id: str = ""
    host: str = ""
    alive: bool = True
    inflight: int = 0
    resident: set[str] = dataclasses.field(default_factory=set)
    jobs: int = 0
    restarts: int = 0


class Controller(StreamJobs):
    """Runs as a Ray async actor named SERVER_NAME (see start())."""

    def __init__(self, config: ServerConfig, name: str = SERVER_NAME) -> None:
        import ray  # noqa: PLC0415 - the actor runs where ray exists

        self._ray = ray
        self.config = config
        self.name = name
        self._sessions: dict[str, _Session] = {}
        self._workers: dict[str, _WorkerSlot] = {}
        self._ids = itertools.count()
        self._cond: asyncio.Condition | None = None
        self._waiting = 0
        self._started = time.time()
        self._replacing: set[str] = set()
        self.counters = {"jobs_submitted": 0, "jobs_completed": 0, "jobs_failed": 0,
                         "chunks_retried": 0, "busy_rejections": 0, "workers_lost": 0,
                         "sessions_opened": 0, "sessions_closed": 0, "refused_requests": 0}
        self._latencies: list[float] = []
        self.quotas = OwnerQuotas()
        self._keep: Any = None
        self._init_stream_jobs()

    # ---- workers ---------------------------------------------------------------------------
    def _worker_options(self) -> dict[str, Any]:
        ray = self._ray
        gpus = ray.cluster_resources().get("GPU", 0)
        # Jobs at once per worker: one on the device, others decoding and encoding beside it.
        opts: dict[str, Any] = {"max_concurrency": 4, "num_cpus": self.config.cpus_per_worker}
        if gpus >= 1 and self.config.backend != "cpu":
            opts["num_gpus"] = self.config.gpus_per_worker
        else:
            opts["scheduling_strategy"] = "SPREAD"
        return opts

    def _worker_count(self) -> int:
        if self.config.workers > 0:
            return self.config.workers
        gpus = self._ray.cluster_resources().get("GPU", 0)
        per_gpu = 1.0 / self.config.gpus_per_worker if self.config.gpus_per_worker > 0 else 1.0
        return max(1, int(gpus * per_gpu + 1e-9) if self.config.backend != "cpu" else 0)

    def _new_worker(self) -> _WorkerSlot:
        worker_id = f"w{next(self._ids)}"
        actor = self._ray.remote(_RayWorker).options(
            name=f"{self.name}-{worker_id}", namespace=NAMESPACE, max_restarts=0,
            **self._worker_options())
        c = self.config
        handle = actor.remote(worker_id, backend=c.backend, threads=c.threads,
                              key_budget=c.key_budget, host_key_budget=c.host_key_budget,
                              allow_insecure=c.allow_insecure,
                              circuit_modules=c.circuit_modules)
        return _WorkerSlot(worker_id, handle)

    async def _await_ready(self, slot: _WorkerSlot) -> None:
        info = await asyncio.wait_for(slot.handle.info.remote(),
                                      timeout=self.config.worker_start_timeout_s)
        slot.host = info["host"]
        slot.node_id = info.get("node_id", "")

    async def start(self) -> dict[str, Any]:
        """Creates the workers and waits until every one answers."""
        self._cond = asyncio.Condition()
        slots = [self._new_worker() for _ in range(self._worker_count())]
        try:
            await asyncio.gather(*(self._await_ready(s) for s in slots))
        except asyncio.TimeoutError as exc:
            raise ServerUnavailableError(
                "workers did not start within worker_start_timeout_s (not enough GPUs/CPUs in "
                "the cluster for one worker each?)") from exc
        for s in slots:
            self._workers[s.worker_id] = s
        if self.config.session_ttl_s > 0:
            asyncio.get_running_loop().create_task(self._expire_sessions())
        return await self.health()

    async def _replace(self, dead: _WorkerSlot) -> None:
        try:
            slot = self._new_worker()
            slot.restarts = dead.restarts + 1
            await self._await_ready(slot)
            self._workers.pop(dead.worker_id, None)
            self._workers[slot.worker_id] = slot
            async with self._cond:
                self._cond.notify_all()
        except Exception:  # noqa: BLE001 - the cluster lacks room now; the dead slot stays listed
            pass
        finally:
            self._replacing.discard(dead.worker_id)

    def _mark_dead(self, slot: _WorkerSlot) -> None:
        if slot.alive:
            slot.alive = False
            slot.resident.clear()
            self.counters["workers_lost"] += 1
            self._replacing.add(slot.worker_id)
            asyncio.get_running_loop().create_task(self._replace(slot))

    # ---- sessions --------------------------------------------------------------------------
    def _check(self, session_id: str, token: bytes) -> _Session:
        s = self._sessions.get(session_id) if isinstance(session_id, str) else None
        ok = s is not None and isinstance(token, (bytes, bytearray)) and hmac.compare_digest(
            s.token_digest, _token_digest(bytes(token)))
        if not ok:
            self.counters["refused_requests"] += 1
            # One message for unknown and foreign sessions: no oracle for valid ids.
            raise SessionError("request refused: the session is not open for this client "
                               "(unknown, closed, or opened by another client)")
        s.last_used = time.time()
        return s

    async def open_session(self, token: bytes, upload: KeyUpload, owner: str | None = None,
                           limits: KeyLimits | None = None) -> str:
        """A new session with these keys. owner / limits: the API key opening it over HTTP (its
        sessions and key bytes are counted against its limits)."""
        if not isinstance(upload, KeyUpload):
            raise JobError("open_session: expected a KeyUpload (ClientKeys.upload)")
        if not isinstance(token, (bytes, bytearray)) or len(token) < 16:
            raise SessionError("open_session: a client token of at least 16 bytes is required")
        import theodosian as th  # noqa: PLC0415

        try:
            params = th.Parameters.from_json(upload.params_json)
        except th.Error as exc:
            raise JobError(f"open_session: the parameter set does not load: {exc}") from exc
        if parameters_fingerprint(params) != upload.fingerprint:
            raise JobError("open_session: the upload's fingerprint does not match its parameters")
        if upload.nbytes > self.config.key_budget:
            raise JobError(f"open_session: the keys ({upload.nbytes / 2**20:.1f} MiB) exceed a "
                           f"worker's key budget ({self.config.key_budget / 2**20:.1f} MiB)")
        if owner is not None:
            self.quotas.admit_session(owner, limits or KeyLimits(), len(upload.payload))
        session_id = secrets.token_urlsafe(32)
        key_ref = self._ray.put(upload)
        self._sessions[session_id] = _Session(_token_digest(bytes(token)), upload.fingerprint,
                                              upload.params_json, key_ref, upload.nbytes,
                                              owner=owner, upload_bytes=len(upload.payload))
        if owner is not None:
            self.quotas.add_session(owner, session_id, len(upload.payload))
        self.counters["sessions_opened"] += 1
        return session_id

    async def session_info(self, session_id: str, token: bytes) -> dict[str, Any]:
        s = self._check(session_id, token)
        return {"session": session_id, "jobs": s.jobs, "key_bytes": s.upload_bytes,
                "loaded_key_bytes": s.key_bytes, "fingerprint": s.fingerprint,
                "age_s": round(time.time() - s.created, 1)}

    async def open_stored_session(self, token: bytes, upload: KeyUpload, stored: list[Any],
                                  upload_bytes: int, owner: str, limits: KeyLimits) -> str:
        """open_session for an upload already in the object store (stored: [its reference];
        upload: its metadata, checked by the HTTP API, with an empty payload). The controller
        takes its own copy (a task that returns it: the controller owns the result), so the
        keys outlive the HTTP replica that received them, without passing through this
        process."""
        if upload.nbytes > self.config.key_budget:
            raise LimitError(f"the keys ({upload.nbytes / 2**20:.1f} MiB once loaded) exceed a "
                             f"worker's key budget ({self.config.key_budget / 2**20:.1f} MiB)",
                             limit="worker_key_budget", status=413,
                             maximum=self.config.key_budget, value=upload.nbytes)
        self.quotas.admit_session(owner, limits, upload_bytes)
        if self._keep is None:
            self._keep = self._ray.remote(num_cpus=0, num_returns=2)(_keep_upload)
        key_ref, size_ref = self._keep.remote(stored[0])
        try:
            if await size_ref != upload_bytes:
                raise JobError("open_session: the stored upload does not match its metadata")
        except self._ray.exceptions.RayTaskError as exc:
            raise JobError(f"open_session: the key upload could not be stored: {exc}") from None
        self.quotas.admit_session(owner, limits, upload_bytes)  # again: others may have come
        session_id = secrets.token_urlsafe(32)
        self._sessions[session_id] = _Session(_token_digest(bytes(token)), upload.fingerprint,
                                              upload.params_json, key_ref, upload.nbytes,
                                              owner=owner, upload_bytes=upload_bytes)
        self.quotas.add_session(owner, session_id, upload_bytes)
        self.counters["sessions_opened"] += 1
        return session_id

    async def close_session(self, session_id: str, token: bytes) -> None:
        self._check(session_id, token)
        self._drop_session(session_id)

    def _drop_session(self, session_id: str) -> None:
        s = self._sessions.pop(session_id, None)
        if s is not None and s.owner is not None:
            self.quotas.remove_session(s.owner, session_id, s.upload_bytes)
        self.counters["sessions_closed"] += 1
        for slot in self._workers.values():
            if session_id in slot.resident and slot.alive:
                slot.resident.discard(session_id)
                slot.handle.drop_session.remote(session_id)

    async def _expire_sessions(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.config.session_ttl_s / 4))
            cutoff = time.time() - self.config.session_ttl_s
            for sid in [k for k, s in self._sessions.items() if s.last_used < cutoff]:
                self._drop_session(sid)

    async def register_function(self, session_id: str, token: bytes, name: str, fn: Any,
                                arity: int, elementwise: bool) -> None:
        s = self._check(session_id, token)
        if not self.config.allow_user_functions:
            raise JobError("this server does not accept user functions (allow_user_functions)")
        if not callable(fn) or not isinstance(name, str) or not name:
            raise JobError("register_function: a name and a callable are needed")
        if int(arity) < 1:
            raise JobError("register_function: arity must be >= 1")
        s.functions[name] = (fn, int(arity), bool(elementwise))

    # ---- scheduling ------------------------------------------------------------------------
    def _pick(self, session_id: str, exclude: set[str]) -> _WorkerSlot | None:
        """The worker for the next chunk: free slot, keys already there first, then least
        loaded; None when every live worker is full."""
        alive = [s for s in self._workers.values() if s.alive]
        if all(s.worker_id in exclude for s in alive):
            exclude = set()  # every live worker failed this chunk once: try them again
        best = None
        best_score = None
        for slot in alive:
            if slot.worker_id in exclude or slot.inflight >= self.config.max_queue:
                continue
            # A key load costs about as much as a few queued chunks.
            score = slot.inflight + (0 if session_id in slot.resident else 2)
            if best_score is None or score < best_score:
                best, best_score = slot, score
        return best

    def _any_worker(self) -> bool:
        """A worker is alive or one is being started."""
        return bool(self._replacing) or any(s.alive for s in self._workers.values())

    async def _acquire(self, session_id: str, exclude: set[str], wait: bool,
                       deadline: float) -> _WorkerSlot:
        assert self._cond is not None
        async with self._cond:
            slot = self._pick(session_id, exclude)
            if slot is None:
                if not self._any_worker():
                    raise ServerUnavailableError("no worker is alive")
                if not wait:
                    self.counters["busy_rejections"] += 1
                    raise BusyError("server busy: every worker's queue is full "
                                    f"({self.config.max_queue} jobs each); retry later or "
                                    "submit with wait=True")
                if self._waiting >= self.config.max_waiting:
                    self.counters["busy_rejections"] += 1
                    raise BusyError(f"server busy: {self._waiting} jobs already waiting")
                self._waiting += 1
                try:
                    while slot is None:
                        if not self._any_worker():
                            raise ServerUnavailableError("no worker is alive")
                        remaining = deadline - time.monotonic()
                        if remaining <= 0:
                            self.counters["busy_rejections"] += 1
                            raise BusyError("server busy: no worker became free before the "
                                            "job's timeout")
                        try:
                            await asyncio.wait_for(self._cond.wait(), timeout=min(remaining, 1.0))
                        except asyncio.TimeoutError:
                            pass
                        slot = self._pick(session_id, exclude)
                finally:
                    self._waiting -= 1
            slot.inflight += 1
            return slot

    async def _release(self, slot: _WorkerSlot) -> None:
        assert self._cond is not None
        async with self._cond:
            slot.inflight -= 1
            self._cond.notify_all()

    def _chunks(self, session_id: str, circ_arity: int, elementwise: bool, n: int) -> list[range]:
        groups = n // circ_arity
        if not (self.config.split_batches and elementwise) or groups <= 1:
            return [range(0, n)]
        # Workers that hold the keys, plus idle ones: splitting onto a busy worker without the
        # keys would only queue a key load behind other jobs.
        targets = [s for s in self._workers.values() if s.alive and (
            session_id in s.resident or s.inflight == 0)]
        k = max(1, min(groups, len(targets)))
        if self.config.chunk_groups > 0:
            k = max(k, -(-groups // self.config.chunk_groups))
        per, extra = divmod(groups, k)
        out, start = [], 0
        for i in range(k):
            g = per + (1 if i < extra else 0)
            out.append(range(start * circ_arity, (start + g) * circ_arity))
            start += g
        return out

    async def _run_chunk(self, base: dict[str, Any], session_id: str, refs: list[Any],
                         first: int, wait: bool, deadline: float) -> tuple[dict, Any]:
        ray = self._ray
        exclude: set[str] = set()
        attempts = self.config.retries + 1
        for attempt in range(attempts):
            slot = await self._acquire(session_id, exclude, wait, deadline)
            job = dict(base, inputs=refs, first_index=first)
            try:
                status_ref, payload_ref = slot.handle.run.options(num_returns=2).remote(job)
                remaining = max(0.1, deadline - time.monotonic())
                status = await asyncio.wait_for(status_ref, timeout=remaining)
            except asyncio.TimeoutError as exc:
                raise ServerUnavailableError(
                    f"the job did not finish within its timeout on worker {slot.worker_id}"
                ) from exc
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as exc:
                self._mark_dead(slot)
                exclude.add(slot.worker_id)
                self.counters["chunks_retried"] += 1
                if attempt + 1 == attempts:
                    raise ServerUnavailableError(
                        f"the job's worker died {attempts} times; giving up ({exc})") from exc
                continue
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, ServeError):
                    raise cause from None
                raise JobError(f"the job failed on the server: {cause or exc}") from None
            finally:
                await self._release(slot)
            slot.jobs += 1
            slot.resident.add(session_id)
            for sid in status.get("evicted", ()):
                slot.resident.discard(sid)
            return status, payload_ref
        raise ServerUnavailableError("no attempt was made")  # pragma: no cover

    async def submit(self, session_id: str, token: bytes, circuit: str, args: dict[str, Any],
                     inputs: list[Any], wait: bool = True, timeout_s: float | None = None
                     ) -> dict[str, Any]:
        """Runs a job; returns {'payloads': [ref per chunk], 'stats': {...}}. inputs: object
        references of serialized ciphertexts (in a list, so Ray passes them unresolved)."""
        t0 = time.monotonic()
        s = self._check(session_id, token)
        if circuit in s.functions:
            fn, arity, elementwise = s.functions[circuit]
        else:
            c = circuit_registry.get(circuit)
            fn, arity, elementwise = None, c.arity, c.elementwise
        n = len(inputs)
        if n == 0 or n % arity:
            raise JobError(f"circuit {circuit!r} takes groups of {arity} ciphertexts; got {n}")
        if not isinstance(args, dict):
            raise JobError("args must be a dict")
        self.counters["jobs_submitted"] += 1
        s.jobs += 1
        deadline = t0 + (timeout_s or self.config.job_timeout_s)
        base = {"session_id": session_id, "fingerprint": s.fingerprint,
                "params_json": s.params_json, "key_ref": [s.key_ref], "circuit": circuit,
                "fn": fn, "arity": arity, "elementwise": elementwise, "args": args}
        chunks = self._chunks(session_id, arity, elementwise, n)
        try:
            results = await asyncio.gather(*(
                self._run_chunk(base, session_id, inputs[r.start:r.stop], r.start, wait, deadline)
                for r in chunks))
        except Exception:
            self.counters["jobs_failed"] += 1
            raise
        self.counters["jobs_completed"] += 1
        elapsed = time.monotonic() - t0
        self._latencies.append(elapsed)
        if len(self._latencies) > 10000:
            del self._latencies[:5000]
        stats = {"chunks": len(chunks), "seconds": elapsed,
                 "compute_s": sum(st["compute_s"] for st, _ in results),
                 "workers": [st["worker_id"] for st, _ in results]}
        return {"payloads": [p for _, p in results], "stats": stats}

    # ---- operations ------------------------------------------------------------------------
    async def health(self) -> dict[str, Any]:
        alive = sum(1 for s in self._workers.values() if s.alive)
        total = len(self._workers)
        status = "ok" if alive == total and total > 0 else ("degraded" if alive else "down")
        return {"status": status, "workers_alive": alive, "workers": total,
                "sessions": len(self._sessions), "uptime_s": round(time.time() - self._started, 1)}

    async def metrics(self, per_worker_timeout_s: float = 5.0) -> dict[str, Any]:
        workers = []
        for slot in list(self._workers.values()):
            entry: dict[str, Any] = {"worker_id": slot.worker_id, "host": slot.host,
                                     "alive": slot.alive, "inflight": slot.inflight,
                                     "jobs": slot.jobs, "restarts": slot.restarts}
            if slot.alive:
                try:
                    st = await asyncio.wait_for(slot.handle.stats.remote(),
                                                timeout=per_worker_timeout_s)
                    st.pop("resident_sessions", None)  # ids are secrets
                    entry.update(st)
                except Exception as exc:  # noqa: BLE001 - report, don't fail the metrics call
                    entry["error"] = f"{type(exc).__name__}: {exc}"
            workers.append(entry)
        lat = sorted(self._latencies[-2000:])

        def pct(p: float) -> float | None:
            return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3, 3) if lat else None

        queue_depth = sum(s.inflight for s in self._workers.values()) + self._waiting
        return {"health": await self.health(), "counters": dict(self.counters),
                "queue_depth": queue_depth, "waiting": self._waiting,
                **self.stream_jobs_summary(),
                "latency_ms": {"p50": pct(0.5), "p99": pct(0.99), "samples": len(lat)},
                "sessions": [{"tag": _tag(sid), "jobs": s.jobs, "key_bytes": s.key_bytes,
                              "functions": len(s.functions),
                              "idle_s": round(time.time() - s.last_used, 1)}
                             for sid, s in self._sessions.items()],
                "workers": workers, "config": dataclasses.asdict(self.config)}

    async def worker_names(self) -> list[str]:
        """Actor names of the live workers (operations, fault-injection tests)."""
        return [f"{self.name}-{s.worker_id}" for s in self._workers.values() if s.alive]

    async def shutdown(self) -> None:
        for slot in self._workers.values():
            try:
                self._ray.kill(slot.handle)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self._workers.clear()


def _keep_upload(upload: KeyUpload) -> tuple[KeyUpload, int]:
    """The upload and its size (a Ray task: its caller owns the copy it returns)."""
    return upload, len(upload.payload)


class _RayWorker(Worker):
    """Worker as a Ray actor: object references resolved with ray.get; run() returns its status
    and its payload as two objects (the controller waits on the small one only)."""

    def __init__(self, worker_id: str, **kwargs: Any) -> None:
        import ray  # noqa: PLC0415

        super().__init__(worker_id, fetch=ray.get, **kwargs)
        self._node_id = ray.get_runtime_context().get_node_id()

    def info(self) -> dict[str, Any]:
        d = super().info()
        d["node_id"] = self._node_id
        return d


# ---- starting and stopping ----------------------------------------------------------------------


@dataclasses.dataclass
class Server:
    """A started server: the controller's handle and its configuration."""

    handle: Any
    config: ServerConfig
    name: str = SERVER_NAME

    def health(self, timeout_s: float = 30.0) -> dict[str, Any]:
        import ray  # noqa: PLC0415

        return ray.get(self.handle.health.remote(), timeout=timeout_s)

    def metrics(self, timeout_s: float = 30.0) -> dict[str, Any]:
        import ray  # noqa: PLC0415

        return ray.get(self.handle.metrics.remote(), timeout=timeout_s)

    def stop(self, timeout_s: float = 30.0) -> None:
        import ray  # noqa: PLC0415

        try:
            ray.get(self.handle.shutdown.remote(), timeout=timeout_s)
        finally:
            ray.kill(self.handle)


def init_ray(address: str | None = None, *, num_cpus: int | None = None,
             num_gpus: int | None = None, object_store_mb: int | None = None,
             log_to_driver: bool = False) -> None:
    """Connects to a Ray cluster (address 'auto' or host:port) or starts a local one (address
    None), without the dashboard. Nothing happens when Ray is already initialized here."""
    from .errors import require_ray  # noqa: PLC0415

    ray = require_ray()
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"namespace": NAMESPACE, "log_to_driver": log_to_driver,
                              "configure_logging": False}
    if address is None:
        kwargs.update(include_dashboard=False, num_cpus=num_cpus, num_gpus=num_gpus)
        if object_store_mb:
            kwargs["object_store_memory"] = int(object_store_mb) << 20
    else:
        kwargs["address"] = address
    for attempt in range(3):
        try:
            ray.init(**kwargs)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
            # Ray gives a starting node 30 s (fixed) to register; on a loaded machine that can
            # pass. Start again rather than fail.
            if "timed out during startup" not in str(exc) or attempt == 2:
                raise
            ray.shutdown()


def start(config: ServerConfig | None = None, *, address: str | None = None,
          detached: bool = False, name: str = SERVER_NAME, start_timeout_s: float = 300.0,
          **ray_init: Any) -> Server:
    """Starts a server in the Ray cluster at `address` (None: a local cluster started here, with
    `ray_init` options such as num_cpus, num_gpus, object_store_mb). detached: the server outlives
    this process (stop it with stop() or the CLI)."""
    from .errors import require_ray  # noqa: PLC0415

    ray = require_ray()
    config = config or ServerConfig()
    init_ray(address, **ray_init)
    opts: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "num_cpus": 0,
                            "max_concurrency": 1000}
    if detached:
        opts["lifetime"] = "detached"
    handle = ray.remote(Controller).options(**opts).remote(config, name)
    try:
        ray.get(handle.start.remote(), timeout=start_timeout_s)
    except Exception:
        ray.kill(handle)
        raise
    return Server(handle, config, name)


def get_server(name: str = SERVER_NAME, address: str | None = "auto") -> Server:
    """The running server's handle (connecting to the cluster at `address` first)."""
    from .errors import require_ray  # noqa: PLC0415

    ray = require_ray()
    init_ray(address)
    try:
        handle = ray.get_actor(name, namespace=NAMESPACE)
    except ValueError as exc:
        raise ServerUnavailableError(f"no server named {name!r} in this Ray cluster") from exc
    return Server(handle, ServerConfig(), name)
