"""API keys of the HTTP API: made random, shown once, stored hashed.

A key reads ``theo_<id>_<secret>``: ``id`` (12 hex digits) names it in the file, logs and metrics;
``secret`` is 256 random bits. The key file (JSON, mode 0600) keeps per key its id, a name, the
SHA-256 of the whole key, when it was made, whether it is revoked, and optional limits of its own;
never the key itself. A key of 256 random bits needs no slow hash: nobody can search for it.

    python -m theodosian.serve keys create --file keys.json --name alice   # prints the key once
    python -m theodosian.serve keys list --file keys.json
    python -m theodosian.serve keys revoke --file keys.json ID

The server reads the file when it starts and again whenever it changes (checked at most once a
second), so a revocation takes effect within a second without a restart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import threading
import time
from typing import Any, Iterator

FORMAT = "theodosian-api-keys/1"
PREFIX = "theo_"
_KEY_RE = re.compile(r"^theo_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_LIMIT_FIELDS = ("jobs_in_flight", "sessions", "key_bytes", "requests_per_s", "burst")


class KeyFileError(ValueError):
    """The key file is missing, unreadable or malformed; the message names the file."""


@dataclasses.dataclass(frozen=True)
class ApiKey:
    """A key as the server knows it (no secret)."""

    id: str
    name: str
    sha256: str
    created: str
    revoked: str | None = None
    limits: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def owner_token(self) -> bytes:
        """What the Ray server checks to give this key its own sessions (derived from the stored
        hash, so it never leaves the server)."""
        return hashlib.sha256(b"theodosian-http-owner\0" + bytes.fromhex(self.sha256)).digest()


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _parse(path: str, text: str) -> dict[str, ApiKey]:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise KeyFileError(f"{path}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(
            doc.get("keys"), list):
        raise KeyFileError(f"{path}: not a theodosian API key file (format {FORMAT})")
    keys: dict[str, ApiKey] = {}
    for i, entry in enumerate(doc["keys"]):
        try:
            k = ApiKey(id=str(entry["id"]), name=str(entry.get("name", "")),
                       sha256=str(entry["sha256"]), created=str(entry.get("created", "")),
                       revoked=entry.get("revoked"), limits=dict(entry.get("limits") or {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise KeyFileError(f"{path}: key {i} is malformed ({exc})") from None
        if not re.fullmatch(r"[0-9a-f]{12}", k.id) or not re.fullmatch(r"[0-9a-f]{64}", k.sha256):
            raise KeyFileError(f"{path}: key {i} has a malformed id or hash")
        unknown = set(k.limits) - set(_LIMIT_FIELDS)
        if unknown:
            raise KeyFileError(f"{path}: key {k.id} has unknown limits {sorted(unknown)}")
        keys[k.id] = k
    return keys


def load(path: str) -> dict[str, ApiKey]:
    """Every key of the file by id (revoked ones too)."""
    try:
        with open(path, encoding="utf-8") as f:
            return _parse(path, f.read())
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read the API key file ({exc.strerror}); make one "
                           "with: python -m theodosian.serve keys create --file "
                           f"{path}") from None


def _save(path: str, keys: dict[str, ApiKey]) -> None:
    doc = {"format": FORMAT, "keys": [
        {"id": k.id, "name": k.name, "sha256": k.sha256, "created": k.created,
         "revoked": k.revoked, **({"limits": k.limits} if k.limits else {})}
        for k in keys.values()]}
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".api-keys-", dir=folder)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked(path: str) -> Iterator[dict[str, ApiKey]]:
    """The file's keys, to change and write back, under an exclusive lock."""
    import fcntl  # noqa: PLC0415 - POSIX only, like the server

    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f".{os.path.basename(path)}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        keys = load(path) if os.path.exists(path) else {}
        yield keys
        _save(path, keys)


def create(path: str, name: str = "", limits: dict[str, Any] | None = None) -> tuple[str, ApiKey]:
    """Makes a key, stores its hash, and returns (the key, its entry). The key is not kept
    anywhere: show it to its owner once."""
    unknown = set(limits or {}) - set(_LIMIT_FIELDS)
    if unknown:
        raise KeyFileError(f"unknown limits {sorted(unknown)} (known: {list(_LIMIT_FIELDS)})")
    with _locked(path) as keys:
        key_id = secrets.token_hex(6)
        while key_id in keys:
            key_id = secrets.token_hex(6)
        key = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        entry = ApiKey(id=key_id, name=name, sha256=_digest(key), created=_now(),
                       limits=dict(limits or {}))
        keys[key_id] = entry
    return key, entry


def revoke(path: str, key_id: str) -> ApiKey:
    with _locked(path) as keys:
        if key_id not in keys:
            raise KeyFileError(f"{path}: no key with id {key_id!r}")
        entry = dataclasses.replace(keys[key_id], revoked=keys[key_id].revoked or _now())
        keys[key_id] = entry
    return entry


class KeyStore:
    """The server's view of the key file: verify() a presented key; the file is read again when
    its modification time or size changes (looked at most every `recheck_s` seconds)."""

    def __init__(self, path: str, recheck_s: float = 1.0) -> None:
        self.path = path
        self.recheck_s = recheck_s
        self._keys = load(path)
        self._stamp = self._file_stamp()
        self._checked = time.monotonic()
        self._lock = threading.Lock()

    def _file_stamp(self) -> tuple[int, int]:
        st = os.stat(self.path)
        return st.st_mtime_ns, st.st_size

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked < self.recheck_s:
            return
        with self._lock:
            self._checked = now
            try:
                stamp = self._file_stamp()
                if stamp != self._stamp:
                    self._keys = load(self.path)
                    self._stamp = stamp
            except (OSError, KeyFileError):
                # A file being replaced or broken: keep the last good keys (revocations already
                # read stay in force).
                pass

    def verify(self, presented: str | None) -> ApiKey | None:
        """The key's entry when `presented` is a valid, unrevoked key; else None."""
        self._refresh()
        if not presented:
            return None
        m = _KEY_RE.match(presented)
        if m is None:
            return None
        entry = self._keys.get(m.group(1))
        ok = entry is not None and hmac.compare_digest(entry.sha256, _digest(presented))
        return entry if ok and entry is not None and not entry.revoked else None

    def active(self) -> int:
        self._refresh()
        return sum(1 for k in self._keys.values() if not k.revoked)
