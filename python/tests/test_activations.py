"""The composite minimax sign and AppReLU (theodosian.CompositeSign): the Remez fit, the
composite's error and depth in plaintext, and both evaluated on encrypted data (N = 2^12,
insecure test parameters) in bits."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th


def test_remez_fit_equioscillates():
    f = th.minimax_odd_sign(15, 2.0**-9)
    x = np.geomspace(2.0**-9, 1, 100001)
    err = np.abs(f.series(x) - 1)
    assert abs(err.max() - f.error) <= 1e-7 * f.error
    assert abs(abs(f.series(2.0**-9) - 1) - f.error) <= 1e-6 * f.error
    assert np.all(np.asarray(f.series.coeffs)[0::2] == 0)  # odd
    with pytest.raises(th.ParameterError):
        th.minimax_odd_sign(16, 0.1)
    with pytest.raises(th.ParameterError):
        th.minimax_odd_sign(15, 1.5)


def test_alpha13_composite_error_and_depth():
    s = th.CompositeSign.alpha13()
    assert s.degrees == [15, 15, 27] and s.depth == 13 and s.component_depths == [4, 4, 5]
    x = np.concatenate([np.geomspace(s.eps, 1, 20001), np.linspace(s.eps, 1, 20001)])
    err = max(np.max(np.abs(s(x) - 1)), np.max(np.abs(s(-x) + 1)))
    print(f"[sign] 15-15-27 on [2^-9, 1]: 2^{np.log2(err):.2f}")
    assert err <= 2.0**-13
    assert s.max_error(s.eps, 1.0) == pytest.approx(err, rel=0.05)
    # A fit of the user's choice: same depth, larger last degree, better.
    s31 = th.CompositeSign.fit([15, 15, 31], 2.0**-9)
    assert s31.depth == 13 and s31.error < s.error
    # AppReLU on [-B, B]: within B 2^-12 of ReLU.
    for bound in (1.0, 10.0):
        t = np.linspace(-bound, bound, 40001)
        e = np.max(np.abs(s.relu(t, bound) - np.maximum(t, 0)))
        print(f"[relu] AppReLU on [-{bound}, {bound}]: {e:.3g}")
        assert e <= bound * 2.0**-12
        assert s.relu_max_error(bound) >= e
    with pytest.raises(th.ParameterError):
        th.CompositeSign.fit([15, 14], 0.01)


def test_encrypted_sign_and_relu():
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=14)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    ctx.relin_key = keygen.relin_key(sk)
    enc, dec = th.Encryptor(ctx, keygen.public_key(sk)), th.Decryptor(ctx, sk)
    s = th.CompositeSign.alpha13()
    rng = np.random.default_rng()
    x = rng.uniform(-1, 1, ctx.slots)
    x[::2] = np.sign(x[::2]) * rng.uniform(s.eps, 8 * s.eps, x[::2].size)
    ct = enc.encrypt(x)
    sg = th.composite_sign(ct, s)
    assert sg.level == ct.level - 13
    got = dec.decrypt(sg)
    far = np.abs(x) >= s.eps
    err_sign = np.max(np.abs(got[far] - np.sign(x[far])))
    err_plain = np.max(np.abs(got - s(x)))
    relu = dec.decrypt(th.app_relu(ct, s))
    err_relu = np.max(np.abs(relu - s.relu(x)))
    print(f"[precision] sign vs sign 2^{np.log2(err_sign):.2f}, vs composite "
          f"{-np.log2(err_plain):.1f} bits, AppReLU vs plaintext {-np.log2(err_relu):.1f} bits")
    assert err_sign <= 2.0**-13
    assert -np.log2(err_plain) > 16
    assert -np.log2(err_relu) > 20
