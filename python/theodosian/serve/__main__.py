"""Command line of the evaluation server.

    python -m theodosian.serve start [--address auto] [--workers N] [--detach] ...
    python -m theodosian.serve status [--address auto] [--json]
    python -m theodosian.serve stop [--address auto]
    python -m theodosian.serve bench --preset bootparam_40 --ops boot,hmult --clients 1,2,4,8,16
    python -m theodosian.serve start --http --api-keys keys.json [--port 8000] [--tls-cert ...]
    python -m theodosian.serve keys create|list|revoke --file keys.json ...
    python -m theodosian.serve openapi [--out docs/serve-openapi.json]
    python -m theodosian.serve bench-http --preset bootparam_40 --clients 1,16 ...
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import sys
import time
from typing import TYPE_CHECKING, Callable

from .._cli import run_subcommand
from .config import SERVER_NAME, ServerConfig
from .errors import ServeError

if TYPE_CHECKING:
    from .limits import HttpConfig


def _config(a: argparse.Namespace) -> ServerConfig:
    return ServerConfig(workers=a.workers, backend=a.backend, threads=a.threads,
                        cpus_per_worker=a.cpus_per_worker,
                        gpus_per_worker=a.gpus_per_worker, key_budget=int(a.key_budget_mb) << 20,
                        host_key_budget=int(a.host_key_budget_mb) << 20, max_queue=a.max_queue,
                        split_batches=not a.no_split, chunk_groups=a.chunk_groups,
                        retries=a.retries,
                        job_timeout_s=a.job_timeout_s, allow_insecure=a.allow_insecure,
                        allow_user_functions=not a.no_user_functions,
                        circuit_modules=tuple(a.circuits), session_ttl_s=a.session_ttl_s)


def _print_status(m: dict) -> None:
    h = m["health"]
    print(f"status {h['status']}: {h['workers_alive']}/{h['workers']} workers, "
          f"{h['sessions']} sessions, queue depth {m['queue_depth']}, "
          f"latency p50 {m['latency_ms']['p50']} ms p99 {m['latency_ms']['p99']} ms")
    c = m["counters"]
    print("jobs: " + ", ".join(f"{k} {v}" for k, v in c.items()))
    for w in m["workers"]:
        keys = w.get("keys", {})
        print(f"  {w['worker_id']} on {w['host'] or '?'}: {'alive' if w['alive'] else 'DEAD'}, "
              f"{w.get('backends') or ''} inflight {w['inflight']}, jobs {w['jobs']}, "
              f"utilization {100 * w.get('utilization', 0):.1f}%, keys "
              f"{keys.get('device_key_bytes', 0) / 2**20:.0f}/"
              f"{keys.get('device_key_budget', 0) / 2**20:.0f} MiB "
              f"({keys.get('sessions_on_device', 0)} sessions, "
              f"{keys.get('evictions', 0)} evictions)" + (f" [{w['error']}]" if "error" in w
                                                          else ""))


def _http_config(a: argparse.Namespace) -> "HttpConfig":
    from .limits import HttpConfig, KeyLimits  # noqa: PLC0415

    limits = KeyLimits(jobs_in_flight=a.jobs_in_flight, sessions=a.sessions_per_key,
                       key_bytes=int(a.key_mb_per_key) << 20, requests_per_s=a.rate,
                       burst=a.burst)
    return HttpConfig(host=a.host, port=a.port, api_keys=a.api_keys, tls_cert=a.tls_cert,
                      tls_key=a.tls_key, parameter_sets=tuple(a.presets.split(",")),
                      allow_insecure=a.allow_insecure,
                      max_body_bytes=int(a.max_body_mb) << 20,
                      max_upload_bytes=int(a.max_upload_mb) << 20,
                      max_ciphertexts_per_job=a.max_ciphertexts, key_limits=limits,
                      replicas=a.http_replicas, proxy_location=a.proxy_location,
                      result_ttl_s=a.result_ttl_s, server_name=a.name)


def cmd_start(a: argparse.Namespace) -> int:
    from .server import start  # noqa: PLC0415

    http_cfg = _http_config(a) if a.http else None
    server = start(_config(a), address=a.address, detached=a.detach, name=a.name,
                   num_cpus=a.num_cpus, num_gpus=a.num_gpus, object_store_mb=a.object_store_mb)
    m = server.metrics()
    _print_status(m)
    if http_cfg is not None:
        from .http_server import start_http  # noqa: PLC0415

        try:
            api = start_http(http_cfg, circuit_modules=tuple(a.circuits))
        except Exception:
            if not a.detach:
                server.stop()
            raise
        print(f"HTTP API at {api.url} (OpenAPI schema: {api.url}/v1/openapi.json)", flush=True)
    else:
        api = None
    if a.detach:
        print(f"server {a.name!r} runs detached; stop it with: python -m theodosian.serve stop "
              f"--address {a.address or 'auto'}")
        return 0
    print("serving; Ctrl-C stops", flush=True)
    stop = False

    def on_signal(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    while not stop:
        time.sleep(0.5)
        if a.status_every and int(time.time()) % a.status_every == 0:
            try:
                _print_status(server.metrics())
            except ServeError as exc:
                print(f"status failed: {exc}", file=sys.stderr)
            time.sleep(1.0)
    try:
        if api is not None:
            api.stop()
        server.stop()
    except Exception as exc:  # noqa: BLE001 - stopped from elsewhere already (serve stop)
        print(f"already stopped ({type(exc).__name__})")
    return 0


def cmd_status(a: argparse.Namespace) -> int:
    from .server import get_server  # noqa: PLC0415

    m = get_server(a.name, a.address).metrics()
    if a.json:
        print(json.dumps(m, indent=1))
    else:
        _print_status(m)
    return 0 if m["health"]["status"] == "ok" else 1


def cmd_stop(a: argparse.Namespace) -> int:
    from .server import get_server  # noqa: PLC0415

    server = get_server(a.name, a.address)
    from .http_server import stop_http  # noqa: PLC0415

    if stop_http():
        print("HTTP API stopped")
    server.stop()
    print(f"server {a.name!r} stopped")
    return 0


def cmd_keys(a: argparse.Namespace) -> int:
    from . import apikeys  # noqa: PLC0415

    if a.keys_command == "create":
        limits = {k: v for k, v in (("jobs_in_flight", a.jobs_in_flight),
                                    ("sessions", a.sessions),
                                    ("key_bytes", None if a.key_mb is None else a.key_mb << 20),
                                    ("requests_per_s", a.rate), ("burst", a.burst))
                  if v is not None}
        key, entry = apikeys.create(a.file, a.key_name, limits)
        print(f"created API key {entry.id} ({entry.name or 'no name'}) in {a.file}; it is shown "
              "once, keep it now:", file=sys.stderr)
        print(key)
    elif a.keys_command == "list":
        for k in apikeys.load(a.file).values():
            state = f"revoked {k.revoked}" if k.revoked else "active"
            lim = f" limits {k.limits}" if k.limits else ""
            print(f"{k.id}  {k.name or '-':20s} created {k.created}  {state}{lim}")
    else:
        entry = apikeys.revoke(a.file, a.key_id)
        print(f"revoked {entry.id} ({entry.name or 'no name'}) at {entry.revoked}; a running "
              "server refuses it within a second")
    return 0


def cmd_openapi(a: argparse.Namespace) -> int:
    from .http_app import openapi_schema  # noqa: PLC0415

    text = json.dumps(openapi_schema(), indent=1, sort_keys=True) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _record_writer(out: str, header: dict,
                   names_device: Callable[[dict], bool]) -> Callable[[dict], None]:
    """What a benchmark hands each record to: the header takes the commit and, from the first
    record names_device accepts, the device; `out` (when given) is rewritten after every record,
    so that a run cut short still leaves its measurements."""
    written: list[dict] = []

    def write(rec: dict) -> None:
        written.append(rec)
        header["git_commit"] = rec.get("git_commit", "unknown")
        if names_device(rec):
            header.setdefault("device", rec["device"])
        if out:
            os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
            with open(out + ".tmp", "w") as f:
                json.dump({"header": header, "results": written}, f, indent=1)
            os.replace(out + ".tmp", out)

    return write


def parse_jobs(text: str) -> dict[str, int]:
    """--jobs: 'N' (every op) or 'N,op=M,...' / 'op=M,...' (per op; '' keys the default 8)."""
    out = {"": 8}
    for part in str(text).split(","):
        op, _, n = part.rpartition("=")
        try:
            value = int(n)
        except ValueError:
            raise SystemExit(f"--jobs: {part!r} is not N or op=N") from None
        if value < 1:
            raise SystemExit(f"--jobs: {part!r}: at least 1 job")
        out[op.strip()] = value
    return out


def cmd_bench(a: argparse.Namespace) -> int:
    from .bench import run_benchmark  # noqa: PLC0415

    per_op = parse_jobs(a.jobs)

    def jobs(op: str, clients: int) -> int:
        return max(per_op.get(op, per_op[""]) // clients, a.min_jobs_per_client)

    header = {"record": "header", "topic": a.topic, "preset": a.preset, "workers": a.gpus,
              "gpus_per_worker": a.gpus_per_worker, "backend": a.backend,
              "chunk_groups": a.chunk_groups, "load_average": round(os.getloadavg()[0], 2),
              "cpu_count": os.cpu_count(),
              "batch": a.batch, "host": platform.node(), "python": platform.python_version(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    write = _record_writer(a.out, header, lambda rec: rec["path"] == "server")

    records = run_benchmark(
        preset=a.preset, ops=a.ops.split(","), clients=[int(c) for c in a.clients.split(",")],
        gpus=a.gpus, batch=a.batch, jobs_per_client=jobs, boot_slots=a.boot_slots,
        allow_insecure=a.allow_insecure, backend=a.backend, threads=a.threads,
        key_budget=int(a.key_budget_mb) << 20, address=a.address,
        object_store_mb=a.object_store_mb, num_cpus=a.num_cpus,
        transfer_repeats=a.transfer_repeats, gpus_per_worker=a.gpus_per_worker,
        chunk_groups=a.chunk_groups, device_results=a.device_results,
        check_every_result=a.check_every_result, warmup_jobs=a.warmup_jobs,
        in_process_load=not a.no_in_process_load,
        log=lambda s: print(s, flush=True), on_record=write)
    if a.out:
        print(f"wrote {len(records)} records to {a.out}")
    return 0


def cmd_bench_http(a: argparse.Namespace) -> int:
    from .bench_http import run_http_benchmark  # noqa: PLC0415

    header = {"record": "header", "topic": a.topic, "preset": a.preset, "workers": a.gpus,
              "backend": a.backend, "chunk_groups": a.chunk_groups, "batch": a.batch,
              "in_flight": a.in_flight,
              "load_average": round(os.getloadavg()[0], 2), "cpu_count": os.cpu_count(),
              "host": platform.node(), "python": platform.python_version(),
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    write = _record_writer(a.out, header, lambda rec: rec["path"] != "in_process")

    records = run_http_benchmark(
        preset=a.preset, ops=a.ops.split(","), clients=[int(c) for c in a.clients.split(",")],
        gpus=a.gpus, batch=a.batch,
        jobs_per_client=lambda n: max(parse_jobs(a.jobs)[""] // n, a.min_jobs_per_client),
        boot_slots=a.boot_slots, allow_insecure=a.allow_insecure, backend=a.backend,
        threads=a.threads, key_budget=int(a.key_budget_mb) << 20,
        object_store_mb=a.object_store_mb, num_cpus=a.num_cpus, chunk_groups=a.chunk_groups,
        paths=a.paths.split(","), transfer_repeats=a.transfer_repeats,
        http_replicas=a.http_replicas, in_flight=[int(k) for k in a.in_flight.split(",")],
        log=lambda s: print(s, flush=True), on_record=write)
    if a.out:
        print(f"wrote {len(records)} records to {a.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m theodosian.serve",
                                description="theodosian evaluation server on Ray")
    sub = p.add_subparsers(dest="command", required=True)

    def common(sp: argparse.ArgumentParser, address_default: str | None) -> None:
        sp.add_argument("--address", default=address_default,
                        help="Ray cluster: 'auto' (the one on this machine), host:port; "
                             "'local' starts one in this process")
        sp.add_argument("--name", default=SERVER_NAME, help="the server's actor name")

    def bench_opts(sp: argparse.ArgumentParser) -> None:
        # The workload, client and server options of both benchmarks.
        sp.add_argument("--gpus", type=int, default=1, help="workers (one per GPU)")
        sp.add_argument("--batch", type=int, default=16, help="operations per job")
        sp.add_argument("--jobs", default="8", help="jobs per configuration (split over the "
                        "clients): N, or per op as N,hmult=M (the HTTP benchmark: N)")
        sp.add_argument("--min-jobs-per-client", type=int, default=2)
        sp.add_argument("--boot-slots", type=int, default=0, help="0: N/2")
        sp.add_argument("--allow-insecure", action="store_true")
        sp.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
        sp.add_argument("--threads", type=int, default=0)
        sp.add_argument("--key-budget-mb", type=int, default=48 << 10)
        sp.add_argument("--object-store-mb", type=int, default=None)
        sp.add_argument("--num-cpus", type=int, default=None)

    def server_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--workers", type=int, default=0,
                        help="workers (0: one per GPU of the cluster, at least one)")
        sp.add_argument("--backend", default="auto", choices=["auto", "cuda", "cpu"])
        sp.add_argument("--threads", type=int, default=0, help="CPU backend threads per worker")
        sp.add_argument("--cpus-per-worker", type=float, default=1.0)
        sp.add_argument("--gpus-per-worker", type=float, default=1.0,
                        help="below 1: several workers share a GPU")
        sp.add_argument("--key-budget-mb", type=int, default=16 << 10,
                        help="materialized session keys per worker (MiB), LRU beyond")
        sp.add_argument("--host-key-budget-mb", type=int, default=32 << 10)
        sp.add_argument("--max-queue", type=int, default=8, help="jobs in flight per worker")
        sp.add_argument("--no-split", action="store_true",
                        help="never split one job's batch into chunks")
        sp.add_argument("--chunk-groups", type=int, default=4,
                        help="operations (groups) per chunk at most: chunks of one job pipeline "
                             "on a worker (0: one chunk per worker)")
        sp.add_argument("--retries", type=int, default=3)
        sp.add_argument("--job-timeout-s", type=float, default=600.0)
        sp.add_argument("--allow-insecure", action="store_true",
                        help="accept parameter sets below 128-bit security (tests)")
        sp.add_argument("--no-user-functions", action="store_true")
        sp.add_argument("--circuits", action="append", default=[],
                        help="module registering circuits, imported by every worker")
        sp.add_argument("--session-ttl-s", type=float, default=0.0)
        sp.add_argument("--num-cpus", type=int, default=None, help="local cluster only")
        sp.add_argument("--num-gpus", type=int, default=None, help="local cluster only")
        sp.add_argument("--object-store-mb", type=int, default=None, help="local cluster only")

    sp = sub.add_parser("start", help="start a server")
    common(sp, "auto")
    server_opts(sp)
    hp = sp.add_argument_group("HTTP API (--http)")
    hp.add_argument("--http", action="store_true",
                    help="also serve the HTTP API (Ray Serve) in front of the server")
    hp.add_argument("--host", default="127.0.0.1",
                    help="address to listen on (0.0.0.0: every interface)")
    hp.add_argument("--port", type=int, default=8000)
    hp.add_argument("--api-keys", default="", help="the API key file (keys create --file)")
    hp.add_argument("--tls-cert", default="", help="PEM certificate (chain): serve HTTPS")
    hp.add_argument("--tls-key", default="", help="the certificate's private key (PEM)")
    hp.add_argument("--presets", default="bootparam_40",
                    help="parameter sets sessions may use (presets or parameter files, commas)")
    hp.add_argument("--max-body-mb", type=int, default=1024, help="largest job body")
    hp.add_argument("--max-upload-mb", type=int, default=16 << 10,
                    help="largest session upload (evaluation keys)")
    hp.add_argument("--max-ciphertexts", type=int, default=256, help="ciphertexts per job")
    hp.add_argument("--jobs-in-flight", type=int, default=32, help="per API key")
    hp.add_argument("--sessions-per-key", type=int, default=16, help="per API key")
    hp.add_argument("--key-mb-per-key", type=int, default=32 << 10,
                    help="uploaded key bytes of a key's open sessions (MiB)")
    hp.add_argument("--rate", type=float, default=100.0, help="requests/s per API key")
    hp.add_argument("--burst", type=int, default=200, help="requests at once per API key")
    hp.add_argument("--http-replicas", type=int, default=1)
    hp.add_argument("--proxy-location", default="HeadOnly", choices=["HeadOnly", "EveryNode"])
    hp.add_argument("--result-ttl-s", type=float, default=600.0,
                    help="how long finished results wait to be fetched")
    sp.add_argument("--detach", action="store_true",
                    help="leave the server running in the cluster and exit")
    sp.add_argument("--status-every", type=int, default=0, help="print status every N s")
    sp.set_defaults(fn=cmd_start)

    sp = sub.add_parser("keys", help="API keys of the HTTP API (create, list, revoke)")
    ks = sp.add_subparsers(dest="keys_command", required=True)
    kc = ks.add_parser("create", help="make a key; it is printed once")
    kc.add_argument("--file", required=True)
    kc.add_argument("--name", dest="key_name", default="")
    kc.add_argument("--jobs-in-flight", type=int, default=None)
    kc.add_argument("--sessions", type=int, default=None)
    kc.add_argument("--key-mb", type=int, default=None)
    kc.add_argument("--rate", type=float, default=None)
    kc.add_argument("--burst", type=int, default=None)
    kl = ks.add_parser("list", help="the keys (ids, names, state; never the keys)")
    kl.add_argument("--file", required=True)
    kr = ks.add_parser("revoke", help="revoke a key by id")
    kr.add_argument("--file", required=True)
    kr.add_argument("key_id")
    sp.set_defaults(fn=cmd_keys)

    sp = sub.add_parser("openapi", help="print the HTTP API's OpenAPI schema")
    sp.add_argument("--out", default="")
    sp.set_defaults(fn=cmd_openapi)

    sp = sub.add_parser("status", help="health and metrics")
    common(sp, "auto")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(fn=cmd_status)

    sp = sub.add_parser("stop", help="stop a detached server")
    common(sp, "auto")
    sp.set_defaults(fn=cmd_stop)

    sp = sub.add_parser("bench", help="throughput and latency through the server vs in-process")
    sp.add_argument("--address", default=None, help="Ray cluster (default: a local one)")
    sp.add_argument("--preset", default="bootparam_40")
    sp.add_argument("--ops", default="boot,hmult")
    sp.add_argument("--clients", default="1,2,4,8,16")
    bench_opts(sp)
    sp.add_argument("--gpus-per-worker", type=float, default=1.0,
                    help="below 1: several workers share a GPU (e.g. 0.5: 2 per GPU)")
    sp.add_argument("--transfer-repeats", type=int, default=10)
    sp.add_argument("--chunk-groups", type=int, default=4,
                    help="the server's chunk size (operations); 0: one chunk per worker")
    sp.add_argument("--device-results", action="store_true",
                    help="clients load results onto their own device (default: checked host "
                         "ciphertexts, as a client on another machine receives them)")
    sp.add_argument("--check-every-result", action="store_true",
                    help="keep every job's results and compare them all with in-process ones "
                         "after the timing (host memory: ~12 MB per bootstrapped ciphertext); "
                         "by default each client's last job is compared")
    sp.add_argument("--warmup-jobs", type=int, default=0,
                    help="untimed jobs per client before each timing (every worker loads its "
                         "keys and builds its circuits first)")
    sp.add_argument("--no-in-process-load", action="store_true",
                    help="skip the in-process throughput runs (results are still checked "
                         "against in-process evaluation)")
    sp.add_argument("--topic", default="serve", help="the header's topic (serve-scaling for "
                    "issue 26's runs)")
    sp.add_argument("--out", default="", help="JSON file ({header, results})")
    sp.set_defaults(fn=cmd_bench)

    sp = sub.add_parser("bench-http", help="the HTTP API against the Ray client and in-process")
    sp.add_argument("--preset", default="bootparam_40")
    sp.add_argument("--ops", default="boot")
    sp.add_argument("--clients", default="1,16")
    sp.add_argument("--paths", default="in_process,ray,http",
                    help="in_process and any of ray, http, in this order per client count")
    bench_opts(sp)
    sp.add_argument("--chunk-groups", type=int, default=2,
                    help="the server's chunk size (operations): results stream back per chunk")
    sp.add_argument("--transfer-repeats", type=int, default=5)
    sp.add_argument("--http-replicas", type=int, default=1, help="ingress replicas of the API")
    sp.add_argument("--in-flight", default="1",
                    help="jobs each Ray or HTTP client keeps submitted (Session.map; 1: run() "
                         "in a loop, each job waited for before the next is sent); a list "
                         "(1,2) measures each")
    sp.add_argument("--topic", default="serve")
    sp.add_argument("--out", default="", help="JSON file ({header, results})")
    sp.set_defaults(fn=cmd_bench_http)

    a = p.parse_args(argv)
    if getattr(a, "address", None) == "local":
        a.address = None
    from .apikeys import KeyFileError  # noqa: PLC0415

    return run_subcommand(a, (ServeError, KeyFileError), "theodosian.serve")


if __name__ == "__main__":
    sys.exit(main())
