"""Shared fixtures: one small insecure context (test preset, CPU backend) with keys, per session."""

from __future__ import annotations

import numpy as np
import pytest

import theodosian as th


def bits(got: np.ndarray, want: np.ndarray) -> float:
    """-log2 of the max absolute error (precision in bits)."""
    err = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
    return float("inf") if err == 0 else -float(np.log2(err))


ROTATIONS = [1, 2, 3, -1, 5]


class Env:
    """A context with every key the tests need (seeded, so runs are reproducible)."""

    def __init__(self, preset: str) -> None:
        self.ctx = th.Context(preset, backend="cpu", allow_insecure=True)
        self.keygen = th.KeyGenerator(self.ctx, seed=7)
        self.sk = self.keygen.secret_key()
        self.pk = self.keygen.public_key(self.sk)
        self.rlk = self.keygen.relin_key(self.sk)
        self.gk = self.keygen.galois_keys(self.sk, ROTATIONS, conjugation=True)
        self.ctx.relin_key = self.rlk
        self.ctx.galois_keys = self.gk
        self.encoder = th.Encoder(self.ctx)
        self.encryptor = th.Encryptor(self.ctx, self.pk)
        self.decryptor = th.Decryptor(self.ctx, self.sk)
        self.evaluator = th.Evaluator(self.ctx)
        self.rng = np.random.default_rng(1234)

    def real(self, n: int | None = None) -> np.ndarray:
        return self.rng.uniform(-1, 1, n or self.ctx.slots)

    def cplx(self, n: int | None = None) -> np.ndarray:
        n = n or self.ctx.slots
        return self.rng.uniform(-1, 1, n) + 1j * self.rng.uniform(-1, 1, n)


@pytest.fixture(scope="session")
def env() -> Env:
    return Env("test_n12")


@pytest.fixture(scope="session")
def env13() -> Env:
    return Env("test_n13")
