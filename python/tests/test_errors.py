"""C++ exceptions arrive as theodosian exceptions with the library's message."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th


def test_hierarchy() -> None:
    assert issubclass(th.Error, RuntimeError)
    for cls in (th.ParameterError, th.LevelError, th.ScaleError, th.ContextError):
        assert issubclass(cls, th.Error) and issubclass(cls, ValueError)
    assert issubclass(th.SecurityError, th.ParameterError)
    assert issubclass(th.MissingKeyError, th.Error) and issubclass(th.MissingKeyError, KeyError)
    assert issubclass(th.OutOfMemoryError, th.Error)
    assert issubclass(th.OutOfMemoryError, MemoryError)
    assert issubclass(th.BackendError, th.Error)
    assert th.Error.__module__ == "theodosian"
    assert str(th.MissingKeyError("no key")) == "no key"  # no KeyError quoting


def test_level_error(env) -> None:
    ct = env.encryptor.encrypt([1.0], level=0)
    with pytest.raises(th.LevelError, match="level 0"):
        env.evaluator.rescale(ct)
    with pytest.raises(ValueError):
        ct.rescale()
    with pytest.raises(th.LevelError):
        env.ctx.default_scale(999)
    with pytest.raises(th.Error):
        env.encoder.encode([1.0], level=999)


def test_scale_error(env) -> None:
    ct = env.encryptor.encrypt([1.0, 2.0])
    pt = env.encoder.encode([1.0, 2.0], level=ct.level, scale=ct.scale * 4)
    with pytest.raises(th.ScaleError) as info:
        env.evaluator.add_plain(ct, pt)
    assert "scale" in str(info.value)
    assert bits_ok(env, ct)  # failed call left the input unchanged


def bits_ok(env, ct) -> bool:
    return bool(np.allclose(env.decryptor.decrypt(ct)[:2], [1.0, 2.0], atol=1e-3))


def test_missing_keys(env) -> None:
    ctx = th.Context("test_n12", backend="cpu", allow_insecure=True)
    kg = th.KeyGenerator(ctx, seed=5)
    sk = kg.secret_key()
    ct = th.Encryptor(ctx, sk).encrypt([1.0, 2.0])
    assert ctx.relin_key is None and ctx.galois_keys is None
    with pytest.raises(th.MissingKeyError, match="relinearization"):
        ct * ct  # noqa: B018
    with pytest.raises(KeyError):
        th.Evaluator(ctx).multiply(ct, ct)
    with pytest.raises(th.MissingKeyError, match="Galois"):
        ct << 1  # noqa: B018
    ctx.galois_keys = kg.galois_keys(sk, [1])
    assert ctx.galois_keys is not None
    with pytest.raises(th.MissingKeyError) as info:  # raised by the C++ library
        ct << 2  # noqa: B018
    assert "rotation" in str(info.value)
    with pytest.raises(th.MissingKeyError):
        ct.conjugate()
    ctx.galois_keys = None
    assert ctx.galois_keys is None


def test_context_mixing(env) -> None:
    other = th.Context("test_n12", backend="cpu", allow_insecure=True)
    kg = th.KeyGenerator(other, seed=6)
    sk = kg.secret_key()
    foreign = th.Encryptor(other, sk).encrypt([1.0])
    mine = env.encryptor.encrypt([1.0])
    with pytest.raises(th.ContextError, match="another Context"):
        env.evaluator.add(mine, foreign)
    with pytest.raises(th.ContextError):
        mine + foreign  # noqa: B018
    with pytest.raises(th.ContextError):
        th.Decryptor(env.ctx, sk)
    # Same preset, same primes: a ciphertext moves between contexts through serialization.
    moved = env.ctx.deserialize(foreign.serialize())
    assert moved.context == env.ctx


def test_deserialize_other_primes(env, env13) -> None:
    data = env13.encryptor.encrypt([1.0]).serialize()
    with pytest.raises(th.Error):  # another ring degree / prime table
        env.ctx.deserialize(data)


def test_parameter_errors(env) -> None:
    with pytest.raises(th.ParameterError):
        th.KeyGenerator(env.ctx).sparse_secret_key()  # test_n12 has no sparse weight
    with pytest.raises(th.ParameterError, match="galois element"):
        env.keygen.add_galois_keys(env.sk, env.keygen.galois_keys(env.sk, []),
                                   galois_elements=[4])
