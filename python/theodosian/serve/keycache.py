"""A worker's session keys: materialized keys on the device under a memory budget, evicted least
recently used first; an evicted session's upload (the compact form) stays in host memory, so
bringing it back costs a materialization, not a transfer. Past the host budget the oldest uploads
are dropped too and are fetched again from the object store when needed."""

from __future__ import annotations

import collections
import threading
import time
from typing import Callable

from .errors import JobError
from .keys import KeyUpload, SessionKeys


class KeyCache:
    def __init__(self, device_budget: int, host_budget: int) -> None:
        if device_budget <= 0 or host_budget < 0:
            raise ValueError("key budgets must be positive")
        self.device_budget = device_budget
        self.host_budget = host_budget
        self._device: collections.OrderedDict[str, SessionKeys] = collections.OrderedDict()
        self._host: collections.OrderedDict[str, KeyUpload] = collections.OrderedDict()
        self._lock = threading.RLock()
        self.hits = 0
        self.loads = 0
        self.evictions = 0
        self.load_seconds = 0.0

    def device_bytes(self) -> int:
        return sum(k.nbytes for k in self._device.values())

    def host_bytes(self) -> int:
        return sum(len(u.payload) for u in self._host.values())

    def resident(self) -> list[str]:
        with self._lock:
            return list(self._device)

    def get(self, session_id: str, fetch: Callable[[], KeyUpload],
            materialize: Callable[[KeyUpload], SessionKeys]) -> tuple[SessionKeys, list[str]]:
        """The session's keys, materializing them when needed; also the sessions evicted to make
        room (so the scheduler can forget where they were)."""
        with self._lock:
            keys = self._device.get(session_id)
            if keys is not None:
                self._device.move_to_end(session_id)
                if session_id in self._host:
                    self._host.move_to_end(session_id)
                self.hits += 1
                return keys, []
            t0 = time.perf_counter()
            upload = self._host.get(session_id)
            if upload is None:
                upload = fetch()
            if upload.nbytes > self.device_budget:
                raise JobError(
                    f"the session's keys ({upload.nbytes / 2**20:.1f} MiB) exceed a worker's key "
                    f"budget ({self.device_budget / 2**20:.1f} MiB); start the server with a "
                    "larger --key-budget-mb")
            evicted = []
            while self._device and self.device_bytes() + upload.nbytes > self.device_budget:
                sid, _ = self._device.popitem(last=False)
                evicted.append(sid)
                self.evictions += 1
            keys = materialize(upload)
            self._device[session_id] = keys
            self._host[session_id] = upload
            self._host.move_to_end(session_id)
            while self._host and self.host_bytes() > self.host_budget:
                self._host.popitem(last=False)
            self.loads += 1
            self.load_seconds += time.perf_counter() - t0
            return keys, evicted

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._device.pop(session_id, None)
            self._host.pop(session_id, None)

    def stats(self) -> dict:
        with self._lock:
            return {
                "sessions_on_device": len(self._device),
                "sessions_in_host_memory": len(self._host),
                "device_key_bytes": self.device_bytes(),
                "device_key_budget": self.device_budget,
                "host_key_bytes": self.host_bytes(),
                "host_key_budget": self.host_budget,
                "hits": self.hits,
                "loads": self.loads,
                "evictions": self.evictions,
                "load_seconds": round(self.load_seconds, 4),
            }
