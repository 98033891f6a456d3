"""Ciphertexts on the wire: the library's binary form (Ciphertext.serialize) plus the is_real hint,
which that form does not carry. One ciphertext travels as one ``bytes`` object (a Ray object of its
own, so the scheduler can split and retry batches without copying them)."""

from __future__ import annotations

from typing import Sequence

import theodosian as th

from .errors import JobError

# One flag byte in front of the library's form: bit 0 = is_real. The library validates its own
# form (header, parameter fingerprint, sizes) when reading it.
_REAL = 1
_MIN_BYTES = 1 + 8


def encode(ct: th.Ciphertext) -> bytes:
    return bytes([_REAL if ct.is_real else 0]) + ct.serialize()


def decode(context: th.Context, data: bytes, index: int = 0) -> th.Ciphertext:
    """Reads one ciphertext, with an error naming its index in the batch and what was wrong."""
    if not isinstance(data, (bytes, bytearray, memoryview)) or len(data) < _MIN_BYTES:
        raise JobError(f"ciphertext {index}: not a serialized ciphertext")
    flags = data[0]
    try:
        ct = context.deserialize(bytes(data[1:]))
    except th.ContextError as exc:
        raise JobError(
            f"ciphertext {index} was made for other parameters than this session's "
            f"({context.params.name or 'unnamed set'}, N=2^{context.log_n}): {exc}") from exc
    except th.Error as exc:
        raise JobError(f"ciphertext {index}: malformed: {exc}") from exc
    ct.is_real = bool(flags & _REAL)
    return ct


def encode_batch(cts: Sequence[th.Ciphertext]) -> list[bytes]:
    return [encode(ct) for ct in cts]


def decode_batch(context: th.Context, blobs: Sequence[bytes], first_index: int = 0
                 ) -> list[th.Ciphertext]:
    return [decode(context, b, first_index + i) for i, b in enumerate(blobs)]
