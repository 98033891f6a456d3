"""Encoder, Encryptor, Decryptor: numpy in and out."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th
from conftest import bits


def test_encode_decode_real(env) -> None:
    x = env.real()
    pt = env.encoder.encode(x)
    assert pt.level == env.ctx.default_encryption_level and pt.slots == env.ctx.slots
    assert pt.is_real
    y = env.encoder.decode(pt)
    assert y.dtype == np.float64 and y.shape == x.shape
    assert bits(y, x) > 25
    z = pt.decode(real=False)
    assert z.dtype == np.complex128


def test_encode_decode_complex_level_scale(env) -> None:
    x = env.cplx(64)
    pt = env.ctx.encode(x, level=1, scale=2.0**30)
    assert pt.level == 1 and pt.slots == 64 and pt.scale == 2.0**30 and not pt.is_real
    assert bits(pt.decode(), x) > 20


def test_encode_accepts_lists_ints_float32_and_pads(env) -> None:
    pt = env.encoder.encode([1, 2, 3])
    assert pt.slots == 4  # padded to a power of two
    assert bits(pt.decode(), [1, 2, 3, 0]) > 20
    pt = env.encoder.encode(np.arange(8, dtype=np.float32)[::2])  # non-contiguous, float32
    assert bits(pt.decode(), [0, 2, 4, 6]) > 20


def test_encode_rejects_bad_shapes(env) -> None:
    with pytest.raises(ValueError, match="one-dimensional"):
        env.encoder.encode(np.zeros((4, 4)))
    with pytest.raises(TypeError):
        env.encoder.encode(["a", object()])
    with pytest.raises(th.ParameterError):
        env.encoder.encode(np.zeros(env.ctx.slots * 2))


def test_encrypt_decrypt_public_and_secret(env) -> None:
    x = env.real()
    ct = env.encryptor.encrypt(x)
    assert ct.level == env.ctx.default_encryption_level and ct.size == 2 and ct.is_real
    assert not ct.is_seeded
    y = env.decryptor.decrypt(ct)
    assert y.dtype == np.float64
    assert bits(y, x) > 15
    sym = th.Encryptor(env.ctx, env.sk)
    assert sym.is_secret_key_mode
    cs = sym.encrypt(env.encoder.encode(x))
    assert cs.is_seeded
    assert bits(env.decryptor.decrypt(cs), x) > 15
    pt = env.decryptor.decrypt_plaintext(cs)
    assert bits(pt.decode(), x) > 15


def test_encrypt_complex_and_level(env) -> None:
    z = env.cplx(128)
    ct = env.encryptor.encrypt(z, level=2)
    assert ct.level == 2 and ct.slots == 128 and not ct.is_real
    out = env.decryptor.decrypt(ct)
    assert out.dtype == np.complex128 and bits(out, z) > 15
    assert env.decryptor.decrypt(ct, real=True).dtype == np.float64


def test_encrypt_plaintext_rejects_level(env) -> None:
    pt = env.encoder.encode([1.0])
    with pytest.raises(th.ParameterError):
        env.encryptor.encrypt(pt, level=1)


def test_encrypt_zero(env) -> None:
    ct = env.encryptor.encrypt_zero(level=1)
    assert ct.level == 1
    assert bits(env.decryptor.decrypt(ct), np.zeros(env.ctx.slots)) > 15


def test_seeded_determinism() -> None:
    outs = []
    for _ in range(2):
        ctx = th.Context("test_n12", backend="cpu", allow_insecure=True)
        kg = th.KeyGenerator(ctx, seed=b"\x01" * 32)
        sk = kg.secret_key()
        enc = th.Encryptor(ctx, kg.public_key(sk), seed=99)
        outs.append(enc.encrypt([0.5, 0.25]).serialize())
    assert outs[0] == outs[1]
    with pytest.raises(th.ParameterError, match="32 bytes"):
        th.KeyGenerator(ctx, seed=b"short")
    with pytest.raises(TypeError):
        th.KeyGenerator(ctx, seed=1.5)


def test_secret_key_coefficients(env) -> None:
    c = env.sk.coefficients()
    assert c.dtype == np.int32 and c.shape == (env.ctx.n,)
    assert set(np.unique(c)) <= {-1, 0, 1}
    assert int(np.count_nonzero(c)) == env.sk.hamming_weight
