#!/usr/bin/env python3
"""A client of the evaluation server (theodosian.serve): opens a session with its evaluation keys,
runs a Chebyshev approximation of the sigmoid and a sliding-window sum on encrypted vectors through
the server (blocking, then several jobs at once with asyncio), registers its own circuit, and checks
every result against the same computation in plaintext: the encrypted polynomial against the
polynomial itself, so the check measures the encryption's error (the interpolant's own distance
to the sigmoid is printed beside it). Exits 1 when an error is above its bound.

    python -m theodosian.serve start --address local --workers 2 &   # a server (or --local below)
    python examples/serve_client.py                                   # connects to it
    python examples/serve_client.py --local                           # starts one in-process
    python examples/serve_client.py --local --preset test_n12 --insecure  # N = 2^12, seconds (CI)

Needs `pip install -c python/constraints.txt '.[examples]'` (Ray). With --local the example starts
a local Ray cluster and a server for the run and stops both at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time

import numpy as np

import theodosian as th
from theodosian import serve


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--local", action="store_true", help="start a local server for this run")
    ap.add_argument("--address", default="auto", help="Ray cluster of the server")
    ap.add_argument("--preset", default="n14_s40", help="parameter set (secure by default)")
    ap.add_argument("--jobs", type=int, default=4, help="concurrent asyncio jobs")
    ap.add_argument("--insecure", action="store_true", help="allow parameter sets < 128 bits")
    a = ap.parse_args()

    server = None
    if a.local:
        print("starting a local server (2 CPU workers) ...", flush=True)
        server = serve.start(serve.ServerConfig(
            workers=2, backend="cpu", allow_insecure=a.insecure))
    try:
        ctx = th.Context(a.preset, allow_insecure=a.insecure)
        t0 = time.perf_counter()
        # The secret key stays here; the evaluation keys go to the server once, compact.
        keys = serve.ClientKeys.generate(ctx, rotations=[1, 2, 4])
        print(f"keys: {keys.upload.describe()} in {time.perf_counter() - t0:.1f} s")
        client = serve.Client(None if a.local else a.address)
        rng = np.random.default_rng()
        enc, dec = keys.encryptor(), keys.decryptor()

        with client.open_session(keys) as session:
            # 1. sigmoid(x) on [-8, 8] by a degree-15 Chebyshev interpolant, on a batch of two
            series = th.chebyshev_fit(lambda t: 1 / (1 + math.exp(-t)), -8.0, 8.0, 15)
            xs = [rng.uniform(-8, 8, ctx.slots) for _ in range(2)]
            t0 = time.perf_counter()
            out = session.run("polynomial", [enc.encrypt(x) for x in xs],
                              args={"coeffs": list(series.coeffs), "a": -8.0, "b": 8.0})
            got = [dec.decrypt(o) for o in out]
            # The encryption's error: against the same polynomial in plaintext.
            errs = [np.max(np.abs(g - series(x))) for g, x in zip(got, xs)]
            approx = max(np.max(np.abs(g - 1 / (1 + np.exp(-x)))) for g, x in zip(got, xs))
            print(f"sigmoid on 2 ciphertexts: {time.perf_counter() - t0:.2f} s, max error "
                  f"{max(errs):.2e} against the polynomial ({approx:.2e} against the sigmoid, "
                  f"the interpolant's own error included)")

            # 2. several jobs at once: sum of 8 neighbouring slots (rotations 1, 2, 4)
            xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(a.jobs)]

            async def many():
                return await asyncio.gather(*(session.run_async(
                    "rotate_sum", [enc.encrypt(x)], args={"width": 8}) for x in xs))

            t0 = time.perf_counter()
            outs = asyncio.run(many())
            want = [sum(np.roll(x, -k) for k in range(8)) for x in xs]
            err = max(np.max(np.abs(dec.decrypt(o[0]) - w)) for o, w in zip(outs, want))
            print(f"{a.jobs} concurrent window sums: {time.perf_counter() - t0:.2f} s, "
                  f"max error {err:.2e}")

            # 3. a circuit of this session only: 3x^2 - x
            def poly(env, cts):
                ev = env.evaluator
                out = []
                for ct in cts:
                    sq = ev.rescale(ev.square(ct))
                    out.append(ev.sub(ev.multiply_integer(sq, 3), ct))
                return out

            session.register_function("3x2-x", poly)
            x = rng.uniform(-1, 1, ctx.slots)
            y = dec.decrypt(session.run("3x2-x", [enc.encrypt(x)])[0])
            err_user = float(np.max(np.abs(y - (3 * x * x - x))))
            print(f"user circuit 3x^2 - x: max error {err_user:.2e}")

        m = client.metrics()
        print(f"server: {m['health']['status']}, jobs completed "
              f"{m['counters']['jobs_completed']}, latency p50 {m['latency_ms']['p50']} ms")
        for w in m["workers"]:
            print(f"  worker {w['worker_id']}: {w.get('jobs_done', 0)} jobs, utilization "
                  f"{100 * w.get('utilization', 0):.0f}%, keys "
                  f"{w.get('keys', {}).get('device_key_bytes', 0) / 2**20:.0f} MiB")
        # Scale 2^40: a handful of multiplications leave errors near 2^-20 (1e-6); 1e-4 = 2^-13.3.
        bound = 1e-4
        ok = max(errs) < bound and err < bound and err_user < bound
        print("OK: every encrypted result within 1e-4 of its plaintext computation" if ok else
              f"FAILED: an error above the bound {bound:g} (encryption error, see above)")
        return 0 if ok else 1
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    sys.exit(main())
