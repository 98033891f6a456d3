"""The HTTP API's settings and limits: what one request may carry (body bytes, ciphertexts per
job), what one API key may hold at once (jobs in flight, sessions, key bytes) and how fast it may
send requests (a token bucket). Every refusal is a :class:`LimitError` naming its limit, with the
HTTP status the API answers (413: this request is too large whatever happens; 429: too many now,
retry later)."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from .errors import LimitError


@dataclasses.dataclass(frozen=True)
class KeyLimits:
    """What one API key may do (defaults for every key; a key can carry its own values)."""

    #: Jobs submitted and not yet delivered (streamed or fetched) or deleted.
    jobs_in_flight: int = 32
    #: Open sessions.
    sessions: int = 16
    #: Uploaded evaluation-key bytes (compact form) of the key's open sessions together.
    key_bytes: int = 32 << 30
    #: Sustained requests per second (token bucket refill rate) and the bucket's size.
    requests_per_s: float = 100.0
    burst: int = 200

    def merged(self, overrides: dict[str, Any] | None) -> "KeyLimits":
        if not overrides:
            return self
        fields = {f.name for f in dataclasses.fields(self)}
        return dataclasses.replace(self, **{k: v for k, v in overrides.items() if k in fields})

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: Names of the limits in refusals (the JSON body's "limit" field and the metrics' label).
LIMIT_NAMES = ("body_bytes", "upload_bytes", "ciphertexts_per_job", "jobs_in_flight",
               "sessions", "key_bytes", "rate", "worker_key_budget")


@dataclasses.dataclass(frozen=True)
class HttpConfig:
    """Settings of the HTTP API (one immutable object, handed to every replica)."""

    #: Address the HTTP proxies listen on (127.0.0.1: this machine only).
    host: str = "127.0.0.1"
    port: int = 8000
    #: The API key file (python -m theodosian.serve keys create --file PATH).
    api_keys: str = ""
    #: TLS: a PEM certificate (chain) and its private key; both or neither.
    tls_cert: str = ""
    tls_key: str = ""
    #: Parameter sets sessions may use (preset names or parameter files).
    parameter_sets: tuple[str, ...] = ("bootparam_40",)
    #: Accept parameter sets below 128-bit security (tests).
    allow_insecure: bool = False
    #: Largest job request body (bytes).
    max_body_bytes: int = 1 << 30
    #: Largest session upload (evaluation keys, compact form; bytes).
    max_upload_bytes: int = 16 << 30
    #: Ciphertexts in one job at most.
    max_ciphertexts_per_job: int = 256
    #: Defaults for every API key.
    key_limits: KeyLimits = dataclasses.field(default_factory=KeyLimits)
    #: HTTP replicas (each a Ray Serve replica of the ingress; the rate limit is shared out).
    replicas: int = 1
    #: Where Ray Serve runs HTTP proxies: HeadOnly or EveryNode.
    proxy_location: str = "HeadOnly"
    #: Seconds a finished job's results wait to be fetched before they are dropped.
    result_ttl_s: float = 600.0
    #: The Ray server (controller actor) the API drives.
    server_name: str = "theodosian-serve"

    def __post_init__(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("TLS needs both a certificate (tls_cert) and its key (tls_key)")
        if self.max_body_bytes <= 0 or self.max_upload_bytes <= 0:
            raise ValueError("body limits must be positive")
        if self.max_ciphertexts_per_job <= 0 or self.replicas <= 0:
            raise ValueError("max_ciphertexts_per_job and replicas must be positive")
        if self.proxy_location not in ("HeadOnly", "EveryNode"):
            raise ValueError("proxy_location: HeadOnly or EveryNode")

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"


class TokenBucket:
    """requests_per_s sustained, `burst` at once; take() refuses with LimitError('rate', 429)
    and the seconds until a token is back."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = max(float(rate), 1e-9)
        self.capacity = max(1.0, float(burst))
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self._lock = threading.Lock()

    def take(self) -> None:
        with self._lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return
            wait = (1.0 - self.tokens) / self.rate
        raise LimitError(f"rate limit: at most {self.rate:g} requests/s (burst "
                         f"{self.capacity:g}) for this API key; retry in {wait:.2f} s",
                         limit="rate", status=429, maximum=self.rate,
                         retry_after_s=round(wait, 3))


@dataclasses.dataclass
class OwnerUsage:
    """What one API key holds on the server now (kept by the controller)."""

    sessions: set[str] = dataclasses.field(default_factory=set)
    key_bytes: int = 0
    jobs_in_flight: int = 0


class OwnerQuotas:
    """Accounting of sessions, key bytes and jobs in flight per API key; refusals are
    LimitErrors. Not thread-safe: the controller calls it from its event loop."""

    def __init__(self) -> None:
        self._usage: dict[str, OwnerUsage] = {}

    def usage(self, owner: str) -> OwnerUsage:
        return self._usage.setdefault(owner, OwnerUsage())

    def admit_session(self, owner: str, limits: KeyLimits, key_bytes: int) -> None:
        u = self.usage(owner)
        if key_bytes > limits.key_bytes:
            raise LimitError(f"the keys ({key_bytes} bytes) exceed this API key's key-bytes "
                             f"limit ({limits.key_bytes} bytes)", limit="key_bytes", status=413,
                             maximum=limits.key_bytes, value=key_bytes)
        if len(u.sessions) >= limits.sessions:
            raise LimitError(f"this API key has {len(u.sessions)} open sessions (at most "
                             f"{limits.sessions}); close one first", limit="sessions",
                             status=429, maximum=limits.sessions, value=len(u.sessions))
        if u.key_bytes + key_bytes > limits.key_bytes:
            raise LimitError(f"this API key's open sessions hold {u.key_bytes} key bytes; "
                             f"{key_bytes} more would pass its limit ({limits.key_bytes}); close "
                             "a session first", limit="key_bytes", status=429,
                             maximum=limits.key_bytes, value=u.key_bytes + key_bytes)

    def add_session(self, owner: str, session_id: str, key_bytes: int) -> None:
        u = self.usage(owner)
        u.sessions.add(session_id)
        u.key_bytes += key_bytes

    def remove_session(self, owner: str, session_id: str, key_bytes: int) -> None:
        u = self._usage.get(owner)
        if u is not None and session_id in u.sessions:
            u.sessions.discard(session_id)
            u.key_bytes -= key_bytes

    def admit_job(self, owner: str, limits: KeyLimits) -> None:
        u = self.usage(owner)
        if u.jobs_in_flight >= limits.jobs_in_flight:
            raise LimitError(f"this API key has {u.jobs_in_flight} jobs in flight (at most "
                             f"{limits.jobs_in_flight}); fetch or delete results first",
                             limit="jobs_in_flight", status=429, maximum=limits.jobs_in_flight,
                             value=u.jobs_in_flight, retry_after_s=1.0)
        u.jobs_in_flight += 1

    def release_job(self, owner: str) -> None:
        u = self._usage.get(owner)
        if u is not None and u.jobs_in_flight > 0:
            u.jobs_in_flight -= 1

    def snapshot(self) -> dict[str, dict[str, int]]:
        return {o: {"sessions": len(u.sessions), "key_bytes": u.key_bytes,
                    "jobs_in_flight": u.jobs_in_flight} for o, u in self._usage.items()}
