"""theodosian.convert: a PyTorch CIFAR ResNet state_dict (written here with numpy, in the common
layout: conv1, bn1, layer1.0.conv1, ..., linear) -> the library's model file, batch norm folded;
the converted model computes the source network's logits (a numpy re-implementation of the
PyTorch forward pass, option-A shortcuts padded on both sides or at the end); missing, extra and
misshapen tensors are refused by name."""

from __future__ import annotations

import os

import numpy as np
import pytest

from theodosian import cnn, convert

import theodosian as th

try:  # the C++ model reader, when the extension is built
    HAVE_CORE = th.ResNetModel is not None
except ImportError:  # pragma: no cover - without a built extension
    HAVE_CORE = False


def make_state_dict(rng, widths=(4, 8, 16), blocks=2, classes=10, channels=3, fc="linear"):
    sd = {"conv1.weight": rng.normal(0, 0.4, (widths[0], channels, 3, 3))}

    def bn(prefix, c):
        sd[prefix + ".weight"] = rng.uniform(0.5, 1.5, c)
        sd[prefix + ".bias"] = rng.normal(0, 0.2, c)
        sd[prefix + ".running_mean"] = rng.normal(0, 0.2, c)
        sd[prefix + ".running_var"] = rng.uniform(0.5, 1.5, c)
        sd[prefix + ".num_batches_tracked"] = np.array(100)

    bn("bn1", widths[0])
    cin = widths[0]
    for s, w in enumerate(widths):
        for b in range(blocks):
            pre = f"layer{s + 1}.{b}."
            sd[pre + "conv1.weight"] = rng.normal(0, np.sqrt(2 / (9 * cin)), (w, cin, 3, 3))
            bn(pre + "bn1", w)
            sd[pre + "conv2.weight"] = rng.normal(0, np.sqrt(2 / (9 * w)), (w, w, 3, 3))
            bn(pre + "bn2", w)
            cin = w
    sd[fc + ".weight"] = rng.normal(0, 0.3, (classes, widths[-1]))
    sd[fc + ".bias"] = rng.normal(0, 0.1, classes)
    return {k: v.astype(np.float32) for k, v in sd.items()}


def torch_like_forward(sd, x, pad, fc="linear", eps=1e-5):
    """The PyTorch CIFAR ResNet's eval-mode forward pass, in float64 numpy."""
    f = {k: v.astype(np.float64) for k, v in sd.items()}

    def bn(h, p):
        inv = 1 / np.sqrt(f[p + ".running_var"] + eps)
        return ((h - f[p + ".running_mean"][None, :, None, None]) * inv[None, :, None, None] *
                f[p + ".weight"][None, :, None, None] + f[p + ".bias"][None, :, None, None])

    def conv(h, w, stride):
        return cnn.conv_forward(h, f[w], stride)[0]

    relu = lambda h: np.maximum(h, 0)  # noqa: E731
    h = relu(bn(conv(x, "conv1.weight", 1), "bn1"))
    s = 1
    while f"layer{s}.0.conv1.weight" in f:
        b = 0
        while f"layer{s}.{b}.conv1.weight" in f:
            pre = f"layer{s}.{b}."
            stride = 2 if s > 1 and b == 0 else 1
            y = relu(bn(conv(h, pre + "conv1.weight", stride), pre + "bn1"))
            y = bn(conv(y, pre + "conv2.weight", 1), pre + "bn2")
            cout = y.shape[1]
            if stride == 1 and h.shape[1] == cout:
                sc = h
            else:
                sub = h[:, :, ::2, ::2]
                extra = cout - h.shape[1]
                lo, hi = (extra // 2, extra - extra // 2) if pad == "both" else (0, extra)
                sc = np.pad(sub, ((0, 0), (lo, hi), (0, 0), (0, 0)))
            h = relu(y + sc)
            b += 1
        s += 1
    pooled = h.mean(axis=(2, 3))
    return pooled @ f[fc + ".weight"].T + f[fc + ".bias"]


@pytest.fixture(scope="module")
def rng():
    seed = int(np.random.SeedSequence().entropy % 2**32)
    print(f"[seed] test_convert {seed}")
    return np.random.default_rng(seed)


@pytest.mark.parametrize("pad,fc", [("both", "linear"), ("end", "fc")])
def test_converted_model_computes_the_source_network(rng, tmp_path, pad, fc):
    sd = make_state_dict(rng, fc=fc)
    path = os.path.join(tmp_path, "resnet.npz")
    np.savez(path, **{"module." + k: v for k, v in sd.items()})  # DataParallel prefix too
    model = convert.load_pytorch_resnet(path, image=16, pad=pad)
    assert model.config.activation == "relu"
    assert model.config.widths == (4, 8, 16) and model.config.blocks == 2
    x = rng.uniform(0, 1, (4, 3, 16, 16))
    want = torch_like_forward(sd, x, pad, fc)
    got = model.logits(x)
    np.testing.assert_allclose(got, want, atol=1e-4 * np.max(np.abs(want)))
    # Folded: identity batch norms with eps 0.
    assert np.all(model.params["s1.b0.bn2.gamma"] == 1) and model.bn_eps == 0.0
    # Through the model file (float32 weights), numpy and C++ readers.
    out = os.path.join(tmp_path, "resnet.theocnn")
    model.meta["act_max_inputs"] = cnn.calibrate(model, x)
    model.save(out, dtype="f4")
    back = cnn.ResNet.load(out)
    np.testing.assert_allclose(back.logits(x), want, atol=1e-4 * np.max(np.abs(want)))
    if HAVE_CORE:
        cpp = th.ResNetModel.load(out)
        np.testing.assert_allclose(cpp.logits(x[0]), want[0], atol=1e-4 * np.max(np.abs(want)))


def test_bad_state_dicts_are_refused_by_name(rng):
    sd = make_state_dict(rng)

    def refused(changes, match, drop=()):
        bad = {k: v for k, v in sd.items() if k not in drop}
        bad.update(changes)
        with pytest.raises(ValueError, match=match):
            convert.convert_state_dict(bad)

    refused({}, r"missing tensor layer2\.1\.bn1\.running_var",
            drop=("layer2.1.bn1.running_var",))
    refused({"layer2.0.shortcut.0.weight": np.zeros((8, 4, 1, 1), np.float32)},
            r"unexpected tensor layer2\.0\.shortcut\.0\.weight \(projection shortcuts")
    refused({"head.weight": np.zeros(3, np.float32)}, r"unexpected tensor head\.weight")
    refused({"layer1.0.conv2.weight": np.zeros((4, 4, 5, 5), np.float32)},
            r"tensor layer1\.0\.conv2\.weight has shape "
            r"\(4, 4, 5, 5\), expected \(4, 4, 3, 3\)")
    refused({"linear.bias": np.full(10, np.nan, np.float32)},
            r"linear\.bias has a non-finite value")
    refused({"fc.weight": sd["linear.weight"], "fc.bias": sd["linear.bias"]},
            "exactly one of linear.weight and fc.weight")
    with pytest.raises(ValueError, match="unknown extension"):
        convert.read_state_dict("model.onnx")


def test_pt_files_with_pytorch(rng, tmp_path):
    torch = pytest.importorskip("torch")
    sd = make_state_dict(rng)
    path = os.path.join(tmp_path, "resnet.pt")
    torch.save({"state_dict": {k: torch.from_numpy(v) for k, v in sd.items()}}, path)
    model = convert.load_pytorch_resnet(path, image=16)
    x = rng.uniform(0, 1, (2, 3, 16, 16))
    want = torch_like_forward(sd, x, "both")
    np.testing.assert_allclose(model.logits(x), want, atol=1e-4 * np.max(np.abs(want)))
