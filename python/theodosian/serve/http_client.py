"""The HTTP client: theodosian and Python's standard library only (http.client, ssl); no Ray.

    from theodosian import serve

    client = serve.HttpClient("https://fhe.example.com", api_key="theo_...")
    with client.open_session(keys) as session:           # uploads the evaluation keys once
        out = session.run("bootstrap", cts)               # blocking; results stream back
        job = session.submit("polynomial", cts, args={"coeffs": c, "a": -8, "b": 8})
        out2 = job.result(timeout_s=60)
        out3 = await session.run_async("rotate_sum", cts, args={"width": 8})
        for out in session.map("bootstrap", batches, in_flight=2):  # the next job is queued
            ...                                                     # while these come back

The same shape as the Ray client (Client / Session / Job). Results arrive chunk by chunk as the
server finishes them and are checked and decoded on a thread pool while the next ones are read,
so a job's last result is ready soon after the server sends it. Errors are the server's:
AuthenticationError (401), SessionError (404, also for another key's session), JobError (400),
LimitError (413, 429: ``.limit`` names it), BusyError / ServerUnavailableError (503, no answer).
A job that failed with 503 or lost its connection is submitted again, up to ``retries`` times
(jobs are pure functions of their inputs).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import http.client
import json
import ssl
import threading
import time
import urllib.parse
from typing import Any, Iterator, Sequence

import theodosian as th

from . import frames, wire
from .errors import (AuthenticationError, BusyError, JobError, LimitError, ServeError,
                     ServerUnavailableError, SessionError)
from .keys import ClientKeys
from .session import ClientSession

#: A result frame larger than this is refused (a ciphertext of the largest parameter sets is
#: well below it).
MAX_RESULT_FRAME = 4 << 30


def error_from(status: int, body: dict[str, Any] | None, what: str) -> ServeError:
    """The exception for an HTTP refusal."""
    err = (body or {}).get("error") or {}
    msg = f"{what}: {err.get('message') or http.client.responses.get(status, 'error')}"
    if status == 401:
        return AuthenticationError(msg)
    if status == 404:
        return SessionError(msg)
    if status in (413, 429) and err.get("limit"):
        return LimitError(msg, limit=err["limit"], status=status, maximum=err.get("maximum"),
                          value=err.get("value"), retry_after_s=err.get("retry_after_s"))
    if status in (400, 413, 422):
        return JobError(msg)
    if status == 503 and err.get("code") == "busy":
        return BusyError(msg)
    if status in (502, 503, 504):
        return ServerUnavailableError(msg)
    return ServeError(f"{msg} (HTTP {status})")


def _results(futures: list[concurrent.futures.Future]) -> list[Any]:
    """The decoded results (a result that does not decode: JobError naming why)."""
    try:
        return [f.result() for f in futures]
    except th.Error as exc:
        raise JobError(f"a result does not decode: {exc}") from None


def _retry_after(exc: BaseException) -> float:
    return float(getattr(exc, "retry_after_s", None) or 0.5)


class HttpClient:
    """A connection to a server's HTTP API. url: http(s)://host:port; api_key: theo_...
    ca_file: the CA (or self-signed certificate) to trust for https; verify=False trusts any
    certificate (tests only). Threads may share a client (each uses its own connection)."""

    def __init__(self, url: str, api_key: str, *, timeout_s: float = 600.0,
                 connect_timeout_s: float = 30.0, ca_file: str | None = None,
                 verify: bool = True, retries: int = 2) -> None:
        u = urllib.parse.urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"url must be http(s)://host[:port], got {url!r}")
        self.url = url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port or (443 if self._https else 80)
        self._prefix = u.path.rstrip("/")
        self._auth = f"Bearer {api_key}"
        self.timeout_s = timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.retries = retries
        self._ssl: ssl.SSLContext | None = None
        if self._https:
            self._ssl = ssl.create_default_context(cafile=ca_file)
            if not verify:
                self._ssl.check_hostname = False
                self._ssl.verify_mode = ssl.CERT_NONE
        self._local = threading.local()

    # ---- transport -----------------------------------------------------------------------------
    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._https:
                conn = http.client.HTTPSConnection(self._host, self._port, context=self._ssl,
                                                   timeout=self.connect_timeout_s)
            else:
                conn = http.client.HTTPConnection(self._host, self._port,
                                                  timeout=self.connect_timeout_s)
            self._local.conn = conn
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def request(self, method: str, path: str, body: Sequence[Any] | bytes | None = None,
                *, what: str = "", timeout_s: float | None = None,
                content_type: str = frames.MEDIA_TYPE) -> http.client.HTTPResponse:
        """Sends a request (body: bytes or a list of bytes-like pieces, sent without joining) and
        returns the response once its status is 2xx; raises the refusal's exception otherwise.
        A connection that the server closed since the last request is opened again once."""
        headers = {"Authorization": self._auth, "Accept": "*/*"}
        pieces: list[Any] = [] if body is None else [body] if isinstance(
            body, (bytes, bytearray, memoryview)) else list(body)
        if body is not None:
            headers["Content-Type"] = content_type
            headers["Content-Length"] = str(sum(memoryview(p).nbytes for p in pieces))
        what = what or f"{method} {path}"
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.connect() if conn.sock is None else None
                conn.sock.settimeout(timeout_s or self.timeout_s)
                conn.putrequest(method, self._prefix + path, skip_accept_encoding=True)
                for k, v in headers.items():
                    conn.putheader(k, v)
                conn.endheaders()
                sent_all = True
                try:
                    for p in pieces:
                        conn.sock.sendall(p)
                except OSError:
                    # The server may have answered (413) and closed: read what it said.
                    sent_all = False
                resp = conn.getresponse()
            except (ConnectionError, http.client.RemoteDisconnected, http.client.BadStatusLine,
                    OSError) as exc:
                self._drop_connection()
                if attempt == 0 and isinstance(exc, (ConnectionResetError, BrokenPipeError,
                                                     http.client.RemoteDisconnected,
                                                     ConnectionAbortedError)):
                    continue
                if isinstance(exc, TimeoutError) or "timed out" in str(exc):
                    raise ServerUnavailableError(f"{what}: no answer from {self.url} in "
                                                 "time") from None
                raise ServerUnavailableError(f"{what}: cannot reach {self.url} ({exc})"
                                             ) from None
            if resp.status >= 400:
                data = resp.read()
                if not sent_all or resp.getheader("connection", "").lower() == "close":
                    self._drop_connection()
                try:
                    doc = json.loads(data) if data else None
                except ValueError:
                    doc = None
                raise error_from(resp.status, doc if isinstance(doc, dict) else None, what)
            return resp
        raise ServerUnavailableError(f"{what}: the connection to {self.url} failed twice")

    def _json(self, method: str, path: str, body: Any = None, what: str = "") -> Any:
        resp = self.request(method, path, body, what=what)
        data = resp.read()
        return json.loads(data) if data else None

    # ---- the API -------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self._json("GET", "/v1/health", what="health")

    def metrics(self) -> str:
        """The Prometheus text."""
        return self.request("GET", "/v1/metrics", what="metrics").read().decode()

    def circuits(self) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/circuits", what="circuits")["circuits"]

    def parameters(self) -> list[dict[str, Any]]:
        return self._json("GET", "/v1/parameters", what="parameters")["parameter_sets"]

    def limits(self) -> dict[str, Any]:
        return self._json("GET", "/v1/limits", what="limits")

    def openapi(self) -> dict[str, Any]:
        return self._json("GET", "/v1/openapi.json", what="openapi")

    def open_session(self, keys: ClientKeys) -> "HttpSession":
        """Uploads the evaluation keys (compact form) once; the session's jobs use them."""
        up = keys.upload
        body = frames.encode([up.metadata(), up.payload])
        opened = self._json("POST", "/v1/sessions", body, what="open_session")
        return HttpSession(self, opened["session"], keys)

    def session(self, session_id: str, keys: ClientKeys) -> "HttpSession":
        """A session opened earlier (by this API key), with the client's keys."""
        return HttpSession(self, session_id, keys)


class HttpJob:
    """A submitted job: result() streams its results (blocking, with a timeout), chunks() yields
    them as they finish, status() and done() poll, cancel() drops it."""

    def __init__(self, session: "HttpSession", job_id: str, n_in: int) -> None:
        self._session = session
        self.id = job_id
        self.n_in = n_in
        self.stats: dict[str, Any] | None = None

    def _path(self, tail: str = "") -> str:
        return f"/v1/sessions/{self._session.id}/jobs/{self.id}{tail}"

    def status(self) -> dict[str, Any]:
        return self._session._client._json("GET", self._path(), what="job status")

    def done(self) -> bool:
        return self.status()["state"] != "running"

    def cancel(self) -> None:
        self._session._client.request("DELETE", self._path(), what="cancel").read()

    def chunks(self, *, host: bool = False, timeout_s: float | None = None
               ) -> Iterator[tuple[tuple[int, int], list[Any]]]:
        """(inputs (start, stop), their results) per chunk, in the order chunks finish."""
        c = self._session._client
        resp = c.request("GET", self._path("/stream"), what="job results", timeout_s=timeout_s)
        for entry, outs in self._session._read_stream(resp, host, self):
            yield (entry["inputs"][0], entry["inputs"][1]), _results(outs)

    def result(self, timeout_s: float | None = None, *, host: bool = False,
               host_context: Any = None) -> list[Any]:
        """The job's ciphertexts in order (host, host_context: HostCiphertexts, see
        HttpSession.run)."""
        c = self._session._client
        resp = c.request("GET", self._path("/stream"), what="job results", timeout_s=timeout_s)
        return self._session._collect(resp, host, self, host_context)


class HttpSession(ClientSession):
    """A session of an HttpClient: its keys live on the server; jobs run circuits on
    ciphertexts."""

    def __init__(self, client: HttpClient, session_id: str, keys: ClientKeys) -> None:
        super().__init__(client, session_id, keys)

    def info(self) -> dict[str, Any]:
        return self._client._json("GET", f"/v1/sessions/{self.id}", what="session info")

    def _body(self, circuit: str, cts: Sequence[Any], args: dict[str, Any] | None
              ) -> list[Any]:
        if isinstance(cts, (th.Ciphertext, th.HostCiphertext)):
            cts = [cts]
        for i, ct in enumerate(cts):
            if not isinstance(ct, (th.Ciphertext, th.HostCiphertext)):
                raise TypeError(f"ciphertext {i}: expected a Ciphertext, got {type(ct).__name__}")
            if ct.context != self.context and ct.context.fingerprint != self._fingerprint:
                raise JobError(f"ciphertext {i} was made for other parameters than this "
                               "session's")
        blobs = wire.encode_batch(list(cts))
        return frames.encode([{"circuit": circuit, "args": dict(args or {}),
                               "count": len(blobs)}] + [b.data for b in blobs])

    def _read_stream(self, resp: http.client.HTTPResponse, host: bool,
                     job: HttpJob | None = None, host_context: Any = None
                     ) -> Iterator[tuple[dict[str, Any], list[concurrent.futures.Future]]]:
        """Chunks of a result stream as they arrive; each result is decoded on the wire pool
        while the next ones are read. Raises the job's error from the stream's last frame."""
        decode = wire.decode_host if host else wire.decode
        ctx = self.context
        if host and host_context is not None:
            if host_context.fingerprint != self._fingerprint:
                raise JobError("host_context was made for other parameters than this session's")
            ctx = host_context
        pool = wire.pool()
        entry: dict[str, Any] | None = None
        outs: list[concurrent.futures.Future] = []
        complete = False
        try:
            for kind, payload in frames.read_frames(resp.read, MAX_RESULT_FRAME):
                if kind == frames.BINARY:
                    if entry is None or len(outs) >= entry["outputs"]:
                        raise ServerUnavailableError("result stream: a ciphertext outside a "
                                                     "chunk")
                    index = entry["inputs"][0] + len(outs)
                    outs.append(pool.submit(decode, ctx, payload, index))
                    if len(outs) == entry["outputs"]:
                        yield entry, outs
                        entry, outs = None, []
                    continue
                msg = frames.parse_json(payload, "result stream")
                if "chunk" in msg:
                    entry, outs = msg, []
                    if msg["outputs"] == 0:
                        yield entry, outs
                        entry = None
                elif msg.get("end"):
                    if job is not None:
                        job.stats = {k: msg.get(k) for k in ("seconds", "compute_s", "chunks")}
                    resp.read()  # the end of the body: the connection serves the next request
                    complete = True
                    if msg.get("state") != "done":
                        err = msg.get("error") or {}
                        raise error_from(int(err.get("status") or 500), {"error": err}, "job")
                    return
        except ServeError:
            raise  # the job's own error, from the stream's last frame
        except (frames.FrameError, OSError, http.client.HTTPException) as exc:
            raise ServerUnavailableError(f"result stream broken: {exc}") from None
        finally:
            if not complete:
                # A stream left unread (an error, or a reader that stopped) ends the connection.
                self._client._drop_connection()
        raise ServerUnavailableError("result stream ended before the job did")

    def _collect(self, resp: http.client.HTTPResponse, host: bool,
                 job: HttpJob | None = None, host_context: Any = None) -> list[Any]:
        parts: dict[int, list[concurrent.futures.Future]] = {}
        for entry, outs in self._read_stream(resp, host, job, host_context):
            parts[entry["chunk"]] = outs
        return _results([f for k in sorted(parts) for f in parts[k]])

    def submit(self, circuit: str, cts: Sequence[Any], *, args: dict[str, Any] | None = None,
               timeout_s: float | None = None) -> HttpJob:
        """Sends a job and returns once the server has its inputs."""
        body = self._body(circuit, cts, args)
        q = f"?timeout_s={timeout_s}" if timeout_s else ""
        r = self._client._json("POST", f"/v1/sessions/{self.id}/jobs{q}", body, what="submit")
        return HttpJob(self, r["job"], r["inputs"])

    def run(self, circuit: str, cts: Sequence[Any], *, args: dict[str, Any] | None = None,
            timeout_s: float | None = None, host: bool = False,
            retries: int | None = None, host_context: Any = None) -> list[Any]:
        """Runs a job and returns its ciphertexts in order (one request: the results stream back
        as chunks finish). host: HostCiphertexts (every check, no device), for a client that
        stores, forwards or decrypts them elsewhere; host_context: with host, the Context whose
        host memory holds them (default the session's; a CPU Context of the same parameters
        gives ordinary memory instead of the CUDA backend's page-locked staging). A 503 or a lost
        connection submits the job again, up to `retries` times (the client's setting by
        default)."""
        body = self._body(circuit, cts, args)
        q = "?stream=true" + (f"&timeout_s={timeout_s}" if timeout_s else "")
        attempts = 1 + (self._client.retries if retries is None else retries)
        for attempt in range(attempts):
            try:
                resp = self._client.request("POST", f"/v1/sessions/{self.id}/jobs{q}", body,
                                            what=f"job {circuit!r}", timeout_s=timeout_s)
                return self._collect(resp, host, host_context=host_context)
            except (ServerUnavailableError, BusyError) as exc:
                if attempt + 1 == attempts:
                    raise
                time.sleep(min(5.0, _retry_after(exc)))
        raise AssertionError("unreachable")

    async def run_async(self, circuit: str, cts: Sequence[Any], *,
                        args: dict[str, Any] | None = None, timeout_s: float | None = None,
                        host: bool = False) -> list[Any]:
        """run() for asyncio (on a thread of the loop's executor)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            None, lambda: self.run(circuit, cts, args=args, timeout_s=timeout_s, host=host))

    def close(self) -> None:
        self._client.request("DELETE", f"/v1/sessions/{self.id}", what="close_session").read()
