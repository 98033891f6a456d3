#!/usr/bin/env python3
"""HELR: logistic regression trained on encrypted handwritten digits (Han et al., AAAI 2019).

Mini-batches of 14 x 14 digits (scikit-learn's bundled digits resized, shipped with the package as
theodosian/data/digits14.bin; nothing is downloaded) are encrypted and the weights are trained by
Nesterov's accelerated gradient with HELR's least-squares sigmoid, bootstrapping wherever the
level planner puts it. The same training runs in plaintext (numpy, same polynomial, same
mini-batches) and the two are compared: weights in bits, accuracy on held-out images.

The two digit classes have about 250 training images, fewer than a mini-batch of 1024: batches
are drawn with replacement.

    python examples/helr_training.py                            # N = 2^16, bootparam_40 (GPU)
    python examples/helr_training.py --small --backend cpu      # insecure N = 2^12 set, 64-image
                                                                # batches: a few minutes on a CPU
"""

from __future__ import annotations

import argparse
import pathlib
import struct

import numpy as np
from tqdm import tqdm

import theodosian as th


def load_digits14():
    path = pathlib.Path(th.__file__).parent / "data" / "digits14.bin"
    raw = path.read_bytes()
    assert raw[:8] == b"THEODIGI", f"{path}: not a digits file"
    _, count, rows, cols = struct.unpack("<IIII", raw[8:24])
    labels = np.frombuffer(raw, np.uint8, count, 24)
    pixels = np.frombuffer(raw, np.uint8, count * rows * cols, 24 + count).reshape(count, -1)
    return pixels, labels


def features(pixels: np.ndarray, f: int) -> np.ndarray:
    x = np.zeros((len(pixels), f))
    x[:, 0] = 1.0  # bias
    x[:, 1:1 + pixels.shape[1]] = pixels / 255.0
    return x


def numpy_helr(x, y, batches, coeffs, lr, eta):
    """Plaintext HELR: the same polynomial p(t) ~ sigmoid(t), batches and Nesterov schedule."""
    f = x.shape[1]
    w, v = np.zeros(f), np.zeros(f)
    gamma = lr / batches.shape[1]
    poly = np.polynomial.Polynomial(coeffs)
    for t, idx in enumerate(batches):
        z = (2.0 * y[idx] - 1.0)[:, None] * x[idx]
        g = poly(-(z @ v)) @ z
        w_new = v + gamma * g
        v = (1 - eta[t]) * w_new + eta[t] * w
        w = w_new
    return w


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="bootparam_40")
    ap.add_argument("--small", action="store_true",
                    help="insecure N = 2^12 bootstrapping set, batches of 64 (CPU-sized)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=32)
    ap.add_argument("--degree", type=int, default=3, choices=[3, 5, 7])
    ap.add_argument("--digits", default="3,8")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    d0, d1 = (int(v) for v in args.digits.split(","))
    pixels, labels = load_digits14()
    idx = np.flatnonzero((labels == d0) | (labels == d1))
    rng.shuffle(idx)
    n_train = len(idx) * 7 // 10
    x = features(pixels[idx], 256)
    y = (labels[idx] == d1).astype(np.uint8)
    x_tr, y_tr, x_te, y_te = x[:n_train], y[:n_train], x[n_train:], y[n_train:]

    if args.small:
        params = th.Parameters.generate(log_n=12, log_scale=40, levels=13, boot_levels=13,
                                        num_cts_levels=2, num_stc_levels=2)
        ctx = th.Context(params, backend=args.backend, allow_insecure=True)
        batch = args.batch or 64
    else:
        ctx = th.Context(args.preset, backend=args.backend)
        batch = args.batch or 1024
    batches = rng.integers(0, n_train, size=(args.iterations, batch), dtype=np.uint32)
    print(f"digits {d0} vs {d1}: {n_train} training / {len(y_te)} held-out images, "
          f"{args.iterations} batches of {batch} drawn with replacement (seed {seed})")

    helr = th.Helr(ctx, batch=batch, iterations=args.iterations, sigmoid_degree=args.degree)
    print(helr.plan["text"], end="")
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    helr.generate_keys(keygen, sk)
    enc = th.Encryptor(ctx, keygen.public_key(sk))
    dec = th.Decryptor(ctx, sk)

    state = helr.initial_state(enc)
    for t in tqdm(range(args.iterations), desc="encrypted HELR", unit="it"):
        b = helr.encrypt_batch(enc, np.ascontiguousarray(x_tr[batches[t]]),
                               np.ascontiguousarray(y_tr[batches[t]]), t)
        helr.iterate(state, b)
    w_enc = np.array(helr.decrypt_weights(dec, state))

    w_ref = numpy_helr(x_tr, y_tr, batches, helr.sigmoid, 0.2, th.helr_eta_schedule(args.iterations))
    bits = -np.log2(np.max(np.abs(w_enc - w_ref)) / np.max(np.abs(w_ref)))
    acc = lambda w: float(np.mean(((x_te @ w) > 0) == (y_te == 1)))  # noqa: E731
    print(f"weights: encrypted vs numpy {bits:.1f} bits after {args.iterations} iterations "
          f"({helr.bootstraps} bootstrappings)")
    print(f"held-out accuracy: encrypted {acc(w_enc):.4f}, plaintext {acc(w_ref):.4f}")


if __name__ == "__main__":
    main()
