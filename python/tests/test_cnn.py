"""Encrypted-CNN building blocks (theodosian.TensorLayout, conv2d_matrix, CnnLinearLayer,
ResNetModel / ResNetInference) against numpy: the plaintext model of theodosian.cnn is the
reference, precision in bits."""

from __future__ import annotations

import os

import numpy as np
import pytest

import theodosian as th
from theodosian import cnn

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
TINY = os.path.join(ROOT, "examples", "models", "resnet8_tiny_digits.theocnn")
# The digits test split, committed (cnn.export_test_images): the tests need no scikit-learn.
TEST_IMAGES = os.path.join(ROOT, "examples", "models", "digits_test8x8.json")


def bits(got, want) -> float:
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return float("inf") if err == 0 else -np.log2(err)


@pytest.fixture(scope="module")
def rng():
    seed = int(np.random.SeedSequence().entropy % 2**32)
    print(f"[seed] test_cnn {seed}")
    return np.random.default_rng(seed)


def test_layout_roundtrip_and_conv_matrix_match_numpy(rng):
    lin = th.TensorLayout.dense(4, 16, 16, 2048)
    lout = lin.strided(2, 8)
    assert (lout.gap, lout.height, lout.width) == (2, 8, 8)
    x = rng.uniform(-1, 1, (4, 16, 16))
    np.testing.assert_array_equal(lin.unpack(lin.pack(x)), x)
    w = rng.uniform(-0.5, 0.5, (8, 4, 3, 3))
    m = th.conv2d_matrix(lin, lout, w, stride=2)
    dense = m.to_dense().real
    period = th.linear_output_period(lin, lout)
    y = dense @ lin.pack(x)
    # The matrix output repeats every `period` slots; replicate down to lout.period.
    p = period // 2
    while p >= lout.period:
        y = y + np.roll(y, -p)
        p //= 2
    want, _ = cnn.conv_forward(x[None], w, 2)
    np.testing.assert_allclose(lout.unpack(y), want[0], atol=1e-12)


def test_encrypted_conv_layer(rng):
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=3)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    lin = th.TensorLayout.dense(3, 16, 16, ctx.slots)
    lout = lin.strided(1, 4)
    w = rng.uniform(-0.3, 0.3, (4, 3, 3, 3))
    b = rng.uniform(-0.5, 0.5, 4)
    layer = th.CnnLinearLayer(ctx, th.conv2d_matrix(lin, lout, w),
                              th.conv2d_bias(lin, lout, w, b), ctx.default_encryption_level,
                              th.linear_output_period(lin, lout), lout)
    ctx.galois_keys = keygen.galois_keys(sk, layer.rotations())
    enc = th.Encryptor(ctx, keygen.public_key(sk))
    dec = th.Decryptor(ctx, sk)
    x = rng.uniform(0, 1, (3, 16, 16))
    out = layer.apply(enc.encrypt(lin.pack(x)))
    got = lout.unpack(dec.decrypt(out))
    want = cnn.conv_forward(x[None], w, 1)[0][0] + b[:, None, None]
    assert bits(got, want) > 18


def test_model_file_cpp_and_numpy_agree(rng):
    model = th.ResNetModel.load(TINY)
    ref = cnn.ResNet.load(TINY)
    assert model.widths == list(ref.config.widths)
    x = rng.uniform(0, 1, (3, model.image, model.image))
    np.testing.assert_allclose(model.logits(x), ref.logits(x[None])[0], atol=1e-9)


def test_resnet_inference_matches_plaintext_and_rejects_bad_input(rng):
    model = th.ResNetModel.load(TINY)
    # stem 2 + 3 blocks x 4 + head 1 = 15 levels: no bootstrapping at N = 2^12.
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=15)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    net = th.ResNetInference(ctx, model, bootstrap=False)
    assert net.bootstraps == 0 and net.steps[0] == "stem"
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    keys = net.generate_keys(keygen, sk)
    enc = th.Encryptor(ctx, keygen.public_key(sk))
    dec = th.Decryptor(ctx, sk)
    xte, _ = cnn.load_test_images(TEST_IMAGES, model.image, model.channels)
    seen = []
    img = xte[0].astype(np.float64)
    out = net.infer(net.encrypt(enc, img), keys, progress=lambda s, d, t: seen.append(s))
    assert seen == net.steps
    got = net.decrypt_logits(dec, out)
    want = model.logits(img)
    assert bits(got, want) > 12
    assert np.argmax(got) == np.argmax(want)
    with pytest.raises(th.ParameterError):
        net.encrypt(enc, np.zeros((3, 8, 8)))
    bad = img.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(th.ParameterError):
        net.encrypt(enc, bad)
    # Deeper than the parameters without bootstrapping: rejected when compiling.
    small = th.Context(th.Parameters.generate(log_n=12, log_scale=40, levels=6), backend="cpu",
                       allow_insecure=True)
    with pytest.raises(th.LevelError):
        th.ResNetInference(small, model, bootstrap=False)


def test_relu_model_file_cpp_and_numpy_agree(rng):
    # The papers' network (ReLU): the same logits from both readers; AppReLU's reference close.
    path = os.path.join(ROOT, "examples", "models", "resnet20_relu_narrow_mnist.theocnn")
    model = th.ResNetModel.load(path)
    ref = cnn.ResNet.load(path)
    assert model.activation_kind == "relu" and ref.config.activation == "relu"
    x = rng.uniform(0, 1, (3, model.image, model.image))
    np.testing.assert_allclose(model.logits(x), ref.logits(x[None])[0], atol=1e-9)
    assert len(model.act_max_inputs) == 19


def test_committed_test_images_are_the_digits_test_split():
    """examples/models/digits_test8x8.json is what cnn.export_test_images makes from scikit-learn's
    digits: load_test_images gives digits_dataset's test split exactly."""
    for image, channels in ((16, 3), (32, 3), (8, 1)):
        x, y = cnn.load_test_images(TEST_IMAGES, image, channels)
        _, _, xte, yte = cnn.digits_dataset(image, channels)
        np.testing.assert_array_equal(x, xte)
        np.testing.assert_array_equal(y, yte)


def test_load_test_images_rejects_other_files(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"size": 8, "max_value": 16, "images": [[1, 2, 3]], "labels": [0]}')
    with pytest.raises(ValueError, match="not an image file"):
        cnn.load_test_images(str(bad))
