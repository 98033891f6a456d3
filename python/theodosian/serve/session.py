"""What a session of either client holds (client.Session over Ray, http_client.HttpSession over
HTTP): the client, the session's id, the client's keys and their Context; a `with` block closes
the session when it ends. map() is shared: it keeps a client's next jobs submitted while the
results of the current ones come back, every job in flight downloading at once."""

from __future__ import annotations

import collections
import concurrent.futures
import threading
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
        one job's results come back, the next one is already on the server, and a lone client
        keeps the device busy instead of leaving it idle between its jobs. The jobs are
        submitted one after the other from a thread of this call (each upload overlapping the
        downloads), and the results of every job in flight download at the same time, each on a
        thread (and, over HTTP, a connection) of its own, so one client reads as many result
        streams at once as it has jobs in flight; at most `in_flight` jobs' results are held
        here, and they are yielded in order. in_flight=1: one job at a time. `batches` is read
        lazily (a batch is taken when its job is submitted); args, timeout_s, host and
        host_context as in run(). A job whose results are lost (503, a broken connection) runs
        again through run() and its retries. Leaving the loop early drops the jobs submitted
        ahead (where the client can cancel them) and raises nothing."""
        if in_flight < 1:
            raise ValueError(f"in_flight must be at least 1, got {in_flight}")
        todo = iter(batches)
        # Per job in flight: its submission and its delivery (the results, downloaded).
        pending: collections.deque[tuple[concurrent.futures.Future, concurrent.futures.Future]] = (
            collections.deque())
        submitter = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="theo-submit")
        fetchers = concurrent.futures.ThreadPoolExecutor(in_flight,
                                                         thread_name_prefix="theo-fetch")
        left = threading.Event()  # the loop was left: lost jobs are not run again
        opts = {"timeout_s": timeout_s, "host": host, "host_context": host_context}

        def deliver(batch: Sequence[Any], submitted: concurrent.futures.Future) -> list[Any]:
            try:
                return submitted.result().result(timeout_s, host=host, host_context=host_context)
            except (ServerUnavailableError, BusyError):
                if left.is_set():
                    raise
                return self.run(circuit, batch, args=args, **opts)

        try:
            while True:
                while len(pending) < in_flight:
                    batch = next(todo, None)
                    if batch is None:
                        break
                    submitted = submitter.submit(self.submit, circuit, batch, args=args,
                                                 timeout_s=timeout_s)
                    pending.append((submitted, fetchers.submit(deliver, batch, submitted)))
                    del batch, submitted
                if not pending:
                    return
                _, delivered = pending.popleft()
                out = delivered.result()
                del delivered
                yield out
                del out  # held by the caller, not here, while the next job is awaited
        finally:
            left.set()
            submitter.shutdown(wait=True, cancel_futures=True)
            for submitted, delivered in pending:
                delivered.cancel()  # not started: nothing to cancel on the server
                if (submitted.cancelled() or submitted.exception() is not None or (
                        delivered.done() and not delivered.cancelled()
                        and delivered.exception() is None)):
                    continue  # never submitted, or delivered (the server forgot it)
                cancel = getattr(submitted.result(), "cancel", None)
                if cancel is not None:
                    try:
                        cancel()  # also ends its download, if one is under way
                    except ServeError:
                        pass  # the results' TTL drops it on the server
            fetchers.shutdown(wait=True)

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.close()
        except ServeError:
            pass
