"""Ciphertexts on the wire: the library's binary form (``Ciphertext.to_bytes``, which keeps the
is_real hint and stores a fresh secret-key ciphertext's c1 as its seed) in a :class:`Blob`, one
Ray object per ciphertext (so the scheduler can split and retry batches without copying them).

A Blob pickles its bytes out of band (pickle protocol 5), so Ray copies them into its object store
once, without a pickle copy under the GIL, and a reader gets a zero-copy view of the store's
memory that the library reads in place. Batches are encoded and decoded on a thread pool: the
library releases the GIL and hashes each ciphertext's pieces on its own pool as well
(docs/serialization.md)."""

from __future__ import annotations

import concurrent.futures
import os
import pickle
import threading
from typing import Any, Callable, Sequence, TypeVar

import theodosian as th

from .errors import JobError

T = TypeVar("T")
R = TypeVar("R")


class Blob:
    """One serialized ciphertext. ``data`` is any bytes-like object (bytes, or a read-only view of
    Ray's object store after a transfer)."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        self.data = data

    def __len__(self) -> int:
        return memoryview(self.data).nbytes

    def __reduce_ex__(self, protocol: int) -> tuple:
        if protocol >= 5:
            return Blob, (pickle.PickleBuffer(self.data),)
        return Blob, (bytes(self.data),)


_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def pool() -> concurrent.futures.ThreadPoolExecutor:
    """The process-wide pool of encoding and decoding threads (one per core)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=max(2, os.cpu_count() or 1), thread_name_prefix="theo-wire")
    return _pool


def parallel_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """fn over items on a process-wide thread pool (one thread per core), in order; the first
    exception is raised after every item is done."""
    if len(items) <= 1:
        return [fn(x) for x in items]
    futures = [pool().submit(fn, x) for x in items]
    concurrent.futures.wait(futures)
    return [f.result() for f in futures]


def _data(blob: Any, index: int) -> Any:
    data = blob.data if isinstance(blob, Blob) else blob
    try:
        n = memoryview(data).nbytes
    except TypeError:
        n = -1
    if n < 80:
        raise JobError(f"ciphertext {index}: not a serialized ciphertext")
    return data


def _errors(context: th.Context, index: int, fn: Callable[[], R]) -> R:
    try:
        return fn()
    except th.ContextError as exc:
        raise JobError(
            f"ciphertext {index} was made for other parameters than this session's "
            f"({context.params.name or 'unnamed set'}, N=2^{context.log_n}): {exc}") from exc
    except th.Error as exc:
        raise JobError(f"ciphertext {index}: malformed: {exc}") from exc


def encode(ct: th.Ciphertext | th.HostCiphertext) -> Blob:
    return Blob(ct.to_bytes())


def decode(context: th.Context, blob: Any, index: int = 0) -> th.Ciphertext:
    """Reads one ciphertext onto the context's backend, with an error naming its index in the
    batch and what was wrong."""
    data = _data(blob, index)
    return _errors(context, index, lambda: th.Ciphertext.from_bytes(context, data))


def decode_host(context: th.Context, blob: Any, index: int = 0) -> th.HostCiphertext:
    """decode() without the device: every check, into host memory (HostCiphertext.to_device()
    uploads it)."""
    data = _data(blob, index)
    return _errors(context, index, lambda: th.HostCiphertext.from_bytes(context, data))


def encode_batch(cts: Sequence[th.Ciphertext | th.HostCiphertext]) -> list[Blob]:
    return parallel_map(encode, cts)


def decode_batch(context: th.Context, blobs: Sequence[Any], first_index: int = 0
                 ) -> list[th.Ciphertext]:
    return parallel_map(lambda ib: decode(context, ib[1], first_index + ib[0]),
                        list(enumerate(blobs)))


def decode_host_batch(context: th.Context, blobs: Sequence[Any], first_index: int = 0
                      ) -> list[th.HostCiphertext]:
    return parallel_map(lambda ib: decode_host(context, ib[1], first_index + ib[0]),
                        list(enumerate(blobs)))
