"""Serialization from Python: to_bytes / from_bytes / save / load / pickle of every object, Galois key
subsets, EvaluationKeys, Context.for_parameters, unpickling in another process, validation errors
(type and words) and error messages that name the Python API."""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import theodosian as th

from conftest import bits


def same(a, b) -> bool:
    """Two objects serialize to the same bytes (expanded, so every word is compared)."""
    return a.to_bytes(compact=False) == b.to_bytes(compact=False)


@pytest.fixture(scope="module")
def objs(env):
    x = env.real()
    pt = env.encoder.encode(x)
    return {
        "PublicKey": env.pk,
        "RelinKey": env.rlk,
        "GaloisKeys": env.gk,
        "Plaintext": pt,
        "Ciphertext": env.encryptor.encrypt(x),
        "SeededCiphertext": th.Encryptor(env.ctx, env.sk).encrypt(x),
        "EvaluationKeys": th.EvaluationKeys(relin_key=env.rlk, galois_keys=env.gk),
    }


CLASSES = {
    "PublicKey": th.PublicKey,
    "RelinKey": th.RelinKey,
    "GaloisKeys": th.GaloisKeys,
    "Plaintext": th.Plaintext,
    "Ciphertext": th.Ciphertext,
    "SeededCiphertext": th.Ciphertext,
    "EvaluationKeys": th.EvaluationKeys,
}


@pytest.mark.parametrize("name", list(CLASSES))
def test_bytes_files_and_pickle_round_trip(env, objs, name, tmp_path) -> None:
    obj, cls = objs[name], CLASSES[name]
    for compact in (True, False):
        data = obj.to_bytes(compact=compact)
        back = cls.from_bytes(env.ctx, data)
        assert same(back, obj)
        assert cls.from_bytes(env.ctx, memoryview(data)).to_bytes(compact=compact) == data
        assert cls.from_bytes(env.ctx, bytearray(data)).to_bytes(compact=compact) == data
    path = tmp_path / f"{name}.bin"
    obj.save(path)
    assert same(cls.load(env.ctx, path), obj)
    assert same(cls.load(env.ctx, str(path)), obj)
    buf = io.BytesIO()
    obj.save(buf)
    buf.seek(0)
    assert same(cls.load(env.ctx, buf), obj)
    for protocol in (2, 4, 5):
        back = pickle.loads(pickle.dumps(obj, protocol=protocol))
        assert same(back, obj)
        assert back.context == env.ctx  # the process's Context for these parameters


def test_compact_sizes(env, objs) -> None:
    for name in ("PublicKey", "RelinKey", "GaloisKeys", "SeededCiphertext", "EvaluationKeys"):
        obj = objs[name]
        ratio = len(obj.to_bytes()) / len(obj.to_bytes(compact=False))
        assert ratio <= 0.55, (name, ratio)
    # Nothing to compact: the same bytes.
    assert objs["Ciphertext"].to_bytes() == objs["Ciphertext"].to_bytes(compact=False)


def test_real_hint_and_values_survive(env, objs) -> None:
    ct = objs["Ciphertext"]
    back = pickle.loads(pickle.dumps(ct))
    assert back.is_real and back.level == ct.level and back.scale == ct.scale
    assert np.array_equal(env.decryptor.decrypt(back), env.decryptor.decrypt(ct))
    pt = objs["Plaintext"]
    assert np.array_equal(th.Plaintext.from_bytes(env.ctx, pt.to_bytes()).decode(), pt.decode())


def test_secret_key_saves_but_does_not_pickle(env, tmp_path) -> None:
    path = tmp_path / "secret.key"
    env.sk.save(path)
    sk = th.SecretKey.load(env.ctx, path)
    assert np.array_equal(sk.coefficients(), env.sk.coefficients())
    ct = env.encryptor.encrypt([0.25, 0.5])
    assert np.array_equal(th.Decryptor(env.ctx, sk).decrypt(ct), env.decryptor.decrypt(ct))
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(env.sk)


def test_parameters_and_context(env, tmp_path) -> None:
    p = env.ctx.params
    assert len(p.fingerprint) == 64 and p.fingerprint == env.ctx.fingerprint
    assert th.Parameters.from_bytes(p.to_bytes()) == p
    assert pickle.loads(pickle.dumps(p)) == p
    p.save(tmp_path / "p.json")
    assert th.Parameters.load(tmp_path / "p.json") == p  # JSON text
    (tmp_path / "p.bin").write_bytes(p.to_bytes())
    assert th.Parameters.load(tmp_path / "p.bin") == p  # the binary form
    # One Context per fingerprint and process: the live one is found, pickles land on it.
    assert th.Context.for_parameters(p) == env.ctx
    assert pickle.loads(pickle.dumps(env.ctx)) == env.ctx
    renamed = th.Parameters.from_json(p.to_json())
    renamed.name = "other name"
    assert renamed.fingerprint == p.fingerprint


def test_galois_subsets(env) -> None:
    gk = env.gk
    data = gk.to_bytes()
    two = th.GaloisKeys.from_bytes(env.ctx, data, rotations=[1, 2])
    assert sorted(two.galois_elements) == sorted(
        [env.ctx.galois_element(1), env.ctx.galois_element(2)])
    conj = th.GaloisKeys.from_bytes(env.ctx, data, conjugation=True)
    assert conj.galois_elements == [env.ctx.conjugation_element]
    saved = gk.to_bytes(rotations=[3])
    assert th.serialized_info(saved)["galois_elements"] == [env.ctx.galois_element(3)]
    x = env.real()
    ct = env.encryptor.encrypt(x)
    one = th.GaloisKeys.from_bytes(env.ctx, saved)
    assert same(env.evaluator.rotate(ct, 3, galois_keys=one), env.evaluator.rotate(ct, 3))
    with pytest.raises(th.MissingKeyError, match="no key for Galois element"):
        th.GaloisKeys.from_bytes(env.ctx, saved, rotations=[1])
    with pytest.raises(th.MissingKeyError, match="no key for Galois element"):
        gk.to_bytes(rotations=[7])
    ek = th.EvaluationKeys(relin_key=env.rlk, galois_keys=gk)
    small = th.EvaluationKeys.from_bytes(env.ctx, ek.to_bytes(), rotations=[5])
    assert small.galois_keys.galois_elements == [env.ctx.galois_element(5)]
    assert small.relin_key is not None and small.bootstrapping_keys is None


def test_several_objects_in_one_file(env, objs) -> None:
    buf = io.BytesIO()
    objs["Ciphertext"].save(buf)
    env.rlk.save(buf)
    objs["SeededCiphertext"].save(buf)
    buf.seek(0)
    assert same(th.Ciphertext.load(env.ctx, buf), objs["Ciphertext"])
    assert same(th.RelinKey.load(env.ctx, buf), env.rlk)
    assert same(th.Ciphertext.load(env.ctx, buf), objs["SeededCiphertext"])
    assert buf.read() == b""


def test_validation_errors(env, objs) -> None:
    data = objs["Ciphertext"].to_bytes()
    with pytest.raises(th.ParameterError, match="truncated"):
        th.Ciphertext.from_bytes(env.ctx, data[:-1])
    with pytest.raises(th.ParameterError, match="trailing bytes"):
        th.Ciphertext.from_bytes(env.ctx, data + b"\0")
    bad = bytearray(data)
    bad[-200] ^= 4
    with pytest.raises(th.ParameterError, match="checksum mismatch"):
        th.Ciphertext.from_bytes(env.ctx, bad)
    with pytest.raises(th.ParameterError, match="more than the limit"):
        th.Ciphertext.from_bytes(env.ctx, data, max_bytes=1000)
    with pytest.raises(th.ParameterError, match="holds a ciphertext, not a relinearization key"):
        th.RelinKey.from_bytes(env.ctx, data)
    with pytest.raises(th.ParameterError, match="bad magic"):
        th.Ciphertext.from_bytes(env.ctx, b"\0" * 200)
    # The messages name the Python calls.
    with pytest.raises(th.ParameterError, match=r"^Ciphertext\.from_bytes / Ciphertext\.load:"):
        th.Ciphertext.from_bytes(env.ctx, data[:10])
    other = th.Context("test_n13", backend="cpu", allow_insecure=True)
    with pytest.raises(th.ContextError) as info:
        th.Ciphertext.from_bytes(other, data)
    assert env.ctx.fingerprint in str(info.value) and other.fingerprint in str(info.value)
    with pytest.raises(TypeError):
        th.Ciphertext.from_bytes(env.ctx, "not bytes")


def test_encoding_rejects_bad_values(env) -> None:
    with pytest.raises(th.ParameterError, match="value 1 is NaN"):
        env.encoder.encode([0.5, np.nan])
    with pytest.raises(th.ParameterError, match="value 0 is infinite"):
        env.encoder.encode([np.inf])
    # Level 2 of test_n12 has a 120-bit modulus: 1e30 * 2^35 = 2^134.7 does not fit.
    with pytest.raises(th.ParameterError, match=r"level 2 .* largest magnitude .* can encode"):
        env.encoder.encode([1e30, 0.5], level=2)
    with pytest.raises(th.ParameterError, match=r"^Encoder\.encode:"):
        env.encryptor.encrypt([1e300])


def test_missing_key_messages_name_python_calls(env) -> None:
    kg = th.KeyGenerator(env.ctx, seed=3)
    sk = kg.secret_key()
    ct = th.Encryptor(env.ctx, sk).encrypt([1.0])
    keys = kg.galois_keys(sk, [1])
    ev = th.Evaluator(env.ctx)
    with pytest.raises(th.MissingKeyError) as info:
        ev.conjugate(ct, galois_keys=keys)
    msg = str(info.value)
    assert "keygen.galois_keys(sk, conjugation=True)" in msg and "::" not in msg
    with pytest.raises(th.MissingKeyError) as info:
        ev.rotate(ct, 4, galois_keys=keys)
    assert "keygen.galois_keys(sk, [4])" in str(info.value)
    assert "keygen.add_galois_keys(sk, keys, rotations=[4])" in str(info.value)


def test_progress_bar(env, capsys) -> None:
    data = env.gk.to_bytes(progress=True)
    assert th.GaloisKeys.from_bytes(env.ctx, data, progress=True).galois_elements == \
        env.gk.galois_elements
    env.gk.to_bytes(progress=False)


def test_unpickle_in_another_process(env, objs, tmp_path) -> None:
    """A server process unpickles what a client pickled, evaluates, and sends it back."""
    x = env.real()
    ct = env.encryptor.encrypt(x)
    payload = pickle.dumps({"ct": ct, "keys": th.EvaluationKeys(relin_key=env.rlk,
                                                                galois_keys=env.gk)}, protocol=5)
    (tmp_path / "in.pkl").write_bytes(payload)
    server = textwrap.dedent(f"""
        import pickle, theodosian as th
        # Insecure test parameters need the explicit opt-in before unpickling.
        th.Context.for_parameters(th.Parameters.preset("test_n12"), backend="cpu",
                                  allow_insecure=True)
        job = pickle.loads(open({str(tmp_path / 'in.pkl')!r}, "rb").read())
        ev = th.Evaluator(job["ct"].context, relin_key=job["keys"].relin_key,
                          galois_keys=job["keys"].galois_keys)
        out = ev.rotate(ev.multiply_relin_rescale(job["ct"], job["ct"]), 1)
        open({str(tmp_path / 'out.pkl')!r}, "wb").write(pickle.dumps(out))
    """)
    env_vars = dict(os.environ)
    subprocess.run([sys.executable, "-c", server], check=True, env=env_vars, timeout=300)
    out = pickle.loads((tmp_path / "out.pkl").read_bytes())
    want = env.evaluator.rotate(env.evaluator.multiply_relin_rescale(ct, ct), 1)
    assert same(out, want)  # bit for bit
    assert bits(env.decryptor.decrypt(out), np.roll(x * x, -1)) > 15


def test_unpickling_insecure_parameters_needs_opt_in(env, tmp_path) -> None:
    payload = pickle.dumps(env.encryptor.encrypt([1.0]))
    (tmp_path / "ct.pkl").write_bytes(payload)
    code = f"import pickle; pickle.loads(open({str(tmp_path / 'ct.pkl')!r}, 'rb').read())"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0
    assert "SecurityError" in r.stderr and "allow_insecure=True" in r.stderr
