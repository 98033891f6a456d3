#!/usr/bin/env python3
"""Encrypted logistic-regression inference on real data (scikit-learn's bundled digits dataset).

A plaintext model is trained with scikit-learn to tell two digits apart (3 vs 8 by default); the
test images are then encrypted and classified homomorphically:

  1. packing: each test image has 64 features (8 x 8 pixels, scaled to [0, 1]); a ciphertext holds
     slots / 64 images side by side;
  2. linear layer: multiply by the weights (tiled once per image, a plaintext), rescale, then sum
     each 64-slot block with log2(64) = 6 rotations and additions, so that slot 64 i holds w . x_i;
     add the bias;
  3. activation: a Chebyshev approximation of the sigmoid on [-B, B], evaluated with the
     PolynomialEvaluator;
  4. decrypt, read slot 64 i of every block, and compare with numpy / scikit-learn.

Precision is reported in bits (-log2 of the max absolute error). Needs scikit-learn (no download:
the digits dataset ships with it).

    python examples/logistic_regression.py [--preset n14_s40] [--backend auto|cpu|cuda]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import theodosian as th


def bits(got: np.ndarray, want: np.ndarray) -> float:
    err = float(np.max(np.abs(got - want)))
    return float("inf") if err == 0 else -np.log2(err)


def sigmoid(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", default="n14_s40", help="parameter preset (default n14_s40)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--digits", default="3,8", help="the two classes (default 3,8)")
    ap.add_argument("--degree", type=int, default=15, help="sigmoid polynomial degree")
    ap.add_argument("--insecure", action="store_true", help="allow parameter sets < 128 bits")
    args = ap.parse_args()

    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    # ---- plaintext model ---------------------------------------------------------------------
    d0, d1 = (int(v) for v in args.digits.split(","))
    data = load_digits()
    mask = (data.target == d0) | (data.target == d1)
    x_all = data.data[mask] / 16.0  # pixels 0..16 -> [0, 1]
    y_all = (data.target[mask] == d1).astype(int)
    x_train, x_test, y_train, y_test = train_test_split(
        x_all, y_all, test_size=0.3, random_state=0, stratify=y_all)
    model = LogisticRegression(C=0.5, max_iter=2000).fit(x_train, y_train)
    w, b = model.coef_[0], float(model.intercept_[0])
    features = w.size  # 64
    logits_ref = x_test @ w + b
    print(f"digits {d0} vs {d1}: {len(x_train)} training / {len(x_test)} test images, "
          f"{features} features; plaintext accuracy {model.score(x_test, y_test):.4f}")

    # ---- context and keys --------------------------------------------------------------------
    t0 = time.perf_counter()
    ctx = th.Context(args.preset, backend=args.backend, allow_insecure=args.insecure)
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    ctx.relin_key = keygen.relin_key(sk)
    block_rotations = [features >> (k + 1) for k in range(int(np.log2(features)))]  # 32..1
    ctx.galois_keys = keygen.galois_keys(sk, block_rotations)
    encryptor = th.Encryptor(ctx, keygen.public_key(sk))
    decryptor = th.Decryptor(ctx, sk)
    print(f"{ctx} ; keys in {time.perf_counter() - t0:.2f} s")

    # Sigmoid approximation on [-B, B], B covering the logits with margin.
    bound = float(np.ceil(np.max(np.abs(x_train @ w + b)) * 1.25))
    series = th.chebyshev_fit(lambda v: float(sigmoid(np.float64(v))), -bound, bound,
                              args.degree)
    approx_err = th.chebyshev_max_error(lambda v: float(sigmoid(np.float64(v))), series)
    print(f"sigmoid ~ Chebyshev degree {args.degree} on [-{bound:g}, {bound:g}]: "
          f"max error {approx_err:.2e} ({-np.log2(approx_err):.1f} bits)")
    poly = th.PolynomialEvaluator(ctx)

    # ---- encrypted inference -----------------------------------------------------------------
    per_ct = ctx.slots // features
    w_tiled = np.tile(w, per_ct)
    logits_enc, probs_enc = [], []
    t1 = time.perf_counter()
    for start in range(0, len(x_test), per_ct):
        batch = x_test[start:start + per_ct]
        packed = np.zeros(ctx.slots)
        packed[:batch.size] = batch.ravel()
        ct = encryptor.encrypt(packed)               # the client's encrypted images
        acc = ct * w_tiled                           # slot-wise w_j x_ij (one rescale)
        for r in block_rotations:                    # sum each 64-slot block into its slot 0
            acc = acc + (acc << r)
        logit = acc + b
        prob = poly.evaluate(logit, series)          # encrypted sigmoid
        idx = np.arange(len(batch)) * features
        logits_enc.append(decryptor.decrypt(logit)[idx])
        probs_enc.append(decryptor.decrypt(prob)[idx])
    elapsed = time.perf_counter() - t1
    logits_enc = np.concatenate(logits_enc)
    probs_enc = np.concatenate(probs_enc)

    probs_ref = model.predict_proba(x_test)[:, 1]
    pred_enc = (probs_enc > 0.5).astype(int)
    print(f"encrypted inference of {len(x_test)} images in {elapsed:.2f} s "
          f"({-(-len(x_test) // per_ct)} ciphertexts, {per_ct} images each)")
    print(f"linear layer  : precision vs numpy      {bits(logits_enc, logits_ref):6.2f} bits")
    print(f"probabilities : precision vs polynomial {bits(probs_enc, series(logits_ref)):6.2f} bits")
    print(f"probabilities : precision vs sklearn    {bits(probs_enc, probs_ref):6.2f} bits")
    print(f"encrypted predictions agree with sklearn on "
          f"{np.mean(pred_enc == model.predict(x_test)):.4f} of the images; "
          f"encrypted accuracy {np.mean(pred_enc == y_test):.4f}")


if __name__ == "__main__":
    main()
