"""Metrics of the HTTP API in the Prometheus text format (version 0.0.4): the Ray server's
counters, queue, latency and workers, and each HTTP replica's requests, refusals and bytes (labelled
with the replica, since a scrape reaches one replica at a time)."""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclasses.dataclass
class HttpCounters:
    """One replica's counters."""

    requests: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    refusals: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    bytes_in: int = 0
    bytes_out: int = 0
    jobs: int = 0

    def count(self, method: str, route: str, status: int) -> None:
        self.requests[(method, route, status)] += 1

    def refused(self, limit: str) -> None:
        self.refusals[limit] += 1


def _escape(value: Any) -> str:
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self._declared: set[str] = set()

    def metric(self, name: str, kind: str, help_text: str, value: Any,
               labels: dict[str, Any] | None = None) -> None:
        if value is None:
            return
        if name not in self._declared:
            self._declared.add(name)
            self.lines.append(f"# HELP {name} {help_text}")
            self.lines.append(f"# TYPE {name} {kind}")
        lab = ""
        if labels:
            lab = "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"
        if isinstance(value, bool):
            value = int(value)
        self.lines.append(f"{name}{lab} {value}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def prometheus_text(m: dict[str, Any], http: HttpCounters, replica: str,
                    active_keys: int) -> str:
    """m: the controller's metrics() (no session ids or key ids in it)."""
    w = _Writer()
    h = m["health"]
    w.metric("theodosian_up", "gauge", "1 when every worker is alive, 0.5 degraded, 0 down",
             {"ok": 1, "degraded": 0.5}.get(h["status"], 0))
    w.metric("theodosian_workers", "gauge", "Workers of the server", h["workers"])
    w.metric("theodosian_workers_alive", "gauge", "Workers alive", h["workers_alive"])
    w.metric("theodosian_sessions", "gauge", "Open sessions", h["sessions"])
    w.metric("theodosian_uptime_seconds", "gauge", "Seconds since the server started",
             h["uptime_s"])
    for name, value in sorted(m["counters"].items()):
        w.metric(f"theodosian_{name}_total", "counter", f"Server counter {name}", value)
    w.metric("theodosian_queue_depth", "gauge", "Chunks in flight and waiting",
             m["queue_depth"])
    w.metric("theodosian_jobs_open", "gauge", "HTTP jobs whose results are not delivered yet",
             m.get("jobs_open", 0))
    w.metric("theodosian_jobs_running", "gauge", "HTTP jobs running", m.get("jobs_running", 0))
    lat = m["latency_ms"]
    for q in ("p50", "p99"):
        if lat.get(q) is not None:
            w.metric("theodosian_job_latency_seconds", "gauge",
                     "Job latency at the server over the last 2000 jobs, by quantile",
                     round(lat[q] / 1e3, 6), {"quantile": {"p50": "0.5", "p99": "0.99"}[q]})
    w.metric("theodosian_job_latency_samples", "gauge", "Jobs the latency quantiles are of",
             lat.get("samples", 0))
    for wk in m["workers"]:
        lab = {"worker": wk["worker_id"], "host": wk.get("host", "")}
        w.metric("theodosian_worker_alive", "gauge", "1 when the worker is alive", wk["alive"],
                 lab)
        w.metric("theodosian_worker_inflight", "gauge", "Chunks in flight on the worker",
                 wk["inflight"], lab)
        w.metric("theodosian_worker_utilization", "gauge",
                 "Busy fraction of the worker's device over the last 60 s",
                 wk.get("utilization"), lab)
        keys = wk.get("keys") or {}
        w.metric("theodosian_worker_key_bytes", "gauge", "Materialized session keys (bytes)",
                 keys.get("device_key_bytes"), lab)
        w.metric("theodosian_worker_key_budget_bytes", "gauge", "Key memory budget (bytes)",
                 keys.get("device_key_budget"), lab)
        w.metric("theodosian_worker_key_evictions_total", "counter", "Sessions' keys evicted",
                 keys.get("evictions"), lab)
        w.metric("theodosian_worker_jobs_total", "counter", "Chunks run by the worker",
                 wk.get("jobs_done"), lab)
    w.metric("theodosian_api_keys_active", "gauge", "API keys not revoked", active_keys)
    for (method, route, status), n in sorted(http.requests.items()):
        w.metric("theodosian_http_requests_total", "counter", "HTTP requests by route and status",
                 n, {"replica": replica, "method": method, "route": route, "status": status})
    for limit, n in sorted(http.refusals.items()):
        w.metric("theodosian_http_refusals_total", "counter", "Requests refused by a limit", n,
                 {"replica": replica, "limit": limit})
    w.metric("theodosian_http_received_bytes_total", "counter", "Request body bytes read",
             http.bytes_in, {"replica": replica})
    w.metric("theodosian_http_sent_bytes_total", "counter", "Result bytes sent",
             http.bytes_out, {"replica": replica})
    return w.text()
