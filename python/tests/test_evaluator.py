"""Evaluator mechanisms and the Ciphertext operators."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import theodosian as th
from conftest import bits


def test_add_sub_negate(env) -> None:
    ev, x, y = env.evaluator, env.real(), env.real()
    a, b = env.encryptor.encrypt(x), env.encryptor.encrypt(y)
    dec = env.decryptor.decrypt
    assert bits(dec(ev.add(a, b)), x + y) > 15
    assert bits(dec(ev.sub(a, b)), x - y) > 15
    assert bits(dec(ev.negate(a)), -x) > 15
    c = a.copy()
    ev.add_inplace(c, b)
    assert bits(dec(c), x + y) > 15
    ev.sub_inplace(c, b)
    ev.negate_inplace(c)
    assert bits(dec(c), -x) > 15
    assert bits(dec(a), x) > 15  # inputs unchanged


def test_plain_and_const(env) -> None:
    ev, x, y = env.evaluator, env.real(), env.real()
    a = env.encryptor.encrypt(x)
    dec = env.decryptor.decrypt
    p = env.encoder.encode(y, level=a.level, scale=a.scale)
    assert bits(dec(ev.add_plain(a, p)), x + y) > 15
    assert bits(dec(ev.sub_plain(a, p)), x - y) > 15
    assert bits(dec(ev.add_const(a, 0.75)), x + 0.75) > 15
    z = dec(ev.add_const(a, 1j), real=False)
    assert bits(z, x + 1j) > 15
    m = ev.rescale(ev.multiply_plain(a, env.encoder.encode(y, level=a.level)))
    assert m.level == a.level - 1
    assert bits(dec(m), x * y) > 15
    k = ev.rescale(ev.multiply_const(a, -0.3))
    assert bits(dec(k), -0.3 * x) > 15
    kc = ev.rescale(ev.multiply_const(a, 0.5j))
    assert not kc.is_real and bits(dec(kc), 0.5j * x) > 15
    assert bits(dec(ev.multiply_integer(a, -3)), -3 * x) > 14
    i = ev.multiply_monomial(a, env.ctx.n // 2)  # X^(N/2): times i
    assert bits(dec(i), 1j * x) > 15
    c = a.copy()
    ev.add_const_inplace(c, 1.0)
    ev.multiply_const_inplace(c, 2.0)
    ev.rescale_inplace(c)
    assert bits(dec(c), 2 * (x + 1)) > 14


def test_multiply_relin_rescale(env) -> None:
    ev, x, y = env.evaluator, env.real(), env.real()
    a, b = env.encryptor.encrypt(x), env.encryptor.encrypt(y)
    dec = env.decryptor.decrypt
    t = ev.multiply_without_relin(a, b)
    assert t.size == 3
    assert bits(dec(t), x * y) > 15
    r = ev.relinearize(t)
    assert r.size == 2 and bits(dec(r), x * y) > 15
    ev.relinearize_inplace(t)
    assert t.size == 2
    m = ev.multiply(a, b)
    assert m.level == a.level and bits(dec(ev.rescale(m)), x * y) > 15
    s = ev.square(a)
    assert bits(dec(ev.rescale(s)), x * x) > 15
    mrr = ev.multiply_relin_rescale(a, b, relin_key=env.rlk)
    assert mrr.level == a.level - 1
    assert abs(mrr.scale / env.ctx.default_scale(a.level - 1) - 1) < 1e-9
    assert bits(dec(mrr), x * y) > 15


def test_level_down(env) -> None:
    ev, x = env.evaluator, env.real()
    a = env.encryptor.encrypt(x)
    d = ev.level_down(a, 1)
    assert d.level == 1 and bits(env.decryptor.decrypt(d), x) > 15
    ev.level_down_inplace(a, 2)
    assert a.level == 2
    assert a.level_down(0).level == 0


def test_rotations_and_conjugation(env) -> None:
    ev, x = env.evaluator, env.cplx()
    a = env.encryptor.encrypt(x)
    dec = env.decryptor.decrypt
    for r in (1, 2, 3, -1):
        assert bits(dec(ev.rotate(a, r)), np.roll(x, -r)) > 15
    assert bits(dec(ev.conjugate(a)), np.conj(x)) > 15
    outs = ev.rotate_hoisted(a, [1, 5, 3])
    for r, o in zip([1, 5, 3], outs):
        assert bits(dec(o), np.roll(x, -r)) > 15
    g = env.ctx.galois_element(2)
    assert g in env.gk and env.gk.has_rotation(2) and env.gk.has_conjugation
    assert bits(dec(ev.apply_galois(a, g)), np.roll(x, -2)) > 15
    c = a.copy()
    ev.rotate_inplace(c, 3, galois_keys=env.gk)
    assert bits(dec(c), np.roll(x, -3)) > 15


def test_operators(env) -> None:
    x, y = env.real(), env.real()
    a, b = env.encryptor.encrypt(x), env.encryptor.encrypt(y)
    dec = env.decryptor.decrypt
    p = env.encoder.encode(y, level=a.level, scale=a.scale)
    cases = [
        (a + b, x + y),
        (a - b, x - y),
        (-a, -x),
        (a + 2.5, x + 2.5),
        (2.5 + a, x + 2.5),
        (1 - a, 1 - x),
        (a - 1, x - 1),
        (a + y, x + y),
        (y + a, x + y),
        (y - a, y - x),
        (a - y, x - y),
        (a + p, x + y),
        (a - p, x - y),
        (a * b, x * y),
        (a * 0.5, 0.5 * x),
        (0.5 * a, 0.5 * x),
        (a * 3, 3 * x),
        (a * y, x * y),
        (y * a, x * y),
        (a * a * a, x**3),
        (a << 1, np.roll(x, -1)),
        (a >> 1, np.roll(x, 1)),
        (a.rotate(2), np.roll(x, -2)),
        ((a * b + a) << 1, np.roll(x * y + x, -1)),
        (a.square(), x * x),
        (np.float64(2.0) * a, 2 * x),
    ]
    for i, (ct, want) in enumerate(cases):
        assert isinstance(ct, th.Ciphertext), i
        assert bits(dec(ct), want) > 13, i
    assert (a * b).level == a.level - 1
    assert (a * 3).level == a.level
    c = a.copy()
    c += b
    c -= 1.0
    c *= 2
    assert bits(dec(c), 2 * (x + y - 1)) > 13
    with pytest.raises(TypeError):
        a + "text"  # noqa: B018
    with pytest.raises(TypeError):
        a << 1.5  # noqa: B018


def test_realness_tracking(env) -> None:
    a = env.encryptor.encrypt(env.real())
    assert a.is_real
    assert (a + 1j).is_real is False
    assert (a * a + a).is_real
    z = env.encryptor.encrypt(env.cplx())
    assert not (a + z).is_real
    assert env.decryptor.decrypt(a + z).dtype == np.complex128


def test_copy_and_serialize(env) -> None:
    x = env.real()
    a = env.encryptor.encrypt(x)
    for c in (a.copy(), copy.copy(a), copy.deepcopy(a)):
        assert c is not a and bits(env.decryptor.decrypt(c), x) > 15
    data = a.serialize()
    assert isinstance(data, bytes) and bytes(a) == data
    b = env.ctx.deserialize(data)
    assert b.level == a.level and bits(env.decryptor.decrypt(b, real=True), x) > 15
    b2 = th.Ciphertext.deserialize(env.ctx, data)
    assert b2.slots == a.slots
    sym = th.Encryptor(env.ctx, env.sk).encrypt(x)
    assert len(sym.serialize()) < 0.6 * len(data)  # seeded: about half
    with pytest.raises(th.ParameterError):
        env.ctx.deserialize(b"garbage")


def test_galois_keys_progress_and_add(env, capsys) -> None:
    keys = env.keygen.galois_keys(env.sk, [7], progress=False)
    assert len(keys) == 1 and keys.has_rotation(7) and not keys.has_rotation(8)
    env.keygen.add_galois_keys(env.sk, keys, rotations=[8, 9], conjugation=True, progress=True)
    assert len(keys) == 4 and keys.has_rotation(8) and keys.has_conjugation
    err = capsys.readouterr().err
    assert "Galois keys" in err or err == ""  # tqdm or the stderr bar
    assert env.ctx.galois_element(9) in keys.galois_elements
