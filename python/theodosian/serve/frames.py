"""The HTTP API's binary body format (media type ``application/vnd.theodosian.frames``): a magic
and a sequence of frames, each a JSON object or the bytes of one library object. Both sides of the
HTTP API use it (the server and :class:`theodosian.serve.HttpClient`); it needs neither Ray nor an
HTTP library.

    body  := MAGIC frame*
    frame := kind (1 byte: 'J' JSON object, 'B' binary) length (8 bytes, little endian) payload

A job request is ``J{"circuit", "args", "count"}`` followed by ``count`` ciphertext frames ``B``; a
result stream is ``J{"job", ...}``, then per finished chunk ``J{"chunk", "inputs", "outputs"}`` and
its ``outputs`` ciphertexts, and last ``J{"end": true, "state", ...}``. A session upload is
``J{key upload metadata}`` then ``B`` (the key container).

:class:`FrameReader` parses incrementally (bytes arrive in pieces from a socket) and checks every
length against a limit before it buffers anything, so a body can never make the reader allocate
more than it was allowed to read.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Callable, Iterator

MEDIA_TYPE = "application/vnd.theodosian.frames"
MAGIC = b"THEOFRM1"
JSON = ord("J")
BINARY = ord("B")
_HEADER = struct.Struct("<BQ")
HEADER_BYTES = _HEADER.size
#: A JSON frame larger than this is malformed (arguments, metadata, status: never large).
MAX_JSON_BYTES = 1 << 20


class FrameError(ValueError):
    """The bytes are not a valid frame stream; the message says where and why."""


def header(kind: int, length: int) -> bytes:
    return _HEADER.pack(kind, length)


def json_frame(obj: dict[str, Any]) -> bytes:
    data = json.dumps(obj, separators=(",", ":"), allow_nan=False).encode()
    return _HEADER.pack(JSON, len(data)) + data


def binary_frame_header(length: int) -> bytes:
    return _HEADER.pack(BINARY, length)


def encode(parts: list[dict[str, Any] | bytes | bytearray | memoryview]) -> list[Any]:
    """The pieces of a frame stream (MAGIC, headers and payloads, not joined: a caller writes them
    one after the other without copying the payloads)."""
    out: list[Any] = [MAGIC]
    for p in parts:
        if isinstance(p, dict):
            out.append(json_frame(p))
        else:
            out.append(binary_frame_header(memoryview(p).nbytes))
            out.append(p)
    return out


def encode_bytes(parts: list[dict[str, Any] | bytes | bytearray | memoryview]) -> bytes:
    return b"".join(bytes(p) if isinstance(p, memoryview) else p for p in encode(parts))


def parse_json(payload: bytes | memoryview, where: str) -> dict[str, Any]:
    try:
        obj = json.loads(bytes(payload))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise FrameError(f"{where}: not valid JSON ({type(exc).__name__}: {exc})") from None
    if not isinstance(obj, dict):
        raise FrameError(f"{where}: a JSON object was expected, got {type(obj).__name__}")
    return obj


class FrameReader:
    """Incremental parser. feed() bytes as they arrive; frames() yields every complete frame as
    (kind, payload view). max_frame_bytes bounds a binary frame (JSON frames: MAX_JSON_BYTES); a
    frame that declares more raises FrameError before any of its payload is kept. Each payload is
    copied once, into its own buffer, which the view handed out owns."""

    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._head = bytearray()  # the magic, then each frame's header
        self._magic = False
        self._kind = 0
        self._need = -1  # payload bytes still missing; -1: reading a header
        self._payload = bytearray()
        self._ready: list[tuple[int, memoryview]] = []
        self.frames_read = 0
        self.bytes_read = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        self.bytes_read += view.nbytes
        pos, end = 0, view.nbytes
        while pos < end:
            if not self._magic:
                take = min(len(MAGIC) - len(self._head), end - pos)
                self._head += view[pos:pos + take]
                pos += take
                if bytes(self._head) != MAGIC[:len(self._head)]:
                    raise FrameError("the body does not start with the frame magic "
                                     f"{MAGIC.decode()} (media type {MEDIA_TYPE})")
                if len(self._head) == len(MAGIC):
                    self._magic = True
                    self._head.clear()
                continue
            if self._need < 0:
                take = min(HEADER_BYTES - len(self._head), end - pos)
                self._head += view[pos:pos + take]
                pos += take
                if len(self._head) == HEADER_BYTES:
                    self._start_frame()
                continue
            take = min(self._need, end - pos)
            self._payload += view[pos:pos + take]
            pos += take
            self._need -= take
            if self._need == 0:
                self._end_frame()

    def _start_frame(self) -> None:
        kind, length = _HEADER.unpack(self._head)
        self._head.clear()
        index = self.frames_read
        if kind == JSON:
            if length > MAX_JSON_BYTES:
                raise FrameError(f"frame {index}: a JSON frame of {length} bytes (at most "
                                 f"{MAX_JSON_BYTES})")
        elif kind == BINARY:
            if length > self.max_frame_bytes:
                raise FrameError(f"frame {index}: a binary frame of {length} bytes (at most "
                                 f"{self.max_frame_bytes})")
        else:
            raise FrameError(f"frame {index}: unknown frame kind {kind} (expected "
                             f"{chr(JSON)!r} or {chr(BINARY)!r})")
        self._kind = kind
        self._need = length
        self._payload = bytearray()
        if length == 0:
            self._end_frame()

    def _end_frame(self) -> None:
        self._ready.append((self._kind, memoryview(self._payload)))
        self._payload = bytearray()
        self._need = -1
        self.frames_read += 1

    def pending(self) -> int:
        """Bytes received that are not part of a complete frame yet."""
        return len(self._head) + len(self._payload) if self._magic else len(self._head)

    def frames(self) -> Iterator[tuple[int, memoryview]]:
        """The frames completed since the last call, in order."""
        ready, self._ready = self._ready, []
        return iter(ready)

    def finish(self) -> None:
        """At the end of the body: raises FrameError if bytes of an incomplete frame are left."""
        if not self._magic:
            raise FrameError("empty body: the frame magic is missing")
        if self._need >= 0 or self._head:
            raise FrameError(f"the body ends inside a frame ({self.pending()} bytes of an "
                             "incomplete frame)")


def read_frames(read: Callable[[int], bytes], max_frame_bytes: int
                ) -> Iterator[tuple[int, bytes]]:
    """Frames from a blocking reader (read(n) returns up to n bytes, b"" at the end), each payload
    read in one piece. Ends cleanly only at a frame boundary."""

    def exactly(n: int, what: str) -> bytes:
        parts, left = [], n
        while left:
            got = read(left)
            if not got:
                raise FrameError(f"the stream ended inside {what} ({n - left} of {n} bytes)")
            parts.append(got)
            left -= len(got)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    if exactly(len(MAGIC), "the frame magic") != MAGIC:
        raise FrameError("the response does not start with the frame magic")
    index = 0
    while True:
        first = read(1)
        if not first:
            return
        kind, length = _HEADER.unpack(first + exactly(HEADER_BYTES - 1, "a frame header"))
        limit = MAX_JSON_BYTES if kind == JSON else max_frame_bytes
        if kind not in (JSON, BINARY) or length > limit:
            raise FrameError(f"frame {index}: kind {kind}, {length} bytes: not a valid frame")
        yield kind, exactly(length, f"frame {index}")
        index += 1


def parse(data: bytes | bytearray | memoryview, max_frame_bytes: int
          ) -> list[tuple[int, memoryview]]:
    """Every frame of a complete body."""
    reader = FrameReader(max_frame_bytes)
    reader.feed(data)
    out = list(reader.frames())
    reader.finish()
    return out
