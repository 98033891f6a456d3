"""theodosian.serve without Ray: wire format, keys, key cache, circuits, the worker, and the
package working with Ray absent."""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import theodosian as th
from theodosian.serve import circuits, wire
from theodosian.serve.errors import JobError, RayMissingError
from theodosian.serve.keycache import KeyCache
from theodosian.serve.keys import (ClientKeys, SessionKeys, materialize, parameters_fingerprint,
                                   switching_key_bytes)
from theodosian.serve.worker import Worker


def _ctx(preset: str = "test_n12") -> th.Context:
    return th.Context(preset, backend="cpu", allow_insecure=True, threads=1)


@pytest.fixture(scope="module")
def client() -> ClientKeys:
    return ClientKeys.generate(_ctx(), rotations=[1, 2])


def _inputs(keys: ClientKeys, n: int) -> list[th.Ciphertext]:
    rng = np.random.default_rng()
    enc = keys.encryptor()
    return [enc.encrypt(rng.uniform(-1, 1, keys.context.slots)) for _ in range(n)]


def test_wire_round_trip_keeps_bits_and_realness(client: ClientKeys) -> None:
    ct = _inputs(client, 1)[0]
    back = wire.decode(client.context, wire.encode(ct))
    assert back.serialize() == ct.serialize() and back.is_real
    ct.is_real = False
    assert not wire.decode(client.context, wire.encode(ct)).is_real


def test_wire_refuses_other_parameters_and_garbage(client: ClientKeys) -> None:
    other = ClientKeys.generate(_ctx("test_n13"))
    blob = wire.encode(_inputs(other, 1)[0])
    with pytest.raises(JobError, match="ciphertext 5 was made for other parameters"):
        wire.decode(client.context, blob, index=5)
    with pytest.raises(JobError, match="not a serialized ciphertext"):
        wire.decode(client.context, b"\x01abc")
    good = wire.encode(_inputs(client, 1)[0])
    with pytest.raises(JobError, match="malformed"):
        wire.decode(client.context, wire.Blob(good.data[:200]))
    with pytest.raises(JobError, match="ciphertext 3: malformed"):
        wire.decode_host_batch(client.context, [good, good, good, wire.Blob(good.data[:-1])])


def test_wire_blob_travels_out_of_band_and_batches_keep_order(client: ClientKeys) -> None:
    cts = _inputs(client, 5)
    blobs = wire.encode_batch(cts)
    assert [b.data for b in blobs] == [ct.to_bytes() for ct in cts]
    # Protocol 5: the bytes leave the pickle as one buffer (Ray stores them without a copy).
    buffers: list = []
    data = pickle.dumps(blobs[0], protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1 and len(data) < 200
    back = pickle.loads(data, buffers=buffers)
    assert bytes(memoryview(back.data)) == blobs[0].data
    assert pickle.loads(pickle.dumps(blobs[0], protocol=4)).data == blobs[0].data
    # Host halves: the same bytes, then the same ciphertexts on the device.
    hosts = wire.decode_host_batch(client.context, blobs)
    assert [h.to_bytes() for h in hosts] == [b.data for b in blobs]
    assert [c.to_bytes() for c in wire.decode_batch(client.context, blobs)] == \
        [b.data for b in blobs]
    assert [h.to_device().to_bytes() for h in hosts] == [b.data for b in blobs]


def test_fingerprint_ignores_names_only() -> None:
    p = th.Parameters.preset("test_n12")
    assert parameters_fingerprint(p) == th.Context(p, backend="cpu",
                                                   allow_insecure=True).fingerprint
    q = th.Parameters.preset("test_n12")
    q.name, q.comment = "renamed", "other comment"
    assert parameters_fingerprint(p) == parameters_fingerprint(q)
    assert parameters_fingerprint(p) != parameters_fingerprint(th.Parameters.preset("test_n13"))
    assert switching_key_bytes(p) == p.dnum * 2 * (p.max_limbs + p.alpha) * p.n * 4


def test_upload_is_compact_and_validated(client: ClientKeys) -> None:
    up = client.upload
    # relin + 2 Galois keys, each about half its loaded size (the uniform halves are seeds)
    assert up.nbytes == 3 * switching_key_bytes(client.context.params)
    assert len(up.payload) < 0.6 * up.nbytes
    ctx = _ctx()
    with pytest.raises(JobError, match="truncated"):
        materialize(ctx, dataclasses.replace(up, payload=up.payload[:-100]))
    flipped = bytearray(up.payload)
    flipped[len(flipped) // 2] ^= 1
    with pytest.raises(JobError, match="the keys do not load"):
        materialize(ctx, dataclasses.replace(up, payload=bytes(flipped)))
    with pytest.raises(JobError, match="bad magic"):
        materialize(ctx, dataclasses.replace(up, payload=b"x" * 64))


def test_materialized_keys_equal_clients(client: ClientKeys) -> None:
    # Same keys on the server side: a product and a rotation are bit-identical.
    server_ctx = _ctx()
    server_keys = materialize(server_ctx, client.upload)
    cts = _inputs(client, 2)
    for name, args in (("multiply", {}), ("rotate", {"steps": [1, 2]})):
        want = circuits.evaluate_in_process(name, client.context, client.session_keys(), cts,
                                            args)
        got = circuits.evaluate_in_process(name, server_ctx, server_keys,
                                           [wire.decode(server_ctx, wire.encode(c))
                                            for c in cts], args)
        assert [g.serialize() for g in got] == [w.serialize() for w in want]
    with pytest.raises(JobError, match="other parameters"):
        materialize(_ctx("test_n13"), client.upload)


def _fake_keys(nbytes: int) -> SessionKeys:
    return SessionKeys(None, None, None, None, nbytes)


class _Upload:
    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.payload = b"x" * 10


def test_key_cache_lru_eviction_and_host_spill() -> None:
    cache = KeyCache(device_budget=250, host_budget=25)
    fetched = []

    def get(sid: str):
        def fetch():
            fetched.append(sid)
            return _Upload(100)
        return cache.get(sid, fetch, lambda up: _fake_keys(up.nbytes))

    assert get("a")[1] == [] and get("b")[1] == []
    assert get("a")[1] == []           # hit: a becomes most recent
    assert get("c")[1] == ["b"]        # b was least recently used
    assert cache.resident() == ["a", "c"]
    # Host memory holds two uploads (25 bytes), also least recently used first: b was dropped
    # from it too, so b is fetched again.
    get("b")
    assert fetched == ["a", "b", "c", "b"]
    st = cache.stats()
    assert st["evictions"] == 2 and st["device_key_bytes"] <= 250 and st["hits"] == 1
    with pytest.raises(JobError, match="exceed a worker's key budget"):
        cache.get("huge", lambda: _Upload(1000), lambda up: _fake_keys(up.nbytes))
    cache.drop("a")
    assert "a" not in cache.resident()


def test_worker_runs_jobs_and_reports_errors(client: ClientKeys) -> None:
    w = Worker("t0", backend="cpu", threads=1, allow_insecure=True)
    cts = _inputs(client, 4)
    job = {"session_id": "s", "fingerprint": client.upload.fingerprint,
           "params_json": client.upload.params_json, "key_ref": [client.upload],
           "circuit": "square", "args": {}, "inputs": wire.encode_batch(cts)}
    status, payload = w.run(job)
    want = circuits.evaluate_in_process("square", client.context, client.session_keys(), cts)
    assert [wire.decode(client.context, p).serialize() for p in payload] == \
        [c.serialize() for c in want]
    assert status["n_in"] == 4 and status["n_out"] == 4 and status["compute_s"] > 0
    with pytest.raises(JobError, match="no circuit named 'nope'"):
        w.run(dict(job, circuit="nope"))
    with pytest.raises(JobError, match="groups of 2"):
        w.run(dict(job, circuit="multiply", inputs=job["inputs"][:3]))
    with pytest.raises(JobError, match="'rotate_sum': argument 'width': 3 is not a power of two"):
        w.run(dict(job, circuit="rotate_sum", args={"width": 3}))
    with pytest.raises(JobError, match="circuit 'polynomial'"):
        w.run(dict(job, circuit="polynomial", args={"wrong": 1}))
    other = ClientKeys.generate(_ctx("test_n13"))
    bad = job["inputs"][:1] + [wire.encode(_inputs(other, 1)[0])]
    with pytest.raises(JobError, match="ciphertext 1 was made for other parameters"):
        w.run(dict(job, inputs=bad))
    st = w.stats()
    assert st["jobs_done"] == 1 and st["jobs_failed"] == 5 and 0 <= st["utilization"] <= 1
    # a failed job leaves the worker usable
    assert len(w.run(job)[1]) == 4


def test_circuit_registry() -> None:
    @circuits.circuit("test_double_units")
    def double(env, cts):
        """Adds each ciphertext to itself."""
        return [env.evaluator.add(c, c) for c in cts]

    assert "test_double_units" in circuits.names()
    assert circuits.get("test_double_units").doc == "Adds each ciphertext to itself."
    with pytest.raises(ValueError, match="already registered"):
        circuits.register_circuit("test_double_units", double)
    with pytest.raises(ValueError, match="arity"):
        circuits.register_circuit("x", double, arity=0)
    for name in ("identity", "square", "multiply", "polynomial", "rotate", "rotate_sum",
                 "bootstrap"):
        assert name in circuits.names()


def test_package_works_without_ray(tmp_path) -> None:
    # A meta-path hook makes `import ray` fail, as on a machine without Ray.
    code = textwrap.dedent("""
        import sys
        class NoRay:
            def find_spec(self, name, path=None, target=None):
                if name == "ray" or name.startswith("ray."):
                    raise ImportError("No module named 'ray' (blocked)")
                return None
        sys.meta_path.insert(0, NoRay())
        import numpy as np
        import theodosian as th
        from theodosian import serve
        ctx = th.Context("test_n12", backend="cpu", allow_insecure=True, threads=1)
        keys = serve.ClientKeys.generate(ctx)
        x = np.linspace(-1, 1, ctx.slots)
        ct = keys.encryptor().encrypt(x)
        y = keys.decryptor().decrypt(keys.evaluator().rescale(keys.evaluator().square(ct)))
        assert np.max(np.abs(y - x * x)) < 1e-4
        try:
            serve.Client()
        except serve.RayMissingError as exc:
            assert "pip install 'theodosian[serve]'" in str(exc)
        else:
            raise AssertionError("Client() without Ray must raise RayMissingError")
        assert "ray" not in sys.modules
        print("ok")
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    assert issubclass(RayMissingError, ImportError)


def test_load_generator_counts_and_percentiles() -> None:
    from theodosian.serve.bench import run_load

    calls = []

    def job(i: int) -> int:
        calls.append(i)
        time.sleep(0.001 * (i + 1))
        return 3

    res = run_load(job, clients=3, jobs_per_client=4)
    rec = res.record()
    assert res.jobs == 12 and res.ops == 36 and sorted(set(calls)) == [0, 1, 2]
    assert rec["p50_ms"] <= rec["p99_ms"] and rec["throughput_per_s"] > 0
    with pytest.raises(ZeroDivisionError):
        run_load(lambda i: 1 // 0, clients=2, jobs_per_client=1)


def test_cli_help_and_arguments(capsys) -> None:
    from theodosian.serve.__main__ import main

    for cmd in ([], ["start", "--help"], ["bench", "--help"]):
        with pytest.raises(SystemExit):
            main(cmd)
    out = capsys.readouterr()
    assert "--key-budget-mb" in out.out and "--clients" in out.out


def test_bench_jobs_per_op() -> None:
    from theodosian.serve.__main__ import parse_jobs

    assert parse_jobs("8") == {"": 8}
    assert parse_jobs("192,hmult=64") == {"": 192, "hmult": 64}
    assert parse_jobs("boot=4") == {"": 8, "boot": 4}
    for bad in ("x", "hmult=", "0", "boot=-1"):
        with pytest.raises(SystemExit, match="--jobs"):
            parse_jobs(bad)
