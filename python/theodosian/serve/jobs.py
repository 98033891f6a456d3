"""Jobs whose results stream back as they finish (the HTTP API's jobs), as part of the controller.

A job is opened with its circuit, arguments and the number of input ciphertexts; the chunk plan
is fixed then. Its inputs are fed as they arrive (the HTTP layer reads a request body frame by
frame), and every chunk whose inputs are all there starts at once, so the device works on the
first chunk while the rest of the body is still on the wire. Finished chunks are listed in the
order they finish; a reader asks for the entries past the ones it has (long polling), which also
releases those it has. A job is forgotten when its reader has taken everything after it ended,
when it is dropped, or when its results waited longer than their time to live.

Job ids are 256-bit random and every call is checked against the token of the session's owner:
another client gets the same "no such job" as for an unknown id.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import secrets
import time
from typing import Any

from . import circuits as circuit_registry
from .errors import JobError, ServeError, ServerUnavailableError, SessionError
from .limits import KeyLimits

#: How often expired jobs are looked for (seconds).
SWEEP_INTERVAL_S = 2.0


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(bytes(token)).digest()


@dataclasses.dataclass
class StreamJob:
    job_id: str
    session_id: str
    token_digest: bytes
    owner: str | None
    circuit: str
    base: dict[str, Any]
    chunks: list[range]
    count: int
    wait: bool
    deadline: float
    result_ttl_s: float
    inputs: list[Any] = dataclasses.field(default_factory=list)
    dispatched: int = 0
    # Finished chunks in the order they finished: index, inputs [start, stop), outputs, payload.
    done: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    released: int = 0
    state: str = "running"
    error: dict[str, Any] | None = None
    tasks: list[asyncio.Task] = dataclasses.field(default_factory=list)
    started: float = dataclasses.field(default_factory=time.monotonic)
    finished: float | None = None
    compute_s: float = 0.0
    changed: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    def describe(self, entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"job": self.job_id, "state": self.state, "circuit": self.circuit,
                               "inputs": self.count, "chunks": len(self.chunks),
                               "chunks_done": len(self.done), "error": self.error}
        if self.finished is not None:
            out["seconds"] = round(self.finished - self.started, 6)
            out["compute_s"] = round(self.compute_s, 6)
        if entries is not None:
            out["entries"] = entries
        return out


def error_record(exc: BaseException) -> dict[str, Any]:
    """A failure as the API reports it (type and message; the HTTP status it maps to)."""
    if isinstance(exc, ServerUnavailableError):
        status = 503
    elif isinstance(exc, ServeError):
        status = 400
    else:
        status = 500
    return {"type": type(exc).__name__, "message": str(exc), "status": status}


class StreamJobs:
    """The controller's streaming jobs (mixed into Controller: uses its _check, _chunks,
    _run_chunk, quotas, counters and config)."""

    _jobs: dict[str, StreamJob]

    def _init_stream_jobs(self) -> None:
        self._jobs = {}
        self._sweeper: asyncio.Task | None = None

    def _job(self, job_id: str, token: bytes, session_id: str | None = None) -> StreamJob:
        job = self._jobs.get(job_id) if isinstance(job_id, str) else None
        ok = job is not None and isinstance(token, (bytes, bytearray)) and hmac.compare_digest(
            job.token_digest, _digest(token)) and session_id in (None, job.session_id)
        if not ok or job is None:
            self.counters["refused_requests"] += 1
            raise SessionError("no such job for this client (unknown, finished and fetched, "
                               "or another client's)")
        return job

    async def open_job(self, session_id: str, token: bytes, circuit: str, args: Any,
                       count: int, owner: str | None = None, limits: KeyLimits | None = None,
                       wait: bool = True, timeout_s: float | None = None,
                       result_ttl_s: float = 600.0) -> dict[str, Any]:
        """Opens a job of `count` inputs (fed with feed_job). Returns its id and chunk plan."""
        s = self._check(session_id, token)
        if circuit in s.functions:
            fn, arity, elementwise = s.functions[circuit]
            checked = args if isinstance(args, dict) else {}
        else:
            c = circuit_registry.get(circuit)
            fn, arity, elementwise = None, c.arity, c.elementwise
            checked = c.check_args(args)
        if not isinstance(count, int) or count <= 0 or count % arity:
            raise JobError(f"circuit {circuit!r} takes groups of {arity} ciphertexts; got "
                           f"{count}")
        if owner is not None:
            self.quotas.admit_job(owner, limits or KeyLimits())
        if self._sweeper is None:
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep_jobs())
        job_id = secrets.token_urlsafe(32)
        base = {"session_id": session_id, "fingerprint": s.fingerprint,
                "params_json": s.params_json, "key_ref": [s.key_ref], "circuit": circuit,
                "fn": fn, "arity": arity, "elementwise": elementwise, "args": checked}
        limit = timeout_s or self.config.job_timeout_s
        job = StreamJob(job_id, session_id, _digest(token), owner, circuit, base,
                        self._chunks(session_id, arity, elementwise, count), count, bool(wait),
                        time.monotonic() + limit, float(result_ttl_s))
        self._jobs[job_id] = job
        s.jobs += 1
        self.counters["jobs_submitted"] += 1
        return {"job": job_id, "chunks": [[r.start, r.stop] for r in job.chunks],
                "fingerprint": s.fingerprint}

    async def feed_job(self, job_id: str, token: bytes, first: int, refs: list[Any]) -> None:
        """Adds the job's inputs `first` .. (in order; a list of object references), and starts
        every chunk whose inputs are all there."""
        job = self._job(job_id, token)
        if job.state != "running":
            return
        if first != len(job.inputs) or len(job.inputs) + len(refs) > job.count:
            raise JobError(f"inputs {first}..{first + len(refs)} do not follow the "
                           f"{len(job.inputs)} received (of {job.count})")
        job.inputs.extend(refs)
        loop = asyncio.get_running_loop()
        while job.dispatched < len(job.chunks) and job.chunks[job.dispatched].stop <= len(
                job.inputs):
            index = job.dispatched
            job.tasks.append(loop.create_task(self._stream_chunk(job, index)))
            job.dispatched += 1

    async def _stream_chunk(self, job: StreamJob, index: int) -> None:
        r = job.chunks[index]
        try:
            status, payload = await self._run_chunk(job.base, job.session_id,
                                                    job.inputs[r.start:r.stop], r.start,
                                                    job.wait, job.deadline)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the job fails with the chunk's error
            self._finish(job, error_record(exc))
            return
        if job.state != "running":
            return
        job.compute_s += status.get("compute_s", 0.0)
        job.done.append({"index": index, "inputs": [r.start, r.stop],
                         "outputs": status["n_out"], "payload": payload,
                         "worker": status["worker_id"]})
        if len(job.done) == len(job.chunks):
            self._finish(job, None)
        job.changed.set()

    def _finish(self, job: StreamJob, error: dict[str, Any] | None) -> None:
        if job.state != "running":
            return
        job.finished = time.monotonic()
        if error is None:
            job.state = "done"
            self.counters["jobs_completed"] += 1
            self._latencies.append(job.finished - job.started)
            if len(self._latencies) > 10000:
                del self._latencies[:5000]
        else:
            job.state = "failed"
            job.error = error
            self.counters["jobs_failed"] += 1
            for t in job.tasks:
                if not t.done():
                    t.cancel()
        job.changed.set()

    async def job_results(self, job_id: str, token: bytes, have: int = 0, wait_s: float = 0.0,
                          release: bool = True, session_id: str | None = None
                          ) -> dict[str, Any]:
        """The job's state and its finished chunks past the first `have` (waiting up to wait_s
        for one when there is none yet). release: the first `have` are the caller's now (their
        results are let go), and a job that ended is forgotten once the caller has them all.
        session_id: when given, the job must belong to it."""
        job = self._job(job_id, token, session_id)
        if not isinstance(have, int) or have < 0 or have > len(job.done):
            raise JobError(f"have={have!r}: the job has {len(job.done)} finished chunks")
        deadline = time.monotonic() + max(0.0, min(float(wait_s), 60.0))
        while job.state == "running" and len(job.done) == have:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            job.changed.clear()
            try:
                await asyncio.wait_for(job.changed.wait(), timeout=remaining)
            except asyncio.TimeoutError:
                break
        if release:
            for entry in job.done[job.released:have]:
                entry["payload"] = None
            job.released = max(job.released, have)
        entries = [{k: v for k, v in e.items()} for e in job.done[have:]]
        out = job.describe(entries)
        if release and job.state != "running" and have == len(job.done):
            self._remove_job(job)
        return out

    async def drop_job(self, job_id: str, token: bytes, session_id: str | None = None) -> None:
        """Cancels a job (when running) and forgets it with its results."""
        job = self._job(job_id, token, session_id)
        if job.state == "running":
            self._finish(job, {"type": "Cancelled", "message": "the job was cancelled",
                               "status": 400})
        self._remove_job(job)

    def _remove_job(self, job: StreamJob) -> None:
        if self._jobs.pop(job.job_id, None) is not None and job.owner is not None:
            self.quotas.release_job(job.owner)
        for t in job.tasks:
            if not t.done():
                t.cancel()
        job.done.clear()

    async def _sweep_jobs(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            now = time.monotonic()
            for job in list(self._jobs.values()):
                if job.state == "running" and now > job.deadline + SWEEP_INTERVAL_S:
                    self._finish(job, {"type": "ServerUnavailableError", "status": 503,
                                       "message": "the job did not finish within its timeout"
                                       + ("" if len(job.inputs) == job.count else
                                          " (its inputs did not all arrive)")})
                elif job.finished is not None and now - job.finished > job.result_ttl_s:
                    self._remove_job(job)

    def stream_jobs_summary(self) -> dict[str, int]:
        running = sum(1 for j in self._jobs.values() if j.state == "running")
        return {"jobs_open": len(self._jobs), "jobs_running": running}
