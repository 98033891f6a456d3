"""The client: connect to a server, open a session with evaluation keys, run jobs (blocking,
future-style or asyncio). Every call has a timeout, so a server or node that goes away ends in
ServerUnavailableError, never a hang."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Any, Callable, Sequence

import theodosian as th

from . import wire
from .config import NAMESPACE, SERVER_NAME
from .errors import JobError, ServeError, ServerUnavailableError, require_ray
from .keys import ClientKeys, parameters_fingerprint
from .session import ClientSession


def _translate(exc: BaseException, what: str) -> BaseException:
    """Ray's exceptions as the server's: an error raised on the server comes back as itself; a
    dead actor, a lost object or a timeout as ServerUnavailableError."""
    ray = require_ray()
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, ServeError):
            return cause
        if isinstance(cause, th.Error):
            return JobError(f"{what}: {type(cause).__name__}: {cause}")
        return JobError(f"{what} failed on the server: {cause or exc}")
    if isinstance(exc, ServeError):
        return exc
    if isinstance(exc, (ray.exceptions.GetTimeoutError, asyncio.TimeoutError, TimeoutError)):
        return ServerUnavailableError(f"{what}: no answer from the server in time")
    if isinstance(exc, (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError,
                        ray.exceptions.RaySystemError)):
        return ServerUnavailableError(f"{what}: the server went away ({type(exc).__name__})")
    return exc


class Client:
    """A connection to a server (see server.start). address: the Ray cluster ('auto', host:port;
    None: the cluster this process is already connected to, or 'auto')."""

    def __init__(self, address: str | None = None, *, name: str = SERVER_NAME,
                 timeout_s: float = 600.0, connect_timeout_s: float = 30.0) -> None:
        ray = require_ray()
        from .server import init_ray  # noqa: PLC0415

        if not ray.is_initialized():
            try:
                init_ray(address or "auto")
            except ConnectionError as exc:
                raise ServerUnavailableError(
                    f"no Ray cluster at {address or 'auto'} ({exc}); start a server first: "
                    "python -m theodosian.serve start") from exc
        self._ray = ray
        self.timeout_s = timeout_s
        try:
            self._server = ray.get_actor(name, namespace=NAMESPACE)
            ray.get(self._server.health.remote(), timeout=connect_timeout_s)
        except ValueError as exc:
            raise ServerUnavailableError(f"no theodosian server named {name!r} in this Ray "
                                         "cluster (start one: python -m theodosian.serve start)"
                                         ) from exc
        except Exception as exc:
            raise _translate(exc, "connect") from None
        # Proves this client's ownership of its sessions (never leaves this process otherwise).
        self._token = secrets.token_bytes(32)

    def _call(self, ref: Any, what: str, timeout_s: float | None = None) -> Any:
        try:
            return self._ray.get(ref, timeout=timeout_s or self.timeout_s)
        except Exception as exc:
            raise _translate(exc, what) from None

    def health(self) -> dict[str, Any]:
        return self._call(self._server.health.remote(), "health", 30.0)

    def metrics(self) -> dict[str, Any]:
        return self._call(self._server.metrics.remote(), "metrics", 60.0)

    def open_session(self, keys: ClientKeys) -> "Session":
        """Uploads the evaluation keys once; the session's jobs use them."""
        sid = self._call(self._server.open_session.remote(self._token, keys.upload),
                         "open_session")
        return Session(self, sid, keys)


class Job:
    """A submitted job: result() blocks (with a timeout), done() polls."""

    def __init__(self, session: "Session", ref: Any, n_in: int, t0: float) -> None:
        self._session = session
        self._ref = ref
        self.n_in = n_in
        self.submitted = t0
        self.stats: dict[str, Any] | None = None

    def done(self) -> bool:
        ready, _ = self._session._client._ray.wait([self._ref], timeout=0)
        return bool(ready)

    def result(self, timeout_s: float | None = None, *, host: bool = False,
               host_context: th.Context | None = None
               ) -> list[th.Ciphertext] | list[th.HostCiphertext]:
        """The job's ciphertexts. host: as HostCiphertexts (every check, no device; to_device()
        loads one), for a client that stores, forwards or decrypts them elsewhere.
        host_context: with host, the Context whose host memory holds them (default the
        session's; a CPU Context of the same parameters gives ordinary memory instead of the
        CUDA backend's page-locked staging, as on a client machine without a GPU)."""
        c = self._session._client
        reply = c._call(self._ref, "job", timeout_s)
        blobs = c._call(reply["payloads"], "job results", timeout_s)
        self.stats = reply["stats"]
        return self._session._decode(blobs, host, host_context)


class Session(ClientSession):
    """A client's session: its keys live on the server; jobs run circuits on ciphertexts."""

    def __init__(self, client: Client, session_id: str, keys: ClientKeys) -> None:
        super().__init__(client, session_id, keys)

    def _encode(self, cts: Sequence[th.Ciphertext]) -> list[Any]:
        if isinstance(cts, th.Ciphertext):
            cts = [cts]
        for i, ct in enumerate(cts):
            if not isinstance(ct, th.Ciphertext):
                raise TypeError(f"ciphertext {i}: expected a Ciphertext, got {type(ct).__name__}")
            if ct.context != self.context and parameters_fingerprint(
                    ct.context.params) != self._fingerprint:
                raise JobError(f"ciphertext {i} was made for other parameters than this "
                               "session's")
        # Serialized on a thread pool (the library releases the GIL), one object each.
        return [self._client._ray.put(b) for b in wire.encode_batch(cts)]

    def _decode(self, blobs: Sequence[Sequence[Any]], host: bool = False,
                host_context: th.Context | None = None
                ) -> list[th.Ciphertext] | list[th.HostCiphertext]:
        flat = [b for chunk in blobs for b in chunk]
        if host:
            ctx = self.context
            if host_context is not None:
                if parameters_fingerprint(host_context.params) != self._fingerprint:
                    raise JobError("host_context was made for other parameters than this "
                                   "session's")
                ctx = host_context
            return wire.decode_host_batch(ctx, flat)
        return wire.decode_batch(self.context, flat)

    def submit(self, circuit: str, cts: Sequence[th.Ciphertext], *,
               args: dict[str, Any] | None = None, wait: bool = True,
               timeout_s: float | None = None) -> Job:
        """Sends a job and returns at once. wait: when every worker's queue is full, wait for
        room (up to the timeout) instead of failing with BusyError."""
        c = self._client
        refs = self._encode(cts)
        ref = c._server.submit.remote(self.id, c._token, circuit, dict(args or {}), refs, wait,
                                      timeout_s or c.timeout_s)
        return Job(self, ref, len(refs), time.perf_counter())

    def run(self, circuit: str, cts: Sequence[th.Ciphertext], *,
            args: dict[str, Any] | None = None, wait: bool = True,
            timeout_s: float | None = None, host: bool = False,
            host_context: th.Context | None = None
            ) -> list[th.Ciphertext] | list[th.HostCiphertext]:
        """Runs a job and returns its ciphertexts (blocking; host, host_context: see
        Job.result)."""
        return self.submit(circuit, cts, args=args, wait=wait, timeout_s=timeout_s).result(
            timeout_s, host=host, host_context=host_context)

    async def run_async(self, circuit: str, cts: Sequence[th.Ciphertext], *,
                        args: dict[str, Any] | None = None, wait: bool = True,
                        timeout_s: float | None = None, host: bool = False
                        ) -> list[th.Ciphertext] | list[th.HostCiphertext]:
        """run() for asyncio: awaits the server without blocking the event loop."""
        c = self._client
        limit = timeout_s or c.timeout_s
        refs = self._encode(cts)
        try:
            reply = await asyncio.wait_for(
                c._server.submit.remote(self.id, c._token, circuit, dict(args or {}), refs, wait,
                                        limit), timeout=limit)
            blobs = await asyncio.wait_for(asyncio.gather(*reply["payloads"]), timeout=limit)
        except Exception as exc:
            raise _translate(exc, "job") from None
        return await asyncio.get_running_loop().run_in_executor(
            None, self._decode, blobs, host)

    def register_function(self, name: str, fn: Callable[..., Sequence[th.Ciphertext]], *,
                          arity: int = 1, elementwise: bool = True) -> None:
        """Makes a Python function fn(env, cts, **args) -> list[Ciphertext] a circuit of this
        session only (see theodosian.serve.circuits for env)."""
        c = self._client
        c._call(c._server.register_function.remote(self.id, c._token, name, fn, arity,
                                                   elementwise), "register_function")

    def close(self) -> None:
        c = self._client
        c._call(c._server.close_session.remote(self.id, c._token), "close_session")
