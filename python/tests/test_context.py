"""Context creation, backend choice, properties."""

from __future__ import annotations

import pathlib

import pytest

import theodosian as th

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_context_properties(env) -> None:
    ctx = env.ctx
    assert ctx.n == 1 << 12 and ctx.log_n == 12 and ctx.slots == 1 << 11
    assert ctx.max_level == ctx.params.max_level
    assert 0 < ctx.default_encryption_level <= ctx.max_level
    assert ctx.backend_kind == "cpu" and ctx.backend.startswith("cpu")
    assert ctx.alpha >= 1 and ctx.dnum >= 1
    assert abs(ctx.default_scale(0) / 2.0**35 - 1) < 0.01
    assert ctx.log2_q(1) > ctx.log2_q(0)
    assert ctx.galois_element(1) == 5
    assert ctx.galois_element(0) == 1
    assert ctx.conjugation_element == 2 * ctx.n - 1
    assert ctx == env.ctx and hash(ctx) == hash(env.ctx)
    assert "test_n12" in repr(ctx)


def test_context_from_parameters_and_path() -> None:
    p = th.Parameters.generate(log_n=12, levels=2)
    ctx = th.Context(p, backend="cpu", allow_insecure=True, threads=1)
    assert ctx.max_level == p.max_level
    ctx2 = th.Context(REPO / "presets" / "test_n12.json", backend="cpu", allow_insecure=True)
    assert ctx2.n == 1 << 12
    assert ctx2 != ctx


def test_insecure_needs_opt_in() -> None:
    with pytest.raises(th.SecurityError) as info:
        th.Context("test_n12", backend="cpu")
    assert isinstance(info.value, ValueError) and isinstance(info.value, th.ParameterError)
    assert "128-bit" in str(info.value)


def test_64bit_set_refused() -> None:
    with pytest.raises(th.ParameterError, match="64-bit"):
        th.Context("bootparam_40_64bit", backend="cpu")


def test_bad_backend_name() -> None:
    with pytest.raises(th.ParameterError, match="backend"):
        th.Context("test_n12", backend="tpu", allow_insecure=True)


@pytest.mark.skipif(th.cuda_available(), reason="a GPU is present")
def test_cuda_backend_without_gpu() -> None:
    with pytest.raises(th.BackendError):
        th.Context("test_n12", backend="cuda", allow_insecure=True)


@pytest.mark.skipif(not th.cuda_available(), reason="no GPU")
def test_cuda_backend_matches_cpu() -> None:
    import numpy as np

    cpu = th.Context("test_n12", backend="cpu", allow_insecure=True)
    gpu = th.Context("test_n12", backend="cuda", allow_insecure=True)
    assert gpu.backend_kind == "cuda"
    x = np.linspace(-1, 1, cpu.slots)
    outs = []
    for ctx in (cpu, gpu):
        kg = th.KeyGenerator(ctx, seed=3)
        sk = kg.secret_key()
        ctx.relin_key = kg.relin_key(sk)
        enc = th.Encryptor(ctx, sk, seed=4)
        ct = enc.encrypt(x)
        outs.append(((ct * ct) + ct).serialize())
    assert outs[0] == outs[1]  # bit-exact across backends
