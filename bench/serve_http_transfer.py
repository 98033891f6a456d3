"""Where the time of one result ciphertext goes on the HTTP API's path (issue 33), stage by stage,
on this machine's loopback (CPU backend; no GPU needed):

    python bench/serve_http_transfer.py [--preset bootparam_40] [--mb 10] [--repeats 8]
                                        [--profile DIR] [--no-ray]

1. The library: Ciphertext.to_bytes (the worker's encoding) and HostCiphertext.from_bytes (the
   client's checked decoding) of a ciphertext of about --mb MB.
2. The frame format alone: the server's FrameReader fed 64 KiB pieces (how uvicorn hands a body
   over), and the client's read loop (frames.read_frames over http.client) against a bare HTTP
   server on loopback (what the wire itself costs, without Ray Serve).
3. The HTTP API on a local Ray cluster (one CPU worker): the identity job's round trip
   (HttpSession.run), then its halves: the upload (submit, answered 202 once the inputs are in)
   and the download (the job's result stream), the same through the FastAPI app served by uvicorn
   in this process (no Ray Serve proxy in between), and the Ray client's round trip.
4. One client's jobs back to back through Ray Serve: Session.map with 1, 2 and 3 jobs in flight.

Prints one line per stage (median and min ms, MB/s) and writes cProfile files of the client's
download to --profile when given. Not a test: numbers for docs/performance-journal.md.
"""

from __future__ import annotations

import argparse
import cProfile
import http.client
import http.server
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from typing import Any, Callable

import theodosian as th
from theodosian.serve import frames
from theodosian.serve.http_client import MAX_RESULT_FRAME


def timed(name: str, fn: Callable[[], Any], repeats: int, nbytes: int) -> list[float]:
    fn()  # warm-up (first-touch page faults, imports, connections)
    ms = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    med = statistics.median(ms)
    print(f"{name:<58} median {med:8.2f} ms  min {min(ms):8.2f} ms  "
          f"{nbytes / 1e6 / (med / 1e3):8.0f} MB/s", flush=True)
    return ms


def make_ciphertext(preset: str, mb: float) -> tuple[th.Context, th.Ciphertext, th.Context]:
    ctx = th.Context(preset, backend="cpu", allow_insecure=True)
    kg = th.KeyGenerator(ctx)
    sk = kg.secret_key()
    enc = th.Encryptor(ctx, kg.public_key(sk))
    ct = enc.encrypt([0.5] * ctx.slots)
    ev = th.Evaluator(ctx)
    # Drop levels until the serialized ciphertext is no larger than the size asked for.
    while len(ct.to_bytes()) > mb * 1e6 and ct.level > 1:
        ct = ev.level_down(ct, ct.level - 1)
    return ctx, ct, th.Context(preset, backend="cpu", allow_insecure=True)


def stage_library(ct: th.Ciphertext, host_ctx: th.Context, repeats: int) -> bytes:
    data = ct.to_bytes()
    n = len(data)
    print(f"ciphertext: level {ct.level}, {n / 1e6:.2f} MB serialized")
    timed("library: Ciphertext.to_bytes (worker encodes)", ct.to_bytes, repeats, n)
    timed("library: HostCiphertext.from_bytes (client decodes, checks)",
          lambda: th.HostCiphertext.from_bytes(host_ctx, data), repeats, n)
    return data


class _BareHandler(http.server.BaseHTTPRequestHandler):
    body: list[Any] = []
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", frames.MEDIA_TYPE)
        self.send_header("Content-Length", str(sum(memoryview(p).nbytes for p in self.body)))
        self.end_headers()
        for p in self.body:
            self.wfile.write(p)

    def log_message(self, *args: Any) -> None:
        pass


def stage_frames(data: bytes, repeats: int) -> None:
    n = len(data)
    body = frames.encode([{"chunk": 0, "inputs": [0, 1], "outputs": 1}, data])
    whole = frames.encode_bytes([{"chunk": 0}, data])

    def feed() -> None:
        r = frames.FrameReader(MAX_RESULT_FRAME)
        v = memoryview(whole)
        for i in range(0, len(whole), 65536):
            r.feed(v[i:i + 65536])
        list(r.frames())

    timed("frames: FrameReader.feed, 64 KiB pieces (server reads a body)", feed, repeats, n)
    _BareHandler.body = body
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _BareHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1])

    def get() -> None:
        conn.request("GET", "/")
        resp = conn.getresponse()
        for _ in frames.read_frames(resp.read, MAX_RESULT_FRAME):
            pass
        resp.read()

    timed("wire: bare http.server -> http.client + read_frames", get, repeats, n)
    srv.shutdown()


def stage_ray(ct: th.Ciphertext, ctx: th.Context, host_ctx: th.Context, data_bytes: int,
              repeats: int, profile: str | None, preset: str) -> None:
    import ray  # noqa: PLC0415

    from theodosian import serve  # noqa: PLC0415
    from theodosian.serve import apikeys  # noqa: PLC0415

    n = data_bytes
    folder = tempfile.mkdtemp(prefix="theo-transfer-")
    keyfile = os.path.join(folder, "keys.json")
    api_key, _ = apikeys.create(keyfile, "bench")
    serve.init_ray(None, num_cpus=4, object_store_mb=2048)
    srv = serve.start(serve.ServerConfig(workers=1, backend="cpu", threads=1,
                                         allow_insecure=True, key_budget=4 << 30))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = serve.HttpConfig(port=port, api_keys=keyfile, parameter_sets=(preset,),
                           allow_insecure=True, max_body_bytes=1 << 30,
                           max_upload_bytes=8 << 30)
    http_api = serve.start_http(cfg)
    try:
        keys = serve.ClientKeys.generate(ctx, relin=False, rotations=[1])
        session = serve.HttpClient(http_api.url, api_key).open_session(keys)
        one = [ct]
        direct = _direct(cfg, api_key, keys, session.id)
        for label, s in (("Ray Serve", session), ("uvicorn, no proxy", direct)):
            _http_stages(label, s, one, host_ctx, n, repeats, profile)
        _pipelined(session, [ct] * 4, host_ctx, max(4, repeats))
        rs = serve.Client().open_session(keys)
        timed("ray client: identity round trip",
              lambda: rs.run("identity", one, host=True), repeats, n)
        rs.close()
        session.close()
    finally:
        http_api.stop()
        srv.stop()
        ray.shutdown()


def _pipelined(session: Any, cts: list[Any], host_ctx: th.Context, jobs: int) -> None:
    """One client's identity jobs of len(cts) ciphertexts back to back: map() with one job at a
    time (each waited for before the next is sent) and with 2 and 3 jobs in flight (the next job
    on the server while one job's results come back)."""
    n = len(cts) * len(cts[0].to_bytes())
    for k in (1, 2, 3):
        list(session.map("identity", [cts] * 2, in_flight=k, host=True, host_context=host_ctx))
        t0 = time.perf_counter()
        for _ in session.map("identity", [cts] * jobs, in_flight=k, host=True,
                             host_context=host_ctx):
            pass
        per = (time.perf_counter() - t0) * 1e3 / jobs
        print(f"{f'http (Ray Serve): {len(cts)}-ciphertext jobs, in_flight {k}':<58} per job "
              f"{per:8.2f} ms  {2 * n / 1e6 / (per / 1e3):8.0f} MB/s (both ways)", flush=True)


def _http_stages(label: str, s: Any, one: list[Any], host_ctx: th.Context, n: int,
                 repeats: int, profile: str | None) -> None:
    """Round trip, upload and download of one ciphertext through one HTTP server."""
    timed(f"http ({label}): identity round trip (run)",
          lambda: s.run("identity", one, host=True, host_context=host_ctx), repeats, n)
    timed(f"http ({label}): upload only (submit, 202) + drop",
          lambda: s.submit("identity", one).cancel(), repeats, n)
    ms: list[float] = []

    def download() -> None:
        job = s.submit("identity", one)
        time.sleep(0.05)  # the worker is done: the stream is the transfer alone
        t0 = time.perf_counter()
        job.result(host=True)
        ms.append((time.perf_counter() - t0) * 1e3)

    for _ in range(repeats + 1):
        download()
    med = statistics.median(ms[1:])
    print(f"{'http (' + label + '): download only (stream, decode)':<58} median "
          f"{med:8.2f} ms  min {min(ms[1:]):8.2f} ms  {n / 1e6 / (med / 1e3):8.0f} MB/s")
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            download()
            s.run("identity", one, host=True, host_context=host_ctx)
        prof.disable()
        path = os.path.join(profile, f"client-{label.split(',')[0].replace(' ', '')}.prof")
        prof.dump_stats(path)
        print(f"  profile (this process: client{', server' if 'uvicorn' in label else ''}): "
              f"{path}")


def _direct(cfg: Any, api_key: str, keys: Any, session_id: str) -> Any:
    """The same FastAPI application served by uvicorn in this process (no Ray Serve proxy or
    replica hop), on another port, against the same controller; an HttpSession on it."""
    import asyncio  # noqa: PLC0415

    import ray  # noqa: PLC0415
    import uvicorn  # noqa: PLC0415

    from theodosian import serve  # noqa: PLC0415
    from theodosian.serve.config import NAMESPACE  # noqa: PLC0415
    from theodosian.serve.http_api import Api  # noqa: PLC0415
    from theodosian.serve.http_app import build_app  # noqa: PLC0415

    api = Api(cfg, ray.get_actor(cfg.server_name, namespace=NAMESPACE), replica="direct")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_app(api), host="127.0.0.1", port=port,
                                           log_level="warning"))
    threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    client = serve.HttpClient(f"http://127.0.0.1:{port}", api_key)
    return client.session(session_id, keys)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", default="bootparam_40")
    p.add_argument("--mb", type=float, default=10.0, help="ciphertext size to aim at (MB)")
    p.add_argument("--repeats", type=int, default=8)
    p.add_argument("--profile", default=None, help="folder for cProfile files")
    p.add_argument("--no-ray", action="store_true", help="the library and frame stages only")
    a = p.parse_args(argv)
    if a.profile:
        os.makedirs(a.profile, exist_ok=True)
    ctx, ct, host_ctx = make_ciphertext(a.preset, a.mb)
    data = stage_library(ct, host_ctx, a.repeats)
    stage_frames(data, a.repeats)
    if not a.no_ray:
        stage_ray(ct, ctx, host_ctx, len(data), a.repeats, a.profile, a.preset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
