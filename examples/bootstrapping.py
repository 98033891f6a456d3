#!/usr/bin/env python3
"""Bootstrapping: refresh an exhausted ciphertext and keep computing.

A ciphertext at level 0 can not be multiplied any more; bootstrapping homomorphically re-encrypts
it at a higher level (ModRaise, CoeffToSlot, EvalMod, SlotToCoeff). This example

  1. encrypts x at level 0 and bootstraps it (precision vs numpy, in bits),
  2. runs a circuit deeper than the parameter set allows, y <- (y^2 + y) / 2 for many rounds,
     bootstrapping whenever the levels run out, and prints the precision after every round.

By default it uses a small generated parameter set (N = 2^12, NOT secure: allow_insecure=True,
for a quick demonstration on a CPU). For a 128-bit secure set use --preset n16_s40_boot (or
bootparam_40), which is meant for a GPU (--backend cuda): N = 2^16 bootstrapping keys are large
and slow to make on a CPU.

    python examples/bootstrapping.py [--preset NAME] [--backend auto|cpu|cuda] [--slots 64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import theodosian as th


def bits(got: np.ndarray, want: np.ndarray) -> float:
    err = float(np.max(np.abs(got - want)))
    return float("inf") if err == 0 else -np.log2(err)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default=None,
                    help="bootstrappable preset (default: a small insecure generated set)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--slots", type=int, default=64, help="slots to bootstrap (power of two)")
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args()

    if args.preset is None:
        params = th.Parameters.generate(log_n=12, log_scale=40, levels=3, boot_levels=13,
                                        num_cts_levels=2, num_stc_levels=2)
        ctx = th.Context(params, backend=args.backend, allow_insecure=True)
        print("NOTE: demonstration parameters (N = 2^12) are not secure")
    else:
        ctx = th.Context(args.preset, backend=args.backend)
    print(ctx)

    t0 = time.perf_counter()
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    boot = th.Bootstrapper(ctx, slots=args.slots)
    print(boot.describe().rstrip())
    keys = boot.generate_keys(keygen, sk)
    ctx.relin_key = keys.relin_key
    encryptor = th.Encryptor(ctx, keygen.public_key(sk))
    decryptor = th.Decryptor(ctx, sk)
    print(f"setup and keys: {time.perf_counter() - t0:.2f} s")

    # 1. Bootstrap a fresh level-0 ciphertext.
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, args.slots)
    ct = encryptor.encrypt(x, level=0)
    t = time.perf_counter()
    fresh = boot.bootstrap(ct, keys)
    print(f"\nbootstrap: level 0 -> {fresh.level} in {time.perf_counter() - t:.2f} s, "
          f"precision vs numpy {bits(decryptor.decrypt(fresh), x):.2f} bits")

    # 2. A circuit deeper than the parameters: y <- (y^2 + y) / 2, bootstrapping when needed.
    print(f"\n{args.rounds} rounds of y <- (y^2 + y) / 2 (2 levels per round):")
    y_ct, y = fresh, x.copy()
    for r in range(1, args.rounds + 1):
        booted = False
        if y_ct.level < 2:
            y_ct = boot.bootstrap(y_ct, keys)
            booted = True
        y_ct = (y_ct * y_ct + y_ct) * 0.5
        y = (y * y + y) * 0.5
        print(f"  round {r:2}: level {y_ct.level:2}{' (bootstrapped)' if booted else '               '}"
              f"  precision vs numpy {bits(decryptor.decrypt(y_ct), y):6.2f} bits")


if __name__ == "__main__":
    main()
