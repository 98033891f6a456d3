"""What a session of either client holds (client.Session over Ray, http_client.HttpSession over
HTTP): the client, the session's id, the client's keys and their Context; a `with` block closes
the session when it ends. map() is shared: it keeps a client's next jobs submitted while the
results of the current one come back."""

from __future__ import annotations

import collections
import concurrent.futures
from typing import Any, Iterable, Iterator, Sequence, TypeVar

from .errors import BusyError, ServeError, ServerUnavailableError
from .keys import ClientKeys

_S = TypeVar("_S", bound="ClientSession")


class ClientSession:
    """Base of Session and HttpSession: their keys live on the server. Each subclass has
    submit(circuit, cts, args=, timeout_s=), returning a job with result(timeout_s, host=,
    host_context=), and run(circuit, cts, args=, timeout_s=, host=, host_context=)."""

    def __init__(self, client: Any, session_id: str, keys: ClientKeys) -> None:
        self._client = client
        self.id = session_id
        self.keys = keys
        self.context = keys.context
        self._fingerprint = keys.upload.fingerprint

    def close(self) -> None:
        raise NotImplementedError

    def map(self, circuit: str, batches: Iterable[Sequence[Any]], *,
            args: dict[str, Any] | None = None, in_flight: int = 2,
            timeout_s: float | None = None, host: bool = False, host_context: Any = None
            ) -> Iterator[list[Any]]:
        """Runs `circuit` on each batch of ciphertexts and yields each job's results in the
        order of `batches`, keeping up to `in_flight` jobs submitted and not yet delivered: while
        one job's results come back, the next one is already on the server (submitted from a
        thread of this call, so its upload overlaps the download), and a lone client keeps the
        device busy instead of leaving it idle between its jobs. in_flight=1: one job at a time.
        `batches` is read lazily (a batch is taken when its job is submitted); args, timeout_s,
        host and host_context as in run(). A job whose results are lost (503, a broken
        connection) runs again through run() and its retries. Leaving the loop early drops the
        jobs submitted ahead (where the client can cancel them) and raises nothing."""
        if in_flight < 1:
            raise ValueError(f"in_flight must be at least 1, got {in_flight}")
        todo = iter(batches)
        pending: collections.deque[tuple[Sequence[Any], concurrent.futures.Future]] = (
            collections.deque())
        submitter = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="theo-submit")
        opts = {"timeout_s": timeout_s, "host": host, "host_context": host_context}
        try:
            while True:
                while len(pending) < in_flight:
                    batch = next(todo, None)
                    if batch is None:
                        break
                    pending.append((batch, submitter.submit(self.submit, circuit, batch,
                                                            args=args, timeout_s=timeout_s)))
                if not pending:
                    return
                batch, submitted = pending.popleft()
                try:
                    out = submitted.result().result(timeout_s, host=host,
                                                    host_context=host_context)
                except (ServerUnavailableError, BusyError):
                    out = self.run(circuit, batch, args=args, **opts)
                yield out
        finally:
            submitter.shutdown(wait=True)
            for _, submitted in pending:
                cancel = getattr(submitted.result(), "cancel", None) if (
                    submitted.exception() is None) else None
                if cancel is not None:
                    try:
                        cancel()
                    except ServeError:
                        pass  # the results' TTL drops it on the server

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.close()
        except ServeError:
            pass
