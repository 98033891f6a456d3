#!/usr/bin/env python3
"""Encrypted ResNet-20 inference on one image, end to end: encrypt -> 19 convolutions, 19
quadratic activations, bootstrapping where the level planner puts it -> logits -> decrypt.

The model (examples/models/resnet20_digits.theocnn, trained by examples/resnet20_train.py on
scikit-learn's digits upscaled to 32x32x3) is the CIFAR ResNet-20 shape with the activation
act(x) = c0 + c1 x + c2 x^2 it was trained with, so the plaintext model is the exact reference.

    python examples/resnet20_inference.py                    # bootparam_40 (128-bit; for a GPU)
    python examples/resnet20_inference.py --tiny             # reduced network, N = 2^12 (CPU, insecure)

Needs `pip install -c python/constraints.txt '.[examples]'` (tqdm).
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
    ap.add_argument("--tiny", action="store_true", help="16x16 input, widths 4/8/16, N = 2^12")
    ap.add_argument("--preset", default="bootparam_40")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--image", type=int, default=0, help="index into the digits test split")
    ap.add_argument("--min-keys", action="store_true", help="less key / weight memory, slower")
    args = ap.parse_args()

    name = "resnet8_tiny_digits" if args.tiny else "resnet20_digits"
    model = th.ResNetModel.load(os.path.join(HERE, "models", name + ".theocnn"))
    if args.tiny:  # 8 user levels + bootstrapping levels at N = 2^12: NOT secure
        params = th.Parameters.generate(log_n=12, log_scale=40, levels=8, boot_levels=13,
                                        num_cts_levels=2, num_stc_levels=2)
        ctx = th.Context(params, backend=args.backend, allow_insecure=True)
    else:
        ctx = th.Context(args.preset, backend=args.backend)

    t = time.perf_counter()
    net = th.ResNetInference(ctx, model, min_keys=args.min_keys)  # plans, folds, encodes
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    keys = net.generate_keys(keygen, sk, progress=True)
    encryptor, decryptor = th.Encryptor(ctx, keygen.public_key(sk)), th.Decryptor(ctx, sk)
    print(net.describe().rstrip())
    print(f"setup: {time.perf_counter() - t:.1f} s")

    # The digits test split, committed beside the models (cnn.export_test_images).
    x_test, y_test = cnn.load_test_images(os.path.join(HERE, "models", "digits_test8x8.json"),
                                          model.image, model.channels)
    image = x_test[args.image].astype(np.float64)
    ct = net.encrypt(encryptor, image)  # the client's encrypted image
    t = time.perf_counter()
    with tqdm(total=len(net.steps), desc="encrypted ResNet", unit="step") as bar:
        out = net.infer(ct, keys, progress=lambda step, done, total: (
            bar.set_postfix_str(step), bar.update(1)))
    elapsed = time.perf_counter() - t
    logits = net.decrypt_logits(decryptor, out)

    want = model.logits(image)
    err = float(np.max(np.abs(logits - want)))
    print(f"inference: {elapsed:.2f} s, {net.bootstraps} bootstrapping(s)")
    print(f"label {y_test[args.image]}, encrypted class {int(np.argmax(logits))}, plaintext "
          f"class {int(np.argmax(want))}; logits precision {-np.log2(err):.1f} bits")


if __name__ == "__main__":
    main()
