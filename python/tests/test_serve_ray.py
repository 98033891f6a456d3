"""theodosian.serve on a local Ray cluster (CPU backend, insecure test preset): the acceptance
run (4 concurrent clients, 100 jobs, every result bit-identical to in-process evaluation, one
worker killed mid-run), session isolation, foreign parameters, back-pressure, user functions,
the asyncio API, bootstrapping, key eviction, and a server that goes away."""

from __future__ import annotations

import asyncio
import faulthandler
import os
import random
import threading
import time

import numpy as np
import pytest

import theodosian as th

if os.environ.get("CI") == "true":
    import ray  # CI installs Ray (python/run-tests): a missing Ray must fail, not skip
else:
    ray = pytest.importorskip("ray")

from theodosian import serve  # noqa: E402
from theodosian.serve import circuits, wire  # noqa: E402

# Whatever happens, the test process ends: a hang prints every thread's stack and exits.
HANG_LIMIT_S = 900


def _ctx(preset: str = "test_n12") -> th.Context:
    return th.Context(preset, backend="cpu", allow_insecure=True, threads=1)


def _config(**kw) -> serve.ServerConfig:
    base = dict(workers=2, backend="cpu", threads=1, allow_insecure=True,
                key_budget=512 << 20, max_queue=4,
                job_timeout_s=120.0, worker_start_timeout_s=120.0)
    base.update(kw)
    return serve.ServerConfig(**base)


@pytest.fixture(scope="module")
def cluster():
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
    seed = random.SystemRandom().randrange(2**32)
    print(f"test_serve_ray: input seed {seed}")
    serve.init_ray(None, num_cpus=4, object_store_mb=128)
    try:
        yield np.random.default_rng(seed)
    finally:
        ray.shutdown()
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def server(cluster):
    srv = serve.start(_config())
    yield srv
    srv.stop()


def _keys(ctx: th.Context | None = None, **kw) -> serve.ClientKeys:
    kw.setdefault("rotations", [1, 2])
    return serve.ClientKeys.generate(ctx or _ctx(), **kw)


def _encrypt(keys: serve.ClientKeys, rng, n: int) -> list[th.Ciphertext]:
    enc = keys.encryptor()
    return [enc.encrypt(rng.uniform(-1, 1, keys.context.slots)) for _ in range(n)]


JOBS = [("square", 3, {}), ("multiply", 4, {}), ("polynomial", 2, {"coeffs": [0.1, 0.5, 0.25]}),
        ("rotate", 2, {"steps": [1, 2]}), ("rotate_sum", 2, {"width": 4})]


def test_acceptance_four_clients_100_jobs_one_worker_killed(server, cluster) -> None:
    rng = cluster
    n_clients, n_jobs = 4, 100
    clients = [serve.Client() for _ in range(n_clients)]
    keys = [_keys() for _ in range(n_clients)]
    sessions = [c.open_session(k) for c, k in zip(clients, keys)]
    done = [0]
    lock = threading.Lock()
    results: list[tuple[int, str, list[th.Ciphertext], list[th.Ciphertext]]] = []
    errors: list[BaseException] = []

    def client(i: int) -> None:
        try:
            for j in range(n_jobs // n_clients):
                name, n, args = JOBS[(i + j) % len(JOBS)]
                cts = _encrypt(keys[i], rng, n)
                got = sessions[i].run(name, cts, args=args, timeout_s=120)
                with lock:
                    results.append((i, name, cts, got))
                    done[0] += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    # Kill one worker once a quarter of the jobs are back.
    while done[0] < n_jobs // 4 and not errors and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    victim = ray.get(server.handle.worker_names.remote(), timeout=30)[0]
    ray.kill(ray.get_actor(victim, namespace=serve.NAMESPACE), no_restart=True)
    killed_at = done[0]
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors[0]
    assert len(results) == n_jobs and killed_at < n_jobs
    # Every result bit-identical to the library in-process, with the client's own keys.
    for i, name, cts, got in results:
        args = next(a for n, _, a in JOBS if n == name)
        want = circuits.evaluate_in_process(name, keys[i].context, keys[i].session_keys(), cts,
                                            args)
        assert [g.serialize() for g in got] == [w.serialize() for w in want], name
    # And they decrypt to the plaintext computation.
    i, name, cts, got = next(r for r in results if r[1] == "square")
    dec = keys[i].decryptor()
    x = dec.decrypt(cts[0])
    assert np.max(np.abs(dec.decrypt(got[0]) - x * x)) < 1e-4
    m = clients[0].metrics()
    print("acceptance: killed a worker after", killed_at, "jobs; counters", m["counters"])
    assert m["counters"]["workers_lost"] >= 1
    assert m["counters"]["jobs_failed"] == 0
    assert m["counters"]["jobs_completed"] >= n_jobs
    # The dead worker is replaced.
    deadline = time.time() + 120
    while clients[0].health()["workers_alive"] < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert clients[0].health() ["status"] == "ok"
    for s in sessions:
        s.close()


def test_sessions_are_isolated(server, cluster) -> None:
    alice, bob = serve.Client(), serve.Client()
    ka, kb = _keys(), _keys()
    sa, sb = alice.open_session(ka), bob.open_session(kb)
    assert sa.id != sb.id and len(sa.id) >= 40
    cts = _encrypt(ka, cluster, 1)
    # Bob with Alice's session id: refused, and Alice's session keeps working.
    stolen = serve.Session(bob, sa.id, kb)
    with pytest.raises(serve.SessionError, match="not open for this client"):
        stolen.run("square", cts)
    with pytest.raises(serve.SessionError, match="not open for this client"):
        serve.Session(bob, "guessed-" + sa.id[8:], kb).run("square", cts)
    with pytest.raises(serve.SessionError):
        bob._call(bob._server.close_session.remote(sa.id, bob._token), "close")
    assert len(sa.run("square", cts)) == 1
    # Metrics never show session ids.
    assert sa.id not in str(alice.metrics())
    # A session's function is its own.
    sa.register_function("twice", lambda env, cts: [env.evaluator.add(c, c) for c in cts])
    out = sa.run("twice", cts)
    x = ka.decryptor().decrypt(cts[0])
    assert np.max(np.abs(ka.decryptor().decrypt(out[0]) - 2 * x)) < 1e-6
    with pytest.raises(serve.JobError, match="no circuit named 'twice'"):
        sb.run("twice", _encrypt(kb, cluster, 1))
    sa.close()
    with pytest.raises(serve.SessionError):
        sa.run("square", cts)
    sb.close()


def test_ciphertext_for_other_parameters_is_refused(server, cluster) -> None:
    c = serve.Client()
    k12 = _keys()
    s = c.open_session(k12)
    foreign = _encrypt(_keys(_ctx("test_n13")), cluster, 1)[0]
    # The client notices ...
    with pytest.raises(serve.JobError, match="made for other parameters"):
        s.run("square", [foreign])
    # ... and so does the server when the bytes come another way.
    refs = [ray.put(wire.encode(_encrypt(k12, cluster, 1)[0])), ray.put(wire.encode(foreign))]
    with pytest.raises(serve.JobError, match="ciphertext 1 was made for other parameters"):
        c._call(c._server.submit.remote(s.id, c._token, "square", {}, refs, True, 60), "job")
    assert len(s.run("square", _encrypt(k12, cluster, 1))) == 1
    s.close()


def test_busy_error_or_waiting(cluster) -> None:
    srv = serve.start(_config(workers=1, max_queue=1, max_waiting=1), name="theodosian-busy")
    try:
        c = serve.Client(name="theodosian-busy")
        k = _keys()
        s = c.open_session(k)

        def slow(env, cts, seconds):
            time.sleep(seconds)
            return cts

        s.register_function("slow", slow)
        cts = _encrypt(k, cluster, 1)
        first = s.submit("slow", cts, args={"seconds": 3.0})
        time.sleep(1.0)
        with pytest.raises(serve.BusyError, match="busy"):
            s.run("square", cts, wait=False)
        # wait=True queues until the worker is free
        assert len(s.run("square", cts, wait=True, timeout_s=60)) == 1
        assert len(first.result(60)) == 1
        assert c.metrics()["counters"]["busy_rejections"] >= 1
    finally:
        srv.stop()


def test_async_api_and_batch_split(server, cluster) -> None:
    c = serve.Client()
    k = _keys()
    s = c.open_session(k)
    cts = _encrypt(k, cluster, 6)

    async def main():
        return await asyncio.gather(*(s.run_async("square", cts[i:i + 3]) for i in (0, 3)))

    got = [ct for part in asyncio.run(main()) for ct in part]
    want = circuits.evaluate_in_process("square", k.context, k.session_keys(), cts)
    assert [g.serialize() for g in got] == [w.serialize() for w in want]
    job = s.submit("multiply", cts)
    out = job.result(60)
    assert len(out) == 3 and job.stats["chunks"] >= 1
    # Chunks of at most chunk_groups (4) operations pipeline on the workers; the results come
    # back in order, here as checked host ciphertexts.
    cts9 = _encrypt(k, cluster, 9)
    job = s.submit("square", cts9)
    hosts = job.result(60, host=True)
    assert job.stats["chunks"] >= 3
    assert all(isinstance(h, th.HostCiphertext) for h in hosts)
    want9 = circuits.evaluate_in_process("square", k.context, k.session_keys(), cts9)
    assert [h.to_bytes() for h in hosts] == [w.to_bytes() for w in want9]
    s.close()


def test_key_eviction_keeps_results_right(cluster) -> None:
    # A budget of one session's keys per worker: sessions evict each other.
    k1 = _keys()
    srv = serve.start(_config(workers=1, key_budget=k1.upload.nbytes + 1), name="theodosian-lru")
    try:
        c = serve.Client(name="theodosian-lru")
        k2 = _keys()
        s1, s2 = c.open_session(k1), c.open_session(k2)
        for _ in range(2):
            for k, s in ((k1, s1), (k2, s2)):
                cts = _encrypt(k, cluster, 2)
                got = s.run("multiply", cts)
                want = circuits.evaluate_in_process("multiply", k.context, k.session_keys(), cts)
                assert got[0].serialize() == want[0].serialize()
        keys = c.metrics()["workers"][0]["keys"]
        assert keys["evictions"] >= 3 and keys["sessions_on_device"] == 1
        assert keys["sessions_in_host_memory"] == 2
    finally:
        srv.stop()


def test_bootstrap_through_server(server, cluster) -> None:
    params = th.Parameters.generate(log_n=12, log_scale=40, levels=3, boot_levels=13,
                                    num_cts_levels=2, num_stc_levels=2)
    ctx = th.Context(params, backend="cpu", allow_insecure=True, threads=1)
    k = _keys(ctx, rotations=[], bootstrap={"slots": 32})
    s = serve.Client().open_session(k)
    x = cluster.uniform(-1, 1, 32)
    ct = k.encryptor().encrypt(x, level=0)
    got = s.run("bootstrap", [ct], timeout_s=300)[0]
    want = circuits.evaluate_in_process("bootstrap", ctx, k.session_keys(), [ct])[0]
    assert got.serialize() == want.serialize()
    assert np.max(np.abs(k.decryptor().decrypt(got) - x)) < 2**-12
    s.close()


def test_client_gets_an_error_when_the_server_goes_away(cluster) -> None:
    srv = serve.start(_config(workers=1), name="theodosian-doomed")
    c = serve.Client(name="theodosian-doomed", timeout_s=30)
    k = _keys()
    s = c.open_session(k)

    def stall(env, cts):
        time.sleep(600)
        return cts

    s.register_function("stall", stall)
    job = s.submit("stall", _encrypt(k, cluster, 1))
    time.sleep(1.0)
    ray.kill(srv.handle)
    t0 = time.time()
    with pytest.raises(serve.ServerUnavailableError):
        job.result(30)
    with pytest.raises(serve.ServerUnavailableError):
        s.run("square", _encrypt(k, cluster, 1), timeout_s=10)
    assert time.time() - t0 < 45
    with pytest.raises(serve.ServerUnavailableError, match="no theodosian server"):
        serve.Client(name="theodosian-doomed")
    # The controller's workers are its children in Ray's ownership: they go with it.
    for name in ("theodosian-doomed-w0",):
        try:
            ray.kill(ray.get_actor(name, namespace=serve.NAMESPACE))
        except ValueError:
            pass


def test_benchmark_records(cluster) -> None:
    from theodosian.serve import bench

    recs = bench.run_benchmark(preset="test_n12", ops=["hmult"], clients=[1, 2], gpus=1,
                               batch=2, jobs_per_client=lambda op, n: 2, allow_insecure=True,
                               backend="cpu", threads=1, key_budget=256 << 20,
                               transfer_repeats=2, log=lambda s: None)
    keys = {"op", "path", "clients", "gpus", "throughput_per_s", "p50_ms", "p99_ms", "device",
            "git_commit", "median_ms"}
    assert all(keys <= set(r) for r in recs)
    assert {(r["path"], r["clients"]) for r in recs if r["op"] == "hmult"} == {
        ("server", 1), ("in_process", 1), ("server", 2), ("in_process", 2)}
    assert all(r["identical_to_in_process"] for r in recs if r["path"] == "server"
               and r["op"] == "hmult")
    transfer = next(r for r in recs if r["op"] == "transfer")
    assert transfer["bytes"] > 0 and transfer["serialize_ms"] > 0
    assert all(r["throughput_per_s"] > 0 for r in recs if r["op"] == "hmult")


def test_benchmark_checks_every_result(cluster) -> None:
    from theodosian.serve import bench

    recs = bench.run_benchmark(preset="test_n12", ops=["hmult"], clients=[2], gpus=1, batch=2,
                               jobs_per_client=lambda op, n: 2, allow_insecure=True,
                               backend="cpu", threads=1, key_budget=256 << 20,
                               transfer_repeats=1, check_every_result=True, warmup_jobs=1,
                               in_process_load=False, log=lambda s: None)
    server = [r for r in recs if r["op"] == "hmult"]
    # No in-process load runs; every job's results (2 clients x (1 warm-up + 2 timed)) and the
    # correctness run's compared with in-process evaluation.
    assert [r["path"] for r in server] == ["server"]
    assert server[0]["identical_to_in_process"] is True
    assert server[0]["checked"] == "every job" and server[0]["checked_jobs"] == 2 * 3 + 1


def test_results_into_another_host_context(server, cluster) -> None:
    c = serve.Client()
    keys = _keys()
    s = c.open_session(keys)
    cts = _encrypt(keys, cluster, 2)
    # A second Context of the same parameters (a client's own, e.g. CPU where the session's is
    # CUDA) receives the same results.
    other = th.Context(keys.context.params, backend="cpu", allow_insecure=True, threads=1)
    want = [h.to_bytes() for h in s.run("square", cts, host=True)]
    got = s.run("square", cts, host=True, host_context=other)
    assert [h.to_bytes() for h in got] == want
    assert all(h.context == other for h in got)
    with pytest.raises(serve.JobError, match="host_context was made for other parameters"):
        s.run("square", cts, host=True, host_context=_ctx("test_n13"))
    assert len(s.run("square", cts)) == 2  # the session is still usable
    s.close()
