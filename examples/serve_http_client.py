#!/usr/bin/env python3
"""A client of the evaluation server's HTTP API (theodosian.serve.HttpClient): no Ray on this side,
an API key, the keys uploaded once; runs a Chebyshev approximation of the sigmoid, several
sliding-window sums at once (asyncio), a job whose results are taken chunk by chunk as the server
finishes them, and checks every result against the same computation in plaintext: the encrypted
polynomial against the polynomial itself, so the check measures the encryption's error (the
interpolant's own distance to the sigmoid is printed beside it). Exits 1 when an error is above
its bound.

    python -m theodosian.serve keys create --file keys.json          # prints the API key once
    python -m theodosian.serve start --address local --http --api-keys keys.json --presets n14_s40 &
    THEO_API_KEY=theo_... python examples/serve_http_client.py --url http://127.0.0.1:8000
    python examples/serve_http_client.py --local     # starts a server and its API for the run
    python examples/serve_http_client.py --local --preset test_n12 --insecure   # seconds (CI)

The server side needs `pip install -c python/constraints.txt '.[serve]'` (or '.[examples]'); this
client needs the theodosian package only.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import socket
import sys
import tempfile
import time

import numpy as np

import theodosian as th
from theodosian import serve


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--api-key", default=os.environ.get("THEO_API_KEY", ""),
                    help="the API key (default: $THEO_API_KEY)")
    ap.add_argument("--ca-file", default=None, help="the CA or certificate to trust (https)")
    ap.add_argument("--local", action="store_true", help="start a server and its API for the run")
    ap.add_argument("--preset", default="n14_s40", help="a parameter set the server offers")
    ap.add_argument("--jobs", type=int, default=4, help="concurrent asyncio jobs")
    ap.add_argument("--insecure", action="store_true", help="allow parameter sets < 128 bits")
    a = ap.parse_args()

    stop = []
    if a.local:
        from theodosian.serve import apikeys

        print("starting a local server (2 CPU workers) and its HTTP API ...", flush=True)
        keyfile = os.path.join(tempfile.mkdtemp(), "keys.json")
        a.api_key, _ = apikeys.create(keyfile, "example")
        server = serve.start(serve.ServerConfig(workers=2, backend="cpu",
                                                allow_insecure=a.insecure))
        stop.append(server.stop)
        with socket.socket() as s:  # a free port on this machine
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        api = serve.start_http(serve.HttpConfig(api_keys=keyfile, port=port,
                                                parameter_sets=(a.preset,),
                                                allow_insecure=a.insecure))
        stop.insert(0, api.stop)
        a.url = api.url
    if not a.api_key:
        ap.error("an API key is needed: --api-key or $THEO_API_KEY (or --local)")
    try:
        client = serve.HttpClient(a.url, a.api_key, ca_file=a.ca_file)
        print(f"server: {client.health()}; circuits: {[c['name'] for c in client.circuits()]}")
        ctx = th.Context(a.preset, allow_insecure=a.insecure)
        t0 = time.perf_counter()
        # The secret key stays here; the evaluation keys go to the server once, compact.
        keys = serve.ClientKeys.generate(ctx, rotations=[1, 2, 4])
        print(f"keys: {keys.upload.describe()} in {time.perf_counter() - t0:.1f} s")
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
            errs = {"sigmoid": max(np.max(np.abs(g - series(x))) for g, x in zip(got, xs))}
            approx = max(np.max(np.abs(g - 1 / (1 + np.exp(-x)))) for g, x in zip(got, xs))
            print(f"sigmoid on 2 ciphertexts: {time.perf_counter() - t0:.2f} s, max error "
                  f"{errs['sigmoid']:.2e} against the polynomial ({approx:.2e} against the "
                  f"sigmoid, the interpolant's own error included)")

            # 2. several jobs at once: sum of 8 neighbouring slots (rotations 1, 2, 4)
            xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(a.jobs)]

            async def many():
                return await asyncio.gather(*(session.run_async(
                    "rotate_sum", [enc.encrypt(x)], args={"width": 8}) for x in xs))

            t0 = time.perf_counter()
            outs = asyncio.run(many())
            want = [sum(np.roll(x, -k) for k in range(8)) for x in xs]
            errs["window sums"] = max(np.max(np.abs(dec.decrypt(o[0]) - w))
                                      for o, w in zip(outs, want))
            print(f"{a.jobs} concurrent window sums: {time.perf_counter() - t0:.2f} s, "
                  f"max error {errs['window sums']:.2e}")

            # 3. a job's results as its chunks finish: x^2 of six ciphertexts
            xs = [rng.uniform(-1, 1, ctx.slots) for _ in range(6)]
            job = session.submit("square", [enc.encrypt(x) for x in xs])
            err = 0.0
            for (lo, hi), outs in job.chunks():
                err = max([err] + [np.max(np.abs(dec.decrypt(o) - xs[lo + i] ** 2))
                                   for i, o in enumerate(outs)])
                print(f"  inputs {lo}..{hi - 1} done")
            print(f"squares: max error {err:.2e}")
            errs["squares"] = err
        # Scale 2^40: a handful of multiplications leave errors near 2^-20 (1e-6); 1e-4 = 2^-13.3.
        bound = 1e-4
        bad = {k: v for k, v in errs.items() if not v < bound}
        print("OK: every encrypted result within 1e-4 of its plaintext computation" if not bad
              else f"FAILED: errors above the bound {bound:g}: {bad}")
        return 0 if not bad else 1
    except serve.ServeError as exc:
        print(f"serve_http_client: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    finally:
        for fn in stop:
            fn()


if __name__ == "__main__":
    sys.exit(main())
