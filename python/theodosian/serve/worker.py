"""The per-GPU worker: one Context per parameter set, the sessions' keys (KeyCache), and the
execution of circuit chunks. A plain class (tested without Ray); server.py runs one as a Ray actor
per GPU, or per CPU slot on machines without a GPU."""

from __future__ import annotations

import collections
import os
import socket
import threading
import time
from typing import Any, Callable

import theodosian as th

from . import circuits as circuit_registry
from . import wire
from .errors import JobError
from .keycache import KeyCache
from .keys import KeyUpload, materialize, parameters_fingerprint

#: Utilization is the busy fraction over this trailing window.
UTILIZATION_WINDOW_S = 60.0


class Worker:
    def __init__(self, worker_id: str, *, backend: str = "auto", threads: int = 0,
                 key_budget: int = 16 << 30, host_key_budget: int = 32 << 30,
                 allow_insecure: bool = False,
                 circuit_modules: tuple[str, ...] = (),
                 fetch: Callable[[Any], Any] | None = None) -> None:
        self.worker_id = worker_id
        # 'auto' resolved here, so that metrics name the backend before the first Context.
        self.backend = backend if backend != "auto" else (
            "cuda" if th.cuda_available() else "cpu")
        self.threads = threads
        self.allow_insecure = allow_insecure
        self.keys = KeyCache(key_budget, host_key_budget)
        self.helpers = circuit_registry.HelperCache()
        self.plugins = circuit_registry.load_plugins(circuit_modules)
        # Resolves object references (ray.get in an actor; identity in tests without Ray).
        self._fetch = fetch or (lambda x: x)
        self._contexts: dict[str, th.Context] = {}
        self._ctx_lock = threading.Lock()
        # One job at a time on the device (key loads, uploads, circuit, downloads); decoding and
        # encoding of other jobs overlap it (the backend is not shared between threads).
        self._device_lock = threading.Lock()
        self._busy: collections.deque[tuple[float, float]] = collections.deque()
        self._started = time.time()
        self.jobs_done = 0
        self.jobs_failed = 0
        self.ciphertexts_in = 0
        self.ciphertexts_out = 0
        self.busy_seconds = 0.0

    # ---- contexts --------------------------------------------------------------------------
    def context(self, fingerprint: str, params_json: str) -> th.Context:
        with self._ctx_lock:
            ctx = self._contexts.get(fingerprint)
            if ctx is None:
                params = th.Parameters.from_json(params_json)
                if parameters_fingerprint(params) != fingerprint:
                    raise JobError("parameter set and fingerprint disagree")
                ctx = th.Context(params, backend=self.backend, allow_insecure=self.allow_insecure,
                                 threads=self.threads)
                self._contexts[fingerprint] = ctx
            return ctx

    # ---- jobs ------------------------------------------------------------------------------
    def run(self, job: dict[str, Any]) -> tuple[dict[str, Any], list[wire.Blob]]:
        """Runs one chunk. job: session_id, fingerprint, params_json, key_ref (a one-element list
        holding the KeyUpload or its object reference), circuit (name), fn / arity / elementwise
        (a session's registered function, or None), args, inputs (a list of serialized
        ciphertexts (wire.Blob) or their references), first_index (of the chunk in the job's
        batch). Returns the status and the results as wire.Blobs."""
        t0 = time.perf_counter()
        try:
            ctx = self.context(job["fingerprint"], job["params_json"])
            session_id = job["session_id"]

            def fetch_upload() -> KeyUpload:
                upload = self._fetch(job["key_ref"][0])
                if not isinstance(upload, KeyUpload) or upload.fingerprint != job["fingerprint"]:
                    raise JobError("the session's key upload does not match its parameters")
                return upload

            if job.get("fn") is not None:
                circ = circuit_registry.Circuit(job["circuit"], job["fn"], job.get("arity", 1),
                                                job.get("elementwise", True))
            else:
                circ = circuit_registry.get(job["circuit"])
            # Checks and checksums of the inputs into host memory, on the CPU: no device needed.
            blobs = self._fetch(job["inputs"])
            hosts = wire.decode_host_batch(ctx, blobs, job.get("first_index", 0))
            del blobs  # releases the object store's copies
            t_decode = time.perf_counter()
            # The device lock covers what uses the device only: key loads, uploads, the circuit
            # and the downloads of its results. Encoding runs after it, beside the next job.
            with self._device_lock:
                k0 = time.perf_counter()
                keys, evicted = self.keys.get(
                    session_id, fetch_upload,
                    lambda up: materialize(ctx, up))
                c0 = time.perf_counter()
                cts = [h.to_device() for h in hosts]
                del hosts
                env = circuit_registry.CircuitEnv(ctx, keys, self.helpers)
                out = circuit_registry.run(circ, env, cts, dict(job.get("args") or {}))
                c1 = time.perf_counter()
                results = [ct.to_host() for ct in out]
                c2 = time.perf_counter()
                self._note_busy(k0, c2)
            payload = wire.encode_batch(results)
            t_encode = time.perf_counter()
        except Exception:
            self.jobs_failed += 1
            raise
        self.jobs_done += 1
        self.ciphertexts_in += len(cts)
        self.ciphertexts_out += len(out)
        status = {
            "worker_id": self.worker_id,
            "resident": True,
            "evicted": evicted,
            "n_in": len(cts),
            "n_out": len(out),
            "decode_s": t_decode - t0,
            "wait_s": k0 - t_decode,
            "key_s": c0 - k0,
            "compute_s": c1 - c0,
            "download_s": c2 - c1,
            "encode_s": t_encode - c2,
        }
        return status, payload

    def drop_session(self, session_id: str) -> None:
        self.keys.drop(session_id)

    # ---- health ----------------------------------------------------------------------------
    def _note_busy(self, start: float, end: float) -> None:
        self.busy_seconds += end - start
        now = time.perf_counter()
        self._busy.append((start, end))
        while self._busy and self._busy[0][1] < now - UTILIZATION_WINDOW_S:
            self._busy.popleft()

    def utilization(self) -> float:
        now = time.perf_counter()
        lo = now - UTILIZATION_WINDOW_S
        busy = sum(max(0.0, e - max(s, lo)) for s, e in self._busy if e > lo)
        span = min(UTILIZATION_WINDOW_S, time.time() - self._started)
        return min(1.0, busy / span) if span > 0 else 0.0

    def info(self) -> dict[str, Any]:
        return {
            "worker_id": self.worker_id,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "backend": self.backend,
            "cuda_available": th.cuda_available(),
            "circuits": circuit_registry.names(),
            "plugins": self.plugins,
        }

    def stats(self) -> dict[str, Any]:
        backends = sorted({c.backend for c in self._contexts.values()})
        return {
            "worker_id": self.worker_id,
            "backends": backends,
            "jobs_done": self.jobs_done,
            "jobs_failed": self.jobs_failed,
            "ciphertexts_in": self.ciphertexts_in,
            "ciphertexts_out": self.ciphertexts_out,
            "busy_seconds": round(self.busy_seconds, 4),
            "utilization": round(self.utilization(), 4),
            "uptime_s": round(time.time() - self._started, 1),
            "keys": self.keys.stats(),
            "resident_sessions": self.keys.resident(),
        }

    def ping(self) -> str:
        return self.worker_id
