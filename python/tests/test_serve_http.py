"""The HTTP API on a local Ray cluster (CPU backend, insecure test preset, HTTPS with a certificate
made for the run, loopback only): the acceptance run (64 concurrent HTTP clients x 10 jobs with a
worker killed mid-run: every job completes, those that failed with a clear error submitted again,
every result bit-identical to in-process evaluation, none lost), every refusal with its status
code and the limit it names, sessions and jobs isolated per API key, results by stream and by
chunked polling, and client input that never takes a worker down."""

from __future__ import annotations

import faulthandler
import http.client
import json
import os
import random
import shutil
import socket
import ssl
import subprocess
import threading
import time

import numpy as np
import pytest

import theodosian as th

if os.environ.get("CI") == "true":
    import ray  # CI installs Ray with Serve (python/run-tests): a missing one must fail
else:
    ray = pytest.importorskip("ray")
    pytest.importorskip("fastapi")

from theodosian import serve  # noqa: E402
from theodosian.serve import apikeys, circuits, frames  # noqa: E402
from theodosian.serve.http_app import openapi_schema  # noqa: E402

HANG_LIMIT_S = 900
MAX_BODY = 4 << 20
MAX_CTS = 8
JOBS = [("square", 2, {}), ("multiply", 2, {}), ("identity", 1, {}),
        ("rotate", 1, {"steps": [1]}), ("polynomial", 1, {"coeffs": [0.25, 0.5, 0.125]})]


def _ctx(preset: str = "test_n12") -> th.Context:
    return th.Context(preset, backend="cpu", allow_insecure=True, threads=1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _self_signed(folder: str) -> tuple[str, str]:
    cert, key = os.path.join(folder, "cert.pem"), os.path.join(folder, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


class Env:
    def __init__(self, url: str, cert: str, keyfile: str, keys: dict[str, str],
                 server: serve.Server, rng: np.random.Generator) -> None:
        self.url, self.cert, self.keyfile, self.keys = url, cert, keyfile, keys
        self.server, self.rng = server, rng
        self.port = int(url.rsplit(":", 1)[1])

    def client(self, name: str = "alice", **kw) -> serve.HttpClient:
        return serve.HttpClient(self.url, self.keys[name], ca_file=self.cert, **kw)

    def raw(self, method: str, path: str, body: bytes | None = None, key: str | None = "alice",
            headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
        """One request by hand: (status, headers, body)."""
        conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=60,
                                           context=ssl.create_default_context(cafile=self.cert))
        h = dict(headers or {})
        if key is not None:
            h["Authorization"] = f"Bearer {self.keys.get(key, key)}"
        try:
            conn.request(method, path, body=body, headers=h)
            resp = conn.getresponse()
            return resp.status, dict(resp.getheaders()), resp.read()
        finally:
            conn.close()

    def refused(self, method: str, path: str, status: int, body: bytes | None = None,
                key: str | None = "alice", limit: str | None = None,
                match: str = "") -> dict:
        got, headers, data = self.raw(method, path, body, key)
        assert got == status, (got, data[:300])
        err = json.loads(data)["error"]
        assert err["status"] == status and match in err["message"], err
        if limit is not None:
            assert err["limit"] == limit, err
        if limit in ("rate", "jobs_in_flight"):  # waiting helps: the answer says how long
            assert int(headers.get("retry-after", headers.get("Retry-After", "0"))) >= 1
        return err


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    faulthandler.dump_traceback_later(HANG_LIMIT_S, exit=True)
    seed = random.SystemRandom().randrange(2**32)
    print(f"test_serve_http: input seed {seed}")
    assert shutil.which("openssl"), "openssl makes the test's certificate"
    folder = str(tmp_path_factory.mktemp("http"))
    cert, tls_key = _self_signed(folder)
    keyfile = os.path.join(folder, "keys.json")
    keys = {name: apikeys.create(keyfile, name, limits)[0] for name, limits in (
        ("alice", {}), ("bob", {}), ("carol", {}), ("dave", {}),
        ("slow", {"requests_per_s": 0.2, "burst": 3}),
        ("one_job", {"jobs_in_flight": 1}),
        ("one_job_map", {"jobs_in_flight": 1}),  # its own: test_refusals_429 may hold one_job's
        ("one_session", {"sessions": 1}),
        ("tiny_keys", {"key_bytes": 1 << 20}),
        ("two_uploads", {"key_bytes": 5 << 20}),
        ("revoked", {}))}
    serve.init_ray(None, num_cpus=4, object_store_mb=256)
    try:
        # retries=0: a chunk on a worker that dies fails its job (503, named) and the client
        # submits it again; the Ray client's test covers the server's own retries.
        srv = serve.start(serve.ServerConfig(
            workers=2, backend="cpu", threads=1, allow_insecure=True, key_budget=256 << 20,
            max_queue=8, job_timeout_s=300.0, worker_start_timeout_s=120.0, retries=0))
        limits = serve.KeyLimits(jobs_in_flight=64, sessions=8, key_bytes=64 << 20,
                                 requests_per_s=1000.0, burst=1000)
        api = serve.start_http(serve.HttpConfig(
            port=_free_port(), api_keys=keyfile, tls_cert=cert, tls_key=tls_key,
            parameter_sets=("test_n12",), allow_insecure=True, max_body_bytes=MAX_BODY,
            max_upload_bytes=16 << 20, max_ciphertexts_per_job=MAX_CTS, key_limits=limits))
        assert api.url.startswith("https://127.0.0.1:")
        yield Env(api.url, cert, keyfile, keys, srv, np.random.default_rng(seed))
        api.stop()
        srv.stop()
    finally:
        ray.shutdown()
        faulthandler.cancel_dump_traceback_later()


def _keys(ctx: th.Context | None = None) -> serve.ClientKeys:
    return serve.ClientKeys.generate(ctx or _ctx(), rotations=[1])


def _encrypt(keys: serve.ClientKeys, rng, n: int) -> list[th.Ciphertext]:
    enc = keys.encryptor()
    return [enc.encrypt(rng.uniform(-1, 1, keys.context.slots)) for _ in range(n)]


def test_acceptance_64_clients_10_jobs_worker_killed(env: Env) -> None:
    n_clients, n_jobs, n_sessions = 64, 10, 8
    owners = ["alice", "bob", "carol", "dave"]
    keys = [_keys() for _ in range(n_sessions)]
    sessions = [env.client(owners[i % 4]).open_session(keys[i]) for i in range(n_sessions)]
    # Fresh inputs: a few per session, each job takes a random choice of them; expected results
    # are computed in-process once per (session, circuit, inputs).
    pool = [_encrypt(k, env.rng, 4) for k in keys]
    plan = [[(j % len(JOBS), tuple(int(x) for x in env.rng.choice(4, JOBS[j % len(JOBS)][1],
                                                                   replace=False)))
             for j in range(n_jobs)] for _ in range(n_clients)]
    results: dict[tuple[int, int], list[bytes]] = {}
    retried: list[str] = []
    errors: list[BaseException] = []
    done = [0]
    lock = threading.Lock()

    def client(i: int) -> None:
        s_index = i % n_sessions
        c = env.client(owners[s_index % 4], retries=4)
        session = c.session(sessions[s_index].id, keys[s_index])
        try:
            for j, (circ, picks) in enumerate(plan[i]):
                name, _, args = JOBS[circ]
                cts = [pool[s_index][p] for p in picks]
                for attempt in range(5):
                    try:
                        out = session.run(name, cts, args=args, timeout_s=240, retries=0)
                        break
                    except (serve.ServerUnavailableError, serve.BusyError) as exc:
                        with lock:
                            retried.append(f"{type(exc).__name__}: {exc}")
                        if attempt == 4:
                            raise
                        time.sleep(0.5)
                with lock:
                    assert (i, j) not in results
                    results[(i, j)] = [o.to_bytes() for o in out]
                    done[0] += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t0 = time.time()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(n_clients)]
    for t in threads:
        t.start()
    total = n_clients * n_jobs
    while done[0] < total // 4 and not errors and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    victim = ray.get(env.server.handle.worker_names.remote(), timeout=30)[0]
    ray.kill(ray.get_actor(victim, namespace=serve.NAMESPACE), no_restart=True)
    killed_at = done[0]
    for t in threads:
        t.join(timeout=600)
    wall = time.time() - t0
    assert not errors, repr(errors[0])
    # Nothing lost: every job of every client came back once.
    assert len(results) == total and killed_at < total
    want: dict[tuple[int, int, tuple[int, ...]], list[bytes]] = {}
    for (i, j), got in results.items():
        s_index = i % n_sessions
        circ, picks = plan[i][j]
        key = (s_index, circ, picks)
        if key not in want:
            name, _, args = JOBS[circ]
            want[key] = [w.to_bytes() for w in circuits.evaluate_in_process(
                name, keys[s_index].context, keys[s_index].session_keys(),
                [pool[s_index][p] for p in picks], args)]
        assert got == want[key], (i, j, JOBS[circ][0])
    # And the results decrypt to the plaintext computation.
    k = keys[0]
    sq = serve.HttpSession(env.client("alice"), sessions[0].id, k).run("square", pool[0][:1])
    x = k.decryptor().decrypt(pool[0][0])
    assert np.max(np.abs(k.decryptor().decrypt(sq[0]) - x * x)) < 1e-4
    m = env.server.metrics()
    print(f"http acceptance: {total} jobs in {wall:.1f} s, a worker killed after {killed_at}; "
          f"{len(retried)} jobs failed and were submitted again ({retried[:1]}); counters "
          f"{m['counters']}")
    assert m["counters"]["workers_lost"] >= 1
    # The jobs that had a chunk on the killed worker failed with an error that says so.
    assert len(retried) == m["counters"]["jobs_failed"]
    assert all("ServerUnavailableError" in r and "worker died" in r for r in retried), retried
    assert m["counters"]["jobs_completed"] >= total
    deadline = time.time() + 120
    while env.server.health()["workers_alive"] < 2 and time.time() < deadline:
        time.sleep(0.5)
    assert env.server.health()["status"] == "ok"
    for s in sessions:
        s.close()


def test_authentication_401_and_revocation(env: Env) -> None:
    for key in (None, "theo_nothex000000_" + "a" * 43, "theo_0123456789ab_" + "a" * 43,
                env.keys["alice"][:-1] + ("A" if env.keys["alice"][-1] != "A" else "B")):
        err = env.refused("GET", "/v1/health", 401, key=key)
        assert err["code"] == "unauthorized"
    # The schema and unknown paths too: every request is authenticated.
    env.refused("GET", "/v1/openapi.json", 401, key=None)
    env.refused("GET", "/nowhere", 401, key=None)
    assert env.refused("GET", "/nowhere", 404)["code"] == "not_found"
    assert env.raw("GET", "/v1/health", key="revoked")[0] == 200
    entry = next(k for k in apikeys.load(env.keyfile).values() if k.name == "revoked")
    apikeys.revoke(env.keyfile, entry.id)
    deadline = time.time() + 10
    while env.raw("GET", "/v1/health", key="revoked")[0] != 401 and time.time() < deadline:
        time.sleep(0.2)
    env.refused("GET", "/v1/health", 401, key="revoked")
    with pytest.raises(serve.AuthenticationError):
        env.client("revoked").health()
    # The key file keeps hashes only.
    assert env.keys["alice"] not in open(env.keyfile).read()


def test_sessions_and_jobs_are_isolated_per_key(env: Env) -> None:
    ka = _keys()
    alice = env.client("alice").open_session(ka)
    cts = _encrypt(ka, env.rng, 1)
    # Bob with Alice's session id gets what an unknown id gets.
    foreign = env.refused("GET", f"/v1/sessions/{alice.id}", 404, key="bob")
    unknown = env.refused("GET", "/v1/sessions/" + "x" * 43, 404, key="bob")
    assert foreign == unknown
    with pytest.raises(serve.SessionError):
        serve.HttpSession(env.client("bob"), alice.id, ka).run("square", cts)
    env.refused("DELETE", f"/v1/sessions/{alice.id}", 404, key="bob")
    job = alice.submit("square", cts)
    for path in (f"/v1/sessions/{alice.id}/jobs/{job.id}",
                 f"/v1/sessions/{alice.id}/jobs/{job.id}/stream"):
        env.refused("GET", path, 404, key="bob")
    # ... and Alice's session and job are untouched.
    want = circuits.evaluate_in_process("square", ka.context, ka.session_keys(), cts)
    assert [o.to_bytes() for o in job.result(60)] == [w.to_bytes() for w in want]
    assert alice.info()["jobs"] >= 1
    alice.close()
    env.refused("GET", f"/v1/sessions/{alice.id}", 404)


def _job_body(name: str, cts: list, args: dict | None = None, count: int | None = None) -> bytes:
    blobs = [c.to_bytes() if not isinstance(c, bytes) else c for c in cts]
    return frames.encode_bytes([{"circuit": name, "args": args or {},
                                 "count": len(blobs) if count is None else count}] + blobs)


def test_refusals_400_404_413_and_no_worker_crashes(env: Env) -> None:
    k = _keys()
    s = env.client("alice").open_session(k)
    cts = _encrypt(k, env.rng, 2)
    path = f"/v1/sessions/{s.id}/jobs"
    workers_before = env.server.metrics()["workers"]
    good = cts[0].to_bytes()
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 1
    cases = [
        (b"not frames", "frame magic"),
        (frames.encode_bytes([b"binary first"]), "starts with a JSON frame"),
        (frames.MAGIC + frames.header(frames.JSON, 5) + b"{oops", "not valid JSON"),
        (frames.MAGIC + bytes([7]) + bytes(8), "unknown frame kind"),
        (frames.MAGIC + frames.header(frames.JSON, 200_000) + b"[" * 200_000, "not valid JSON"),
        (_job_body("nope", cts), "no circuit named 'nope'"),
        (_job_body("rotate_sum", cts, {"width": 3}), "not a power of two"),
        (_job_body("polynomial", cts, {"coeffs": [1.0] * 65}), "65 elements"),
        (_job_body("square", cts, {"unexpected": 1}), "unknown arguments"),
        (_job_body("multiply", cts[:1]), "groups of 2"),
        (_job_body("square", cts, count=3), "announced 3"),
        (_job_body("square", [b"x" * 100]), "ciphertext 0"),
        (_job_body("square", [good[:-10]]), "ciphertext 0"),
        (_job_body("square", _encrypt(_keys(_ctx("test_n13")), env.rng, 1)),
         "other parameters"),
        (_job_body("square", cts)[:-5], "ends inside a frame"),
    ]
    for body, match in cases:
        env.refused("POST", path, 400, body, match=match)
    # Words that fail their checksum pass the header check and fail the job, not the worker.
    status, _, data = env.raw("POST", path + "?stream=true", _job_body("square", [bytes(
        flipped)]))
    assert status == 200
    last = frames.parse(data, 1 << 30)[-1]
    end = json.loads(bytes(last[1]))
    assert end["end"] and end["state"] == "failed" and end["error"]["status"] == 400, end
    with pytest.raises(serve.JobError, match="unknown arguments"):
        s.run("identity", cts[:1], args={"bad": 1})
    # 404: unknown session and job.
    env.refused("POST", "/v1/sessions/nope/jobs", 404, _job_body("square", cts))
    env.refused("GET", f"/v1/sessions/{s.id}/jobs/nope", 404)
    # 413: body, ciphertexts per job, upload bytes of a key.
    big = _job_body("identity", [good] * (MAX_BODY // len(good) + 1))
    env.refused("POST", path, 413, big, limit="body_bytes")
    env.refused("POST", path, 413, _job_body("identity", [good] * (MAX_CTS + 1)),
                limit="ciphertexts_per_job")
    env.refused("POST", "/v1/sessions", 413, k.upload.to_bytes(), key="tiny_keys",
                limit="key_bytes")
    env.refused("POST", "/v1/sessions", 413, b"x" * ((16 << 20) + 1), limit="upload_bytes")
    # Uploads: malformed, parameters not offered.
    meta = k.upload.metadata()
    env.refused("POST", "/v1/sessions", 400, frames.encode_bytes([meta, b"garbage" * 20]),
                match="bad magic")
    env.refused("POST", "/v1/sessions", 400, _keys(_ctx("test_n13")).upload.to_bytes(),
                match="not offered")
    env.refused("POST", "/v1/sessions", 400, frames.encode_bytes([meta]), match="two frames")
    env.refused("POST", "/v1/sessions", 400, frames.encode_bytes(
        [dict(meta, bootstrap={"slots": 3}), k.upload.payload]), match="power of two")
    env.refused("GET", f"/v1/sessions/{s.id}/jobs/x/results?have=-1", 400)
    # A key upload whose words are corrupt: the session opens (headers are fine), its first job
    # fails with the library's reason, and the worker stays.
    payload = bytearray(k.upload.payload)
    payload[len(payload) - 1000] ^= 1
    bad_id = json.loads(env.raw("POST", "/v1/sessions", frames.encode_bytes(
        [meta, bytes(payload)]))[2])["session"]
    with pytest.raises(serve.JobError, match="keys do not load"):
        serve.HttpSession(env.client("alice"), bad_id, k).run("square", cts[:1])
    env.client("alice").session(bad_id, k).close()
    # Nothing above took a worker down, and good jobs still run.
    after = env.server.metrics()["workers"]
    assert [w["worker_id"] for w in after] == [w["worker_id"] for w in workers_before]
    assert all(w["alive"] for w in after)
    want = circuits.evaluate_in_process("square", k.context, k.session_keys(), cts)
    assert [o.to_bytes() for o in s.run("square", cts)] == [w.to_bytes() for w in want]
    s.close()


def test_refusals_429(env: Env) -> None:
    k = _keys()
    # Rate: one request every 5 s, with a burst of 3.
    statuses = [env.raw("GET", "/v1/health", key="slow")[0] for _ in range(6)]
    assert statuses[:3] == [200] * 3 and 429 in statuses[3:]
    env.refused("GET", "/v1/health", 429, key="slow", limit="rate")
    with pytest.raises(serve.LimitError) as info:
        env.client("slow").health()
    assert info.value.limit == "rate" and info.value.status == 429
    # Jobs in flight: a submitted job holds its slot until its results are fetched.
    c = env.client("one_job")
    s = c.open_session(k)
    cts = _encrypt(k, env.rng, 1)
    job = s.submit("square", cts)
    env.refused("POST", f"/v1/sessions/{s.id}/jobs", 429, _job_body("square", cts),
                key="one_job", limit="jobs_in_flight")
    assert len(job.result(60)) == 1
    assert len(s.run("square", cts)) == 1  # the slot is free again
    # A client that leaves the stream of its submission early frees the slot too.
    conn = http.client.HTTPSConnection("127.0.0.1", env.port, timeout=60,
                                       context=ssl.create_default_context(cafile=env.cert))
    conn.request("POST", f"/v1/sessions/{s.id}/jobs?stream=true", body=_job_body("square", cts),
                 headers={"Authorization": f"Bearer {env.keys['one_job']}"})
    resp = conn.getresponse()
    assert resp.status == 200 and resp.read(8) == frames.MAGIC
    conn.close()
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            assert len(s.run("square", cts, retries=0)) == 1
            break
        except serve.LimitError:
            time.sleep(0.2)
    else:
        pytest.fail("the left stream's job kept its slot")
    s.close()
    # Sessions per key, and key bytes of a key's sessions together.
    c = env.client("one_session")
    s = c.open_session(k)
    env.refused("POST", "/v1/sessions", 429, k.upload.to_bytes(), key="one_session",
                limit="sessions")
    s.close()
    s = c.open_session(k)
    s.close()
    assert 2 * len(k.upload.payload) < 5 << 20 < 3 * len(k.upload.payload)
    c = env.client("two_uploads")
    opened = [c.open_session(k), c.open_session(k)]
    env.refused("POST", "/v1/sessions", 429, k.upload.to_bytes(), key="two_uploads",
                limit="key_bytes")
    for s in opened:
        s.close()
    c.open_session(k).close()


def test_polling_stream_metrics_schema(env: Env) -> None:
    c = env.client("carol")
    k = _keys()
    s = c.open_session(k)
    cts = _encrypt(k, env.rng, 6)
    want = [w.to_bytes() for w in circuits.evaluate_in_process("square", k.context,
                                                               k.session_keys(), cts)]
    # Chunked polling: GET results?have=k until the end frame.
    job = s.submit("square", cts)
    have, parts = 0, {}
    for _ in range(200):
        status, _, data = env.raw("GET", f"/v1/sessions/{s.id}/jobs/{job.id}/results?have="
                                  f"{have}", key="carol")
        assert status == 200
        got = frames.parse(data, 1 << 30)
        state = json.loads(bytes(got[-1][1]))
        entry = None
        for kind, payload in got[:-1]:
            if kind == frames.JSON:
                entry = json.loads(bytes(payload))
                parts[entry["chunk"]] = []
                have += 1
            else:
                parts[entry["chunk"]].append(bytes(payload))
        if state["end"]:
            break
    assert state["state"] == "done" and state["have"] == have
    assert [b for i in sorted(parts) for b in parts[i]] == want
    env.refused("GET", f"/v1/sessions/{s.id}/jobs/{job.id}", 404, key="carol")  # delivered
    # Chunks as they finish.
    job = s.submit("square", cts)
    seen = [(lo, hi, [o.to_bytes() for o in outs]) for (lo, hi), outs in job.chunks()]
    assert sum(hi - lo for lo, hi, _ in seen) == 6
    assert [b for _, _, outs in sorted(seen) for b in outs] == want
    # A dropped job answers 404 afterwards; host results.
    job = s.submit("square", cts[:1])
    job.cancel()
    env.refused("GET", f"/v1/sessions/{s.id}/jobs/{job.id}/stream", 404, key="carol")
    hosts = s.run("square", cts, host=True)
    assert all(isinstance(h, th.HostCiphertext) for h in hosts)
    assert [h.to_bytes() for h in hosts] == want
    # Health, catalogue, parameters, limits, metrics, the schema.
    assert c.health()["status"] == "ok"
    cat = {x["name"]: x for x in c.circuits()}
    assert cat["rotate_sum"]["args"]["required"] == ["width"]
    assert [p["name"] for p in c.parameters()] == ["test_n12"]
    assert c.limits()["ciphertexts_per_job"] == MAX_CTS
    text = c.metrics()
    assert "theodosian_up 1" in text and "theodosian_http_requests_total{" in text
    assert 'limit="rate"' in text and s.id not in text
    assert c.openapi() == openapi_schema()
    s.close()


def test_map_keeps_jobs_submitted_results_in_order(env: Env, monkeypatch) -> None:
    # One client, several jobs in flight (HttpSession.map): every job's results come back in the
    # order of its inputs, bit-identical to in-process evaluation, into a CPU host Context too;
    # the results of the jobs in flight download at once, each job's stream on a connection of
    # its own; with in_flight=1 a key allowed one job in flight runs the same loop (each job is
    # delivered, its slot free, before the next is submitted).
    c = env.client("dave")
    k = _keys()
    s = c.open_session(k)
    cts = _encrypt(k, env.rng, 8)
    batches = [cts[i:i + 2] for i in range(0, 8, 2)]
    want = [[w.to_bytes() for w in circuits.evaluate_in_process("square", k.context,
                                                                k.session_keys(), b)]
            for b in batches]
    # Each download waits (bounded) until as many as the jobs in flight were under way at once,
    # and counts the connections the downloads used.
    fetch = serve.HttpJob.result
    cond = threading.Condition()
    seen = {"now": 0, "most": 0, "meet": 1, "unmet": 0}
    conns: set[int] = set()

    def result(job, *a, **kw):
        with cond:
            seen["now"] += 1
            seen["most"] = max(seen["most"], seen["now"])
            cond.notify_all()
            if not cond.wait_for(lambda: seen["most"] >= seen["meet"], timeout=60):
                seen["unmet"] += 1
        try:
            out = fetch(job, *a, **kw)
            conns.add(id(c._local.conn))
            return out
        finally:
            with cond:
                seen["now"] -= 1

    monkeypatch.setattr(serve.HttpJob, "result", result)
    for n in (1, 2, 3):
        seen.update(most=0, meet=n)
        conns.clear()
        got = [[o.to_bytes() for o in outs] for outs in s.map("square", batches, in_flight=n)]
        assert got == want, n
        assert seen["unmet"] == 0 and seen["most"] == n and len(conns) == n, (n, seen, conns)
    monkeypatch.setattr(serve.HttpJob, "result", fetch)
    host_ctx = _ctx()
    outs = list(s.map("square", iter(batches), in_flight=2, host=True, host_context=host_ctx))
    assert all(isinstance(h, th.HostCiphertext) for o in outs for h in o)
    assert [[h.to_bytes() for h in o] for o in outs] == want
    one = env.client("one_job_map").open_session(k)
    assert [[o.to_bytes() for o in outs]
            for outs in one.map("square", batches, in_flight=1)] == want
    one.close()
    # Left early while jobs 1 and 2 download (job 0's download waits until all three are under
    # way): they are cancelled (their downloads end) or delivered; either way none is left on
    # the server.
    monkeypatch.setattr(serve.HttpJob, "result", result)
    seen.update(most=0, meet=3)
    jobs: list[serve.HttpJob] = []
    submit = serve.HttpSession.submit

    def record(self, *a, **kw):
        jobs.append(submit(self, *a, **kw))
        return jobs[-1]

    monkeypatch.setattr(serve.HttpSession, "submit", record)
    stream = s.map("square", batches, in_flight=3)
    assert [o.to_bytes() for o in next(stream)] == want[0]
    stream.close()
    assert len(jobs) == 3 and seen["unmet"] == 0 and seen["now"] == 0
    for job in jobs:
        with pytest.raises(serve.SessionError):
            job.status()
    s.close()
