"""The HTTP API (FastAPI, served by Ray Serve in front of the Ray server; see http_server.py).

Every request carries an API key (``Authorization: Bearer theo_...``; 401 otherwise) and spends a
token of that key's rate limit (429). A session belongs to the key that opened it: the Ray server
checks a token derived from the key's stored hash on every call, so another key gets the same 404
as an unknown id. Bodies are frame streams (frames.py), read piece by piece under their limit
(413); every frame is checked before it is used (400 with the reason): the key container and its
parts' headers against the parameter sets offered, each ciphertext's header against the session's
parameters and its length, the circuit against the catalogue and its arguments against the
circuit's declaration. A job's chunks start on the workers while the rest of its body is still
arriving, and its results stream back chunk by chunk as they finish.

Refusals are JSON: ``{"error": {"status", "code", "message", "limit", "maximum", "value"}}``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import time
from typing import Any, AsyncIterator

import theodosian as th

from . import circuits as circuit_registry
from . import frames
from .apikeys import ApiKey, KeyStore
from .errors import (AuthenticationError, BusyError, JobError, LimitError,
                     ServerUnavailableError, SessionError)
from .http_metrics import HttpCounters, prometheus_text
from .keys import upload_from_request
from .limits import HttpConfig, KeyLimits, TokenBucket
from .wire import Blob

#: Longest a results request waits for a chunk before answering with what it has (seconds).
POLL_WAIT_S = 20.0


class Refusal(Exception):
    """An HTTP error answer: status, a code word, the message, and the limit when one refused."""

    def __init__(self, status: int, code: str, message: str, *, limit: str | None = None,
                 maximum: Any = None, value: Any = None,
                 retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.limit = limit
        self.maximum = maximum
        self.value = value
        self.retry_after_s = retry_after_s

    def body(self) -> dict[str, Any]:
        err: dict[str, Any] = {"status": self.status, "code": self.code, "message": self.message}
        if self.limit is not None:
            err.update(limit=self.limit, maximum=self.maximum, value=self.value)
        if self.retry_after_s is not None:
            err["retry_after_s"] = self.retry_after_s
        return {"error": err}

    def headers(self) -> dict[str, str]:
        h = {}
        if self.retry_after_s is not None:
            h["Retry-After"] = str(max(1, int(self.retry_after_s + 0.999)))
        if self.status == 401:
            h["WWW-Authenticate"] = 'Bearer realm="theodosian"'
        return h


def refusal_of(exc: BaseException) -> Refusal:
    """The HTTP answer for an exception from a check or from the Ray server."""
    exc = _cause(exc)
    if isinstance(exc, Refusal):
        return exc
    if isinstance(exc, LimitError):
        return Refusal(exc.status, "limit", str(exc), limit=exc.limit, maximum=exc.maximum,
                       value=exc.value, retry_after_s=exc.retry_after_s)
    if isinstance(exc, AuthenticationError):
        return Refusal(401, "unauthorized", str(exc))
    if isinstance(exc, SessionError):
        return Refusal(404, "not_found", str(exc))
    if isinstance(exc, (JobError, frames.FrameError)):
        return Refusal(400, "bad_request", str(exc))
    if isinstance(exc, BusyError):
        return Refusal(503, "busy", str(exc), retry_after_s=1.0)
    if isinstance(exc, (ServerUnavailableError, asyncio.TimeoutError)):
        return Refusal(503, "unavailable", str(exc) or "the server did not answer in time",
                       retry_after_s=1.0)
    if type(exc).__module__.startswith("ray."):
        return Refusal(503, "unavailable", f"the server is unavailable ({type(exc).__name__})",
                       retry_after_s=1.0)
    return Refusal(500, "internal", f"internal error ({type(exc).__name__}: {exc})")


def _cause(exc: BaseException) -> BaseException:
    """The server's exception inside a Ray task error."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and type(exc).__name__.startswith("RayTaskError"):
        return cause
    return exc


def _too_large(limit: str, maximum: int, value: int | None, what: str) -> Refusal:
    return Refusal(413, "payload_too_large", f"{what} exceeds the limit {limit} "
                   f"({maximum} bytes)", limit=limit, maximum=maximum, value=value)


def _parameter_sets(cfg: HttpConfig) -> dict[str, th.Parameters]:
    """The parameter sets offered, by fingerprint (refusing sets below 128-bit security unless
    allow_insecure)."""
    out = {}
    for name in cfg.parameter_sets:
        params = (th.Parameters.load(name) if os.path.sep in name or name.endswith(".json")
                  else th.Parameters.preset(name))
        if not params.is_secure and not cfg.allow_insecure:
            raise th.SecurityError(f"parameter set {name!r} is below 128-bit security; offer "
                                   "it only with allow_insecure (tests)")
        out[params.fingerprint] = params
    return out


class Api:
    """The API's state in one replica: the key store, rate limits, counters, the Ray server."""

    def __init__(self, cfg: HttpConfig, controller: Any, replica: str = "") -> None:
        self.cfg = cfg
        self.keys = KeyStore(cfg.api_keys)
        self.allowed = _parameter_sets(cfg)
        self.ctl = controller
        self.replica = replica
        self.counters = HttpCounters()
        self._buckets: dict[str, TokenBucket] = {}
        self._started = time.time()

    # ---- who is asking -------------------------------------------------------------------------
    def limits_of(self, key: ApiKey) -> KeyLimits:
        return self.cfg.key_limits.merged(key.limits)

    def authenticate(self, authorization: str | None) -> ApiKey:
        presented = None
        if authorization and authorization[:7].lower() == "bearer ":
            presented = authorization[7:].strip()
        key = self.keys.verify(presented)
        if key is None:
            raise Refusal(401, "unauthorized", "a valid API key is required (Authorization: "
                          "Bearer theo_...); the key is missing, malformed, unknown or revoked")
        limits = self.limits_of(key)
        bucket = self._buckets.get(key.id)
        # The rate is shared out between the replicas (requests are spread over them).
        rate = limits.requests_per_s / self.cfg.replicas
        burst = max(1, limits.burst // self.cfg.replicas)
        if bucket is None or bucket.rate != rate or bucket.capacity != burst:
            bucket = self._buckets[key.id] = TokenBucket(rate, burst)
        bucket.take()
        return key

    # ---- bodies --------------------------------------------------------------------------------
    async def body_frames(self, request: Any, limit: int, limit_name: str, what: str,
                          max_frame: int | None = None) -> AsyncIterator[tuple[int, memoryview]]:
        """The request body's frames as they complete, never reading past `limit` bytes."""
        declared = request.headers.get("content-length")
        if declared is not None:
            try:
                n = int(declared)
            except ValueError:
                raise Refusal(400, "bad_request", "Content-Length is not a number") from None
            if n > limit:
                raise _too_large(limit_name, limit, n, what)
        reader = frames.FrameReader(max_frame or limit)
        total = 0
        async for piece in request.stream():
            total += len(piece)
            if total > limit:
                raise _too_large(limit_name, limit, None, what)
            reader.feed(piece)
            for f in reader.frames():
                yield f
        reader.finish()
        self.counters.bytes_in += total

    # ---- sessions ------------------------------------------------------------------------------
    async def open_session(self, key: ApiKey, request: Any) -> dict[str, Any]:
        import ray  # noqa: PLC0415

        limits = self.limits_of(key)
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > limits.key_bytes + (1 << 20):
            raise Refusal(413, "limit", f"the upload ({declared} bytes) exceeds this API key's "
                          f"key-bytes limit ({limits.key_bytes})", limit="key_bytes",
                          maximum=limits.key_bytes, value=int(declared))
        got: list[tuple[int, memoryview]] = []
        async for kind, payload in self.body_frames(request, self.cfg.max_upload_bytes,
                                                    "upload_bytes", "the key upload"):
            got.append((kind, payload))
            if len(got) > 2:
                raise Refusal(400, "bad_request", "a session upload is two frames: the JSON "
                              "metadata and the key container")
        if len(got) != 2 or got[0][0] != frames.JSON or got[1][0] != frames.BINARY:
            raise Refusal(400, "bad_request", "a session upload is two frames: the JSON metadata "
                          "and the key container (KeyUpload.to_bytes())")
        meta = frames.parse_json(got[0][1], "key upload metadata")
        upload = upload_from_request(meta, got[1][1], self.allowed)
        del got
        stored = ray.put(upload)
        bare = dataclasses.replace(upload, payload=b"")
        sid = await self.ctl.open_stored_session.remote(key.owner_token, bare, [stored],
                                                        len(upload.payload), key.id, limits)
        params = self.allowed[upload.fingerprint]
        return {"session": sid, "parameters": params.name, "fingerprint": upload.fingerprint,
                "key_bytes": len(upload.payload), "loaded_key_bytes": upload.nbytes}

    # ---- jobs ----------------------------------------------------------------------------------
    async def submit(self, key: ApiKey, session_id: str, request: Any,
                     timeout_s: float | None) -> dict[str, Any]:
        """Reads a job body, starting its chunks as their inputs arrive; returns the job."""
        import ray  # noqa: PLC0415

        cfg = self.cfg
        job: dict[str, Any] | None = None
        token = key.owner_token
        received: list[Any] = []
        fed = 0
        try:
            async for kind, payload in self.body_frames(request, cfg.max_body_bytes,
                                                        "body_bytes", "the job body"):
                if job is None:
                    if kind != frames.JSON:
                        raise Refusal(400, "bad_request", "a job body starts with a JSON frame "
                                      '{"circuit", "args", "count"}')
                    job = await self._open_job(key, session_id,
                                               frames.parse_json(payload, "job header"),
                                               timeout_s)
                    continue
                index = len(received)
                if kind != frames.BINARY or index >= job["count"]:
                    raise Refusal(400, "bad_request", f"frame {index + 1}: expected "
                                  f"{job['count']} ciphertext frames after the header")
                self._check_ciphertext(payload, index, job["fingerprint"])
                received.append(ray.put(Blob(payload)))
                # Every chunk whose inputs are all here starts now.
                while job["bounds"] and job["bounds"][0] <= len(received):
                    stop = job["bounds"].pop(0)
                    await self.ctl.feed_job.remote(job["job"], token, fed, received[fed:stop])
                    fed = stop
            if job is None:
                raise Refusal(400, "bad_request", "empty job body")
            if len(received) != job["count"]:
                raise Refusal(400, "bad_request", f"the header announced {job['count']} "
                              f"ciphertexts, the body has {len(received)}")
        except BaseException:
            if job is not None:
                try:
                    await self.ctl.drop_job.remote(job["job"], token)
                except Exception:  # noqa: BLE001 - the refusal below matters more
                    pass
            raise
        self.counters.jobs += 1
        return {"job": job["job"], "inputs": job["count"], "chunks": job["chunks"]}

    async def _open_job(self, key: ApiKey, session_id: str, header: dict[str, Any],
                        timeout_s: float | None) -> dict[str, Any]:
        cfg = self.cfg
        name, count, args = header.get("circuit"), header.get("count"), header.get("args", {})
        if not isinstance(name, str):
            raise Refusal(400, "bad_request", "job header: 'circuit' must be a string")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise Refusal(400, "bad_request", "job header: 'count' must be a positive integer")
        if count > cfg.max_ciphertexts_per_job:
            raise Refusal(413, "limit", f"{count} ciphertexts in one job (at most "
                          f"{cfg.max_ciphertexts_per_job})", limit="ciphertexts_per_job",
                          maximum=cfg.max_ciphertexts_per_job, value=count)
        c = circuit_registry.get(name)
        if not c.http:
            raise Refusal(400, "bad_request", f"circuit {name!r} is not offered over HTTP "
                          f"(offered: {[x.name for x in circuit_registry.http_catalogue()]})")
        args = c.check_args(args)
        opened = await self.ctl.open_job.remote(
            session_id, key.owner_token, name, args, count, key.id, self.limits_of(key), True,
            timeout_s, cfg.result_ttl_s)
        bounds = [stop for _, stop in opened["chunks"]]
        return {"job": opened["job"], "count": count, "chunks": len(bounds), "bounds": bounds,
                "fingerprint": opened["fingerprint"]}

    @staticmethod
    def _check_ciphertext(data: memoryview, index: int, fingerprint: str) -> None:
        """The header of a ciphertext from the network (the worker checks every word later)."""
        try:
            info = th.serialized_info(data)
        except th.Error as exc:
            raise Refusal(400, "bad_request", f"ciphertext {index}: {exc}") from None
        if info["type"] != "Ciphertext":
            raise Refusal(400, "bad_request", f"ciphertext {index}: holds a {info['type']}")
        if info["fingerprint"] != fingerprint:
            raise Refusal(400, "bad_request", f"ciphertext {index} was made for other parameters "
                          "than this session's")
        if info["bytes"] != data.nbytes:
            raise Refusal(400, "bad_request", f"ciphertext {index}: declares {info['bytes']} "
                          f"bytes, the frame has {data.nbytes}")

    async def check_job(self, key: ApiKey, session_id: str, job_id: str, have: int) -> None:
        """Refuses (404, 400) before a results response starts, when the job is not this key's
        or `have` is wrong: once a stream has begun, its status is 200."""
        await self.ctl.job_results.remote(job_id, key.owner_token, have, 0.0, False, session_id)

    async def results(self, key: ApiKey, session_id: str, job_id: str, have: int,
                      follow: bool, intro: dict[str, Any] | None = None
                      ) -> AsyncIterator[bytes]:
        """The job's finished chunks past `have` as frames; follow: until the job ends (a
        stream), else one round (chunked polling: what finished within POLL_WAIT_S). The last
        frame is the job's state ({"end": true, ...} once it ended and everything was sent).
        intro: the job's description, sent first by the stream that answers its submission; a
        client that leaves that stream early drops the job (and its slot among the key's jobs in
        flight) instead of leaving it to the results' TTL: such a client submits again."""
        token = key.owner_token
        try:
            yield frames.MAGIC
            if intro is not None:
                yield frames.json_frame({k: v for k, v in intro.items() if k[0] != "_"})
            async for frame in self._result_frames(token, session_id, job_id, have, follow):
                yield frame
            if intro is not None:
                intro["_delivered"] = True
        finally:
            if intro is not None:
                self.abandon(key, session_id, intro)

    def abandon(self, key: ApiKey, session_id: str, intro: dict[str, Any]) -> None:
        """Drops the job of a submission's stream that ended before delivering it (once; called
        where the stream closes and where the response is torn down, whichever comes first).
        Fire and forget: no await (the stream may be closing under us)."""
        if not intro.get("_delivered") and not intro.get("_dropped"):
            intro["_dropped"] = True
            self.ctl.drop_job.remote(intro["job"], key.owner_token, session_id)

    async def _result_frames(self, token: bytes, session_id: str, job_id: str, have: int,
                             follow: bool) -> AsyncIterator[bytes]:
        while True:
            try:
                r = await self.ctl.job_results.remote(job_id, token, have, POLL_WAIT_S, True,
                                                      session_id)
            except Exception as exc:  # noqa: BLE001 - reported in the stream's last frame
                ref = refusal_of(exc)
                yield frames.json_frame({"end": True, "state": "failed", "have": have,
                                         **ref.body()})
                return
            got = r.pop("entries")
            for entry in got:
                blobs = await entry["payload"]
                yield frames.json_frame({"chunk": entry["index"], "inputs": entry["inputs"],
                                         "outputs": entry["outputs"]})
                for b in blobs:
                    data = memoryview(b.data)
                    self.counters.bytes_out += data.nbytes + frames.HEADER_BYTES
                    yield b"".join((frames.binary_frame_header(data.nbytes), data))
                del blobs
                have += 1
            ended = r["state"] != "running" and have == r["chunks_done"]
            if follow and not ended and not got:
                # Nothing finished within POLL_WAIT_S: a small frame keeps idle-connection
                # timeouts of proxies on the way from closing the stream.
                yield frames.json_frame({"waiting": True, "chunks_done": r["chunks_done"]})
            if ended and got:
                # The entries came in this round: one more call hands over the last of them,
                # which forgets the job (and frees its slot among the key's jobs in flight).
                try:
                    await self.ctl.job_results.remote(job_id, token, have, 0.0, True, session_id)
                except Exception:  # noqa: BLE001 - the results are delivered; the TTL remains
                    pass
            if ended or not follow:
                r["have"] = have
                r["end"] = ended
                if r.get("error"):
                    err = r["error"]
                    r["error"] = {"status": err.get("status", 500), "code": err.get("type"),
                                  "message": err.get("message")}
                yield frames.json_frame(r)
                return

    # ---- metrics -------------------------------------------------------------------------------
    async def metrics_text(self) -> str:
        m = await asyncio.wait_for(self.ctl.metrics.remote(), timeout=30.0)
        return prometheus_text(m, self.counters, self.replica, self.keys.active())

    def catalogue(self) -> list[dict[str, Any]]:
        return [c.describe() for c in circuit_registry.http_catalogue()]

    def parameters(self) -> list[dict[str, Any]]:
        return [{"name": p.name, "fingerprint": fp, "log_n": p.log_n, "slots": p.slots,
                 "parameters": json.loads(p.to_json())} for fp, p in self.allowed.items()]

    def limits(self, key: ApiKey) -> dict[str, Any]:
        c = self.cfg
        return {"body_bytes": c.max_body_bytes, "upload_bytes": c.max_upload_bytes,
                "ciphertexts_per_job": c.max_ciphertexts_per_job,
                "result_ttl_s": c.result_ttl_s, "replicas": c.replicas,
                "key": {"id": key.id, **self.limits_of(key).as_dict()}}
