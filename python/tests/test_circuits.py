"""Circuits: Chebyshev polynomials, linear transforms, EvalMod, bootstrapping."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th
from conftest import bits


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def test_chebyshev_series() -> None:
    p = th.chebyshev_fit(lambda v: float(sigmoid(v)), -6, 6, 15)
    assert p.degree == 15 and p.a == -6 and p.b == 6
    assert th.chebyshev_max_error(lambda v: float(sigmoid(v)), p) < 1e-3
    xs = np.linspace(-6, 6, 11)
    assert np.max(np.abs(p(xs) - sigmoid(xs))) < 1e-3
    assert abs(p(0.0) - 0.5) < 1e-3
    q = th.ChebyshevSeries([0.0, 1.0], -1, 1)  # T_1(x) = x
    assert q(0.25) == pytest.approx(0.25)
    assert th.PolynomialEvaluator.depth(15) == 4


def test_polynomial_evaluation(env13) -> None:
    e = env13
    x = e.rng.uniform(-6, 6, e.ctx.slots)
    ct = e.encryptor.encrypt(x)
    p = th.chebyshev_fit(lambda v: float(sigmoid(v)), -6, 6, 15)
    pe = th.PolynomialEvaluator(e.ctx)
    levels = pe.levels_consumed(ct, p)
    out = pe.evaluate(ct, p)
    assert out.level == ct.level - levels
    assert bits(e.decryptor.decrypt(out), p(x)) > 15
    unit = pe.affine_to_unit(ct, -6, 6)
    assert bits(e.decryptor.decrypt(unit), x / 6) > 15


def test_linear_transform(env13) -> None:
    e = env13
    n = 16
    m = e.rng.uniform(-1, 1, (n, n))
    dm = th.DiagonalMatrix.from_dense(m)
    assert dm.slots == n and len(dm.diagonals) == n
    assert np.allclose(dm.to_dense(), m)
    v = e.rng.uniform(-1, 1, n)
    assert np.allclose(dm.apply(v), m @ v)
    lt = th.LinearTransform(e.ctx, dm, e.ctx.default_encryption_level)
    keys = e.keygen.galois_keys(e.sk, lt.rotations())
    ct = e.encryptor.encrypt(v)
    out = lt.evaluate(ct, galois_keys=keys)
    assert out.level == ct.level - 1
    assert bits(e.decryptor.decrypt(out), m @ v) > 15
    # dense input and the @ operator (context keys)
    ident = th.LinearTransform(e.ctx, np.eye(n), e.ctx.default_encryption_level)
    assert ident.diagonal_count == 1
    assert bits(e.decryptor.decrypt(ident @ ct), v) > 15
    d = th.DiagonalMatrix(4, {0: [1, 1, 1, 1], 1: np.array([2.0, 0, 0, 0])})
    assert set(d.diagonals) == {0, 1}
    assert len(th.coeff_to_slot_matrices(16, 2)) == 2


def test_evalmod_params() -> None:
    p = th.EvalModParams()
    assert p.k_bound == 12 and p.depth > 0
    q = th.EvalModParams.derive(32, 12, 2, 9)
    assert q.depth <= 9 and q.k_bound == th.EvalModParams.bound_for(32, 12, 2)


@pytest.fixture(scope="module")
def boot_env():
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=3, boot_levels=13,
                                    num_cts_levels=2, num_stc_levels=2)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    kg = th.KeyGenerator(ctx, seed=11)
    sk = kg.secret_key()
    boot = th.Bootstrapper(ctx, slots=32)
    keys = boot.generate_keys(kg, sk, progress=False)
    return ctx, kg, sk, boot, keys


def test_bootstrap(boot_env) -> None:
    ctx, kg, sk, boot, keys = boot_env
    assert boot.slots == 32 and boot.input_level == 0 and boot.output_level > 0
    assert "EvalMod" in boot.describe()
    assert len(boot.rotations()) > 0 and keys.galois_keys.has_conjugation
    x = np.random.default_rng(3).uniform(-1, 1, 32)
    ct = th.Encryptor(ctx, kg.public_key(sk)).encrypt(x, level=0)
    out = boot.bootstrap(ct, keys)
    assert out.level == boot.output_level
    got = th.Decryptor(ctx, sk).decrypt(out)
    assert bits(got, x) > 12
    # the bootstrapped ciphertext computes on: its relin key works for a product
    ctx.relin_key = keys.relin_key
    assert bits(th.Decryptor(ctx, sk).decrypt(out * out), x * x) > 10


def test_bootstrap_message_ratio(boot_env) -> None:
    ctx, kg, sk, boot, keys = boot_env
    # 32 slots: the default ratio (7 + 15 - 5 bits) is capped at q0 / Delta_0, i.e. no scaling.
    assert 9.5 < boot.message_ratio_bits < 10.5
    scaled = th.Bootstrapper(ctx, slots=32, message_ratio_bits=8)
    assert abs(scaled.message_ratio_bits - 8) < 0.1
    assert "message ratio" in scaled.describe()
    x = np.random.default_rng(5).uniform(-1, 1, 32)
    ct = th.Encryptor(ctx, kg.public_key(sk)).encrypt(x, level=0)
    got = th.Decryptor(ctx, sk).decrypt(scaled.bootstrap(ct, keys))
    assert bits(got, x) > 12


def test_bootstrap_center(boot_env) -> None:
    ctx, kg, sk, boot, keys = boot_env
    x = 0.5 + 0.2 * np.random.default_rng().uniform(-1, 1, 32)
    ct = th.Encryptor(ctx, kg.public_key(sk)).encrypt(x, level=0)
    got = th.Decryptor(ctx, sk).decrypt(boot.bootstrap(ct, keys, center=0.5))
    assert bits(got, x) > 12
    with pytest.raises(th.ParameterError, match="center"):
        boot.bootstrap(ct, keys, center=float("nan"))
