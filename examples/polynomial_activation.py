#!/usr/bin/env python3
"""Polynomial activations on encrypted data.

Neural-network activations are not polynomials, so CKKS evaluates polynomial approximations:

  * a hand-written low-degree polynomial with the Ciphertext operators (x + 0.125 x^2 - ...),
  * Chebyshev interpolants of sigmoid, tanh, SiLU and GELU on [-8, 8] at several degrees, evaluated
    with the PolynomialEvaluator (depth ceil(log2(d + 1)) + 1 levels).

For each it prints the levels used and the precision in bits (-log2 max abs error) of the
decrypted result against numpy: against the polynomial itself (the encryption error) and against
the true function (encryption + approximation error).

    python examples/polynomial_activation.py [--preset n14_s40] [--backend auto|cpu|cuda]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import theodosian as th


def bits(got: np.ndarray, want: np.ndarray) -> float:
    err = float(np.max(np.abs(got - want)))
    return float("inf") if err == 0 else -np.log2(err)


ACTIVATIONS = {
    "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)),
    "tanh": math.tanh,
    "silu": lambda v: v / (1.0 + math.exp(-v)),
    "gelu": lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="n14_s40")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--insecure", action="store_true", help="allow parameter sets < 128 bits")
    args = ap.parse_args()

    ctx = th.Context(args.preset, backend=args.backend, allow_insecure=args.insecure)
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    ctx.relin_key = keygen.relin_key(sk)
    encryptor = th.Encryptor(ctx, keygen.public_key(sk))
    decryptor = th.Decryptor(ctx, sk)
    print(ctx)

    rng = np.random.default_rng(0)
    top = ctx.default_encryption_level

    # 1. A hand-written polynomial with operators: p(x) = 0.5 + 0.15012 x - 0.001593 x^3, a
    #    degree-3 least-squares sigmoid on [-8, 8] used in the HE literature.
    x = rng.uniform(-8, 8, ctx.slots)
    ct = encryptor.encrypt(x)
    t = time.perf_counter()
    x2 = ct * ct                          # level top - 1
    x3 = x2 * ct                          # ct is brought down to x2's level; level top - 2
    out = 0.5 + (ct * 0.15012) - (x3 * 0.001593)
    got = decryptor.decrypt(out)
    want_poly = 0.5 + 0.15012 * x - 0.001593 * x**3
    sig = 1.0 / (1.0 + np.exp(-x))
    print(f"\noperators: 0.5 + 0.15012 x - 0.001593 x^3, levels {top - out.level}, "
          f"{time.perf_counter() - t:.2f} s")
    print(f"  precision vs polynomial {bits(got, want_poly):6.2f} bits, "
          f"vs sigmoid {bits(got, sig):6.2f} bits")

    # 2. Chebyshev interpolants with the PolynomialEvaluator.
    poly = th.PolynomialEvaluator(ctx)
    print("\nChebyshev interpolants on [-8, 8]:")
    print(f"  {'function':8} {'degree':>6} {'levels':>6} {'time s':>7} "
          f"{'vs poly (bits)':>15} {'vs function (bits)':>19}")
    for name, f in ACTIVATIONS.items():
        fx = np.vectorize(f)(x)
        for degree in (7, 15, 31):
            series = th.chebyshev_fit(f, -8.0, 8.0, degree)
            if poly.levels_consumed(ct, series) > top:
                print(f"  {name:8} {degree:>6}  (needs more levels than this preset has)")
                continue
            t = time.perf_counter()
            res = poly.evaluate(ct, series)
            elapsed = time.perf_counter() - t
            got = decryptor.decrypt(res)
            print(f"  {name:8} {degree:>6} {top - res.level:>6} {elapsed:>7.2f} "
                  f"{bits(got, series(x)):>15.2f} {bits(got, fx):>19.2f}")


if __name__ == "__main__":
    main()
