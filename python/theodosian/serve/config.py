"""Server settings: one immutable object made at start and handed to every actor."""

from __future__ import annotations

import dataclasses

SERVER_NAME = "theodosian-serve"
NAMESPACE = "theodosian"


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    #: Workers: 0 = one per GPU of the cluster (at least one; CPU workers where there is none).
    workers: int = 0
    #: 'auto' (CUDA when the worker sees a GPU, else CPU), 'cuda' or 'cpu'.
    backend: str = "auto"
    #: CPU backend threads per worker (0: all the worker's cores).
    threads: int = 0
    #: CPUs a worker reserves in Ray.
    cpus_per_worker: float = 1.0
    #: GPUs a worker reserves (below 1: several workers share a GPU).
    gpus_per_worker: float = 1.0
    #: Materialized session keys per worker (bytes), LRU beyond.
    key_budget: int = 16 << 30
    #: Compact uploads kept in a worker's host memory after eviction (bytes).
    host_key_budget: int = 32 << 30
    #: Jobs (chunks) in flight per worker before the server answers busy / makes clients wait.
    max_queue: int = 8
    #: Jobs waiting at the scheduler for a free worker slot (beyond: busy at once).
    max_waiting: int = 1024
    #: Spread the groups of one elementwise job over workers that already hold the session's keys
    #: (and idle ones).
    split_batches: bool = True
    #: Groups of an elementwise job per chunk at most (0: one chunk per worker). Several chunks
    #: of one job pipeline on one worker: it decodes the next chunk and encodes the last one's
    #: results while the device runs the current one.
    chunk_groups: int = 4
    #: Attempts of a chunk whose worker died (each on another worker when there is one).
    retries: int = 3
    #: Seconds a job may take on a worker before the client is told the server is unavailable.
    job_timeout_s: float = 600.0
    #: Seconds to wait for a replacement of a dead worker before giving up on it.
    worker_start_timeout_s: float = 120.0
    #: Parameter sets below 128-bit security (tests).
    allow_insecure: bool = False
    #: Sessions may register their own Python functions as circuits.
    allow_user_functions: bool = True
    #: Modules imported by every worker that register more circuits.
    circuit_modules: tuple[str, ...] = ()
    #: Sessions unused this long are closed (0: never).
    session_ttl_s: float = 0.0
