"""The GIL is released during C++ calls: several Python threads evaluate at once with one Context."""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import theodosian as th
from conftest import bits


def test_threads_share_context(env13) -> None:
    e = env13
    ev = th.Evaluator(e.ctx)
    rng = np.random.default_rng(5)
    inputs = [(rng.uniform(-1, 1, e.ctx.slots), rng.uniform(-1, 1, e.ctx.slots)) for _ in range(6)]
    cts = [(e.encryptor.encrypt(x), e.encryptor.encrypt(y)) for x, y in inputs]

    def work(i: int) -> np.ndarray:
        a, b = cts[i]
        c = ev.multiply_relin_rescale(a, b)
        c = ev.add(c, ev.rescale(ev.multiply_const(a, 0.5)))
        c = ev.rotate(c, 1)
        d = (c * c) << 2
        return e.decryptor.decrypt(d)

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(len(cts))))
    for (x, y), got in zip(inputs, results):
        want = np.roll(np.roll(x * y + 0.5 * x, -1) ** 2, -2)
        assert bits(got, want) > 12


def test_gil_released_during_evaluation(env13) -> None:
    """While one thread runs C++ ops, another thread keeps running Python code."""
    e = env13
    a = e.encryptor.encrypt(e.real())
    t0 = time.perf_counter()
    e.evaluator.multiply(a, a)
    op_time = time.perf_counter() - t0

    done = threading.Event()

    def worker() -> None:
        for _ in range(8):
            e.evaluator.multiply(a, a)
        done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        gaps = []
        t = threading.Thread(target=worker)
        t.start()
        last = time.perf_counter()
        while not done.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        t.join()
    finally:
        sys.setswitchinterval(old)
    # With the GIL held during each op, the main thread would wake once per op (gaps ~ op_time).
    assert len(gaps) > 8
    assert float(np.median(gaps)) < op_time / 3, (np.median(gaps), op_time)
