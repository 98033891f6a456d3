"""Context.capture / Graph: a Python function of evaluator calls captured once and replayed gives
the words of eager execution (compared as serialized bytes), on new inputs too; the ablation
(graphs off) gives the same words; misuse raises clear errors and leaves the context usable."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th


def unit(ev: th.Evaluator, a: th.Ciphertext, b: th.Ciphertext, m: th.Plaintext):
    """A small static circuit: product, rotation, plaintext mask, two outputs."""
    t = ev.multiply_relin_rescale(a, b)
    r = ev.rotate(t, 1)
    masked = ev.rescale(ev.multiply_plain(ev.add(r, t), m))
    return masked, ev.sub(r, t)


def words(ct: th.Ciphertext) -> bytes:
    return ct.serialize()


def test_replay_is_bit_exact_with_eager_on_new_inputs(env):
    ev, enc = env.evaluator, env.encryptor
    a, b = enc.encrypt(env.cplx()), enc.encrypt(env.cplx())
    m = env.encoder.encode(env.real())
    g = env.ctx.capture(lambda: unit(ev, a, b, m), inputs=(a, b, m))
    assert g.captured
    assert g.kernel_count > 10 and g.node_count >= g.kernel_count
    for step in range(3):
        x, y = enc.encrypt(env.cplx()), enc.encrypt(env.cplx())
        mask = env.encoder.encode(env.real())
        out = g.run(x, y, mask)
        want = unit(ev, x, y, mask)
        assert [words(o) for o in out] == [words(w) for w in want], f"step {step}"
    # the outputs are the same objects every run, and decrypt to what the circuit computes
    assert g.run(x, y, mask)[0] is out[0]
    v = env.decryptor.decrypt(out[1])
    assert np.max(np.abs(v - env.decryptor.decrypt(want[1]))) < 1e-9


def test_set_input_and_replay(env):
    ev, enc = env.evaluator, env.encryptor
    a = enc.encrypt(env.real())
    g = env.ctx.capture(lambda: ev.add(ev.rotate(a, 2), a))
    out = g.outputs
    x = enc.encrypt(env.real())
    g.set_input(a, x)
    g.replay()
    assert words(out) == words(ev.add(ev.rotate(x, 2), x))
    with pytest.raises(th.LevelError):
        g.set_input(a, enc.encrypt(env.real(), level=1))
    with pytest.raises(th.ParameterError, match="no declared inputs"):
        g.run(x)
    with pytest.raises(TypeError):
        g.set_input(a, env.encoder.encode(env.real()))


def test_graphs_off_gives_the_same_words(env):
    ctx_off = th.Context("test_n12", backend="cpu", allow_insecure=True, graphs=False)
    kg = th.KeyGenerator(ctx_off, seed=7)
    sk = kg.secret_key()
    ev = th.Evaluator(ctx_off, relin_key=kg.relin_key(sk), galois_keys=kg.galois_keys(sk, [1]))
    enc = th.Encryptor(ctx_off, sk, seed=3)
    rng = np.random.default_rng(5)
    a, b = enc.encrypt(rng.uniform(-1, 1, 2048)), enc.encrypt(rng.uniform(-1, 1, 2048))
    m = th.Encoder(ctx_off).encode(rng.uniform(-1, 1, 2048))
    g = ctx_off.capture(lambda: unit(ev, a, b, m), inputs=(a, b))
    assert not g.captured and g.kernel_count == 0
    assert g.outputs is None  # the function runs only at replay when graphs are off
    first = g.run(a, b)
    assert [words(o) for o in first] == [words(w) for w in unit(ev, a, b, m)]
    x = enc.encrypt(rng.uniform(-1, 1, 2048))
    again = g.run(x, b)
    assert again[0] is first[0]
    assert [words(o) for o in again] == [words(w) for w in unit(ev, x, b, m)]


def test_host_work_inside_is_refused_and_the_context_stays_usable(env):
    ev, enc = env.evaluator, env.encryptor
    a = enc.encrypt(env.real())
    with pytest.raises(th.BackendError, match="while capturing"):
        env.ctx.capture(lambda: env.decryptor.decrypt(ev.add(a, a)))
    with pytest.raises(TypeError, match="must return a Ciphertext"):
        env.ctx.capture(lambda: 3)
    with pytest.raises(ZeroDivisionError):
        env.ctx.capture(lambda: 1 / 0)
    with pytest.raises(th.ContextError):
        env.ctx.capture(lambda: None, inputs=(3,))
    g = env.ctx.capture(lambda: ev.add(a, a))
    g.replay()
    assert words(g.outputs) == words(ev.add(a, a))


def test_capture_sequence_shares_scratch_and_replays_like_eager(env):
    ev, enc = env.evaluator, env.encryptor
    a, b = enc.encrypt(env.cplx()), enc.encrypt(env.cplx())
    m = env.encoder.encode(env.real())
    seq = env.ctx.capture_sequence()
    first = seq.capture(lambda: unit(ev, a, b, m), inputs=(a, b))
    mid = first.outputs[1]
    second = seq.capture(lambda: ev.multiply_relin_rescale(ev.rotate(mid, 3), mid))
    assert len(seq) == 2 and first.captured and second.captured
    assert seq.workspace_bytes > 0 and seq.free_bytes > 0
    for step in range(2):
        x, y = enc.encrypt(env.cplx()), enc.encrypt(env.cplx())
        first.run(x, y)
        second.replay()
        t = unit(ev, x, y, m)[1]
        assert words(second.outputs) == words(ev.multiply_relin_rescale(ev.rotate(t, 3), t)), step
    with pytest.raises(th.BackendError, match="already capturing"):
        env.ctx.capture(lambda: seq.capture(lambda: ev.add(a, a)))
    g = seq.capture(lambda: ev.add(a, a))  # the context and the sequence stay usable
    g.replay()
    assert words(g.outputs) == words(ev.add(a, a))
