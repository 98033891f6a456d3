"""The HTTP API's parts without Ray: frame streams, circuit argument declarations, API keys,
limits and quotas, the server-side check of key uploads, the client's error mapping, the published
OpenAPI schema, and the client needing no Ray."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import theodosian as th
from theodosian import serve
from theodosian.serve import apikeys, argspec, circuits, frames
from theodosian.serve.errors import JobError, LimitError
from theodosian.serve.http_client import error_from
from theodosian.serve.keys import ClientKeys, switching_key_bytes, upload_from_request
from theodosian.serve.limits import HttpConfig, KeyLimits, OwnerQuotas, TokenBucket

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _ctx(preset: str = "test_n12") -> th.Context:
    return th.Context(preset, backend="cpu", allow_insecure=True, threads=1)


@pytest.fixture(scope="module")
def keys() -> ClientKeys:
    return ClientKeys.generate(_ctx(), rotations=[1, 2])


# ---- frames --------------------------------------------------------------------------------------
def test_frames_parse_in_any_pieces_and_refuse_bad_streams() -> None:
    rng = np.random.default_rng()
    blob = rng.bytes(int(rng.integers(1, 5000)))
    body = frames.encode_bytes([{"circuit": "square", "n": 1}, blob, b"", {"end": True}])
    for step in (1, 2, 7, 9, 64, len(body)):
        reader = frames.FrameReader(10_000)
        got = []
        for i in range(0, len(body), step):
            reader.feed(body[i:i + step])
            got += [(k, bytes(p)) for k, p in reader.frames()]
        reader.finish()
        assert got == [(frames.JSON, b'{"circuit":"square","n":1}'), (frames.BINARY, blob),
                       (frames.BINARY, b""), (frames.JSON, b'{"end":true}')]
    with pytest.raises(frames.FrameError, match="frame magic"):
        frames.parse(b"THEOFRM2" + body[8:], 10_000)
    with pytest.raises(frames.FrameError, match="ends inside a frame"):
        frames.parse(body[:-3], 10_000)
    with pytest.raises(frames.FrameError, match="empty body"):
        frames.parse(b"", 10_000)
    # A declared length over the limit is refused before its payload is kept.
    reader = frames.FrameReader(100)
    with pytest.raises(frames.FrameError, match="binary frame of 4294967296 bytes"):
        reader.feed(frames.MAGIC + frames.binary_frame_header(1 << 32) + b"x")
    with pytest.raises(frames.FrameError, match="JSON frame of"):
        frames.parse(frames.MAGIC + frames.header(frames.JSON, frames.MAX_JSON_BYTES + 1), 100)
    with pytest.raises(frames.FrameError, match="unknown frame kind"):
        frames.parse(frames.MAGIC + frames.header(ord("X"), 0), 100)
    with pytest.raises(frames.FrameError, match="not valid JSON"):
        frames.parse_json(b"{nope", "header")
    with pytest.raises(frames.FrameError, match="JSON object"):
        frames.parse_json(b"[1]", "header")
    # The blocking reader of the client.
    import io
    assert [(k, bytes(p)) for k, p in frames.read_frames(io.BytesIO(body).read, 10_000)][1] == \
        (frames.BINARY, blob)
    with pytest.raises(frames.FrameError, match="ended inside"):
        list(frames.read_frames(io.BytesIO(body[:-2]).read, 10_000))


# ---- circuit arguments ---------------------------------------------------------------------------
def test_circuit_arguments_are_declared_checked_and_published() -> None:
    poly = circuits.get("polynomial")
    assert poly.check_args({"coeffs": [1, 2.5]}) == {"coeffs": [1.0, 2.5], "a": -1.0, "b": 1.0}
    bad = [({}, "'coeffs' is required"), ({"coeffs": []}, "0 elements"),
           ({"coeffs": [1] * 65}, "65 elements"), ({"coeffs": ["1"]}, "a number was expected"),
           ({"coeffs": [True]}, "a number was expected"),
           ({"coeffs": [float("nan")]}, "finite"), ({"coeffs": [1e13]}, "above the maximum"),
           ({"coeffs": [1], "x": 1}, "unknown arguments"), ([1], "must be a JSON object")]
    for args, match in bad:
        with pytest.raises(JobError, match=match):
            poly.check_args(args)
    rs = circuits.get("rotate_sum")
    assert rs.check_args({"width": 8.0}) == {"width": 8}
    for w, match in ((6, "not a power of two"), (0, "below the minimum"),
                     (2.5, "an integer was expected"), (1 << 17, "above the maximum")):
        with pytest.raises(JobError, match=match):
            rs.check_args({"width": w})
    with pytest.raises(JobError, match="'rotate': argument 'steps': 33 elements"):
        circuits.get("rotate").check_args({"steps": list(range(33))})
    # Only declared circuits are offered over HTTP; their schema is JSON Schema.
    names = [c.name for c in circuits.http_catalogue()]
    assert names == sorted(names) and {"bootstrap", "square", "polynomial"} <= set(names)
    schema = poly.describe()["args"]
    assert schema["required"] == ["coeffs"] and schema["properties"]["coeffs"]["maxItems"] == 64
    circuits.register_circuit("undeclared_for_test", lambda env, cts: cts, replace=True)
    assert "undeclared_for_test" not in [c.name for c in circuits.http_catalogue()]
    with pytest.raises(ValueError, match="kind"):
        argspec.Arg("x", "string")


# ---- API keys ------------------------------------------------------------------------------------
def test_api_keys_are_random_shown_once_stored_hashed(tmp_path) -> None:
    path = str(tmp_path / "keys.json")
    key, entry = apikeys.create(path, "alice", {"requests_per_s": 5})
    key2, entry2 = apikeys.create(path, "bob")
    assert key.startswith("theo_") and len(key) == len("theo_") + 12 + 1 + 43
    assert key != key2 and entry.id != entry2.id
    text = open(path).read()
    assert key not in text and key.split("_", 2)[2] not in text and entry.sha256 in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    store = apikeys.KeyStore(path, recheck_s=0.0)
    assert store.verify(key).name == "alice" and store.verify(key).limits == {
        "requests_per_s": 5}
    for wrong in (None, "", "Bearer x", key[:-1] + ("a" if key[-1] != "a" else "b"),
                  key.replace(entry.id, entry2.id), key + "x"):
        assert store.verify(wrong) is None
    # Owner tokens differ per key and are not the key.
    assert entry.owner_token != entry2.owner_token and key.encode() != entry.owner_token
    # Revocation reaches a running store.
    apikeys.revoke(path, entry.id)
    time.sleep(0.01)
    os.utime(path, ns=(time.time_ns(), time.time_ns()))
    assert store.verify(key) is None and store.verify(key2).name == "bob"
    assert store.active() == 1
    with pytest.raises(apikeys.KeyFileError, match="no key with id"):
        apikeys.revoke(path, "0" * 12)
    with pytest.raises(apikeys.KeyFileError, match="unknown limits"):
        apikeys.create(path, "x", {"speed": 1})
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(apikeys.KeyFileError, match="not a theodosian API key file"):
        apikeys.load(str(bad))
    with pytest.raises(apikeys.KeyFileError, match="keys create"):
        apikeys.load(str(tmp_path / "missing.json"))


def test_keys_cli_creates_lists_revokes(tmp_path) -> None:
    path = str(tmp_path / "k.json")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    run = [sys.executable, "-m", "theodosian.serve", "keys"]
    out = subprocess.run(run + ["create", "--file", path, "--name", "ci", "--rate", "3"],
                         capture_output=True, text=True, env=env, check=True)
    key = out.stdout.strip()
    assert key.startswith("theo_") and "shown once" in out.stderr
    listed = subprocess.run(run + ["list", "--file", path], capture_output=True, text=True,
                            env=env, check=True).stdout
    kid = key.split("_")[1]
    assert kid in listed and "active" in listed and key not in listed
    subprocess.run(run + ["revoke", "--file", path, kid], check=True, env=env,
                   capture_output=True)
    assert "revoked" in subprocess.run(run + ["list", "--file", path], capture_output=True,
                                       text=True, env=env, check=True).stdout


# ---- limits --------------------------------------------------------------------------------------
def test_token_bucket_and_owner_quotas() -> None:
    bucket = TokenBucket(rate=1000.0, burst=3)
    for _ in range(3):
        bucket.take()
    with pytest.raises(LimitError) as info:
        bucket.take()
    assert info.value.limit == "rate" and info.value.status == 429 and info.value.retry_after_s
    time.sleep(0.01)
    bucket.take()
    q = OwnerQuotas()
    lim = KeyLimits(jobs_in_flight=2, sessions=2, key_bytes=100)
    with pytest.raises(LimitError) as info:
        q.admit_session("k", lim, 101)
    assert info.value.limit == "key_bytes" and info.value.status == 413
    q.admit_session("k", lim, 60)
    q.add_session("k", "s1", 60)
    with pytest.raises(LimitError) as info:
        q.admit_session("k", lim, 60)
    assert info.value.limit == "key_bytes" and info.value.status == 429
    q.add_session("k", "s2", 10)
    with pytest.raises(LimitError, match="open sessions") as info:
        q.admit_session("k", lim, 1)
    assert info.value.limit == "sessions"
    q.remove_session("k", "s1", 60)
    q.admit_session("k", lim, 60)
    q.admit_job("k", lim)
    q.admit_job("k", lim)
    with pytest.raises(LimitError) as info:
        q.admit_job("k", lim)
    assert info.value.limit == "jobs_in_flight"
    q.release_job("k")
    q.admit_job("k", lim)
    q.admit_job("other", lim)  # keys are counted apart
    # LimitError crosses processes with its fields.
    import pickle
    back = pickle.loads(pickle.dumps(info.value))
    assert (back.limit, back.status, back.maximum) == ("jobs_in_flight", 429, 2)
    assert KeyLimits().merged({"sessions": 3, "other": 1}).sessions == 3
    with pytest.raises(ValueError, match="TLS"):
        HttpConfig(tls_cert="c.pem")


def test_client_maps_refusals_to_exceptions() -> None:
    def err(status, **e):
        return error_from(status, {"error": {"message": "why", **e}}, "job")

    assert isinstance(err(401), serve.AuthenticationError)
    assert isinstance(err(404), serve.SessionError)
    assert isinstance(err(400), serve.JobError) and "job: why" in str(err(400))
    limit = err(413, limit="body_bytes", maximum=10, value=11)
    assert isinstance(limit, serve.LimitError) and limit.limit == "body_bytes"
    assert isinstance(err(429, limit="rate", retry_after_s=0.5), serve.LimitError)
    assert isinstance(err(503, code="busy"), serve.BusyError)
    assert isinstance(err(503, code="unavailable"), serve.ServerUnavailableError)
    with pytest.raises(ValueError, match="http"):
        serve.HttpClient("ftp://x", "k")
    # Nobody listens here: a clear error, not a hang.
    c = serve.HttpClient("http://127.0.0.1:9", "k", connect_timeout_s=2, retries=0)
    with pytest.raises(serve.ServerUnavailableError, match="cannot reach"):
        c.health()


# ---- key uploads checked by the server -----------------------------------------------------------
def test_key_upload_is_checked_against_the_offered_parameters(keys: ClientKeys) -> None:
    params = keys.context.params
    allowed = {params.fingerprint: params}
    up = keys.upload
    parsed = frames.parse(up.to_bytes(), 1 << 30)
    meta = frames.parse_json(parsed[0][1], "meta")
    got = upload_from_request(meta, parsed[1][1], allowed)
    # The loaded size is counted from the keys' headers, not taken from the client.
    assert got.nbytes == 3 * switching_key_bytes(params) == up.nbytes
    assert got.payload == up.payload and got.params_json == params.to_json()
    assert upload_from_request(dict(meta, relin=False), up.payload, allowed).nbytes == up.nbytes
    bad = [(dict(meta, format=2), "format"),
           (dict(meta, fingerprint="0" * 64), "not offered"),
           (dict(meta, relin="yes"), "'relin' must be true or false"),
           (dict(meta, rotations=[1 << 20]), "rotations"),
           (dict(meta, rotations="1"), "rotations"),
           (dict(meta, bootstrap={"slots": 3}), "not 0 or a power of two"),
           (dict(meta, bootstrap={"cts_levels": 1000}), "above the maximum"),
           (dict(meta, bootstrap={"evil": 1}), "unknown arguments"),
           (dict(meta, bootstrap={}), "bootstrapping keys were announced")]
    for m, match in bad:
        with pytest.raises(JobError, match=match):
            upload_from_request(m, up.payload, allowed)
    other = ClientKeys.generate(_ctx("test_n13"))
    with pytest.raises(JobError, match="not offered"):
        upload_from_request(other.upload.metadata(), other.upload.payload, allowed)
    # A part made for other parameters under this set's fingerprint.
    from theodosian.serve.keys import _pack, _unpack
    parts = {k: bytes(v) for k, v in _unpack(other.upload.payload).items()}
    with pytest.raises(JobError, match="other parameters"):
        upload_from_request(meta, _pack(parts), allowed)
    parts = {k: bytes(v) for k, v in _unpack(up.payload).items()}
    with pytest.raises(JobError, match="part 'relin' holds a GaloisKeys"):
        upload_from_request(meta, _pack({"relin": parts["galois"]}), allowed)
    with pytest.raises(JobError, match="trailing bytes"):
        upload_from_request(meta, _pack({"relin": parts["relin"] + b"xx"}), allowed)
    with pytest.raises(JobError, match="relinearization key was announced"):
        upload_from_request(meta, _pack({"galois": parts["galois"]}), allowed)


# ---- the schema and the client's dependencies ----------------------------------------------------
def test_published_openapi_schema_is_current() -> None:
    pytest.importorskip("fastapi")
    from theodosian.serve.http_app import openapi_schema

    schema = openapi_schema()
    with open(os.path.join(ROOT, "docs", "serve-openapi.json")) as f:
        assert json.load(f) == schema, ("docs/serve-openapi.json is stale: python -m "
                                         "theodosian.serve openapi --out docs/serve-openapi.json")
    paths = schema["paths"]
    assert {"/v1/sessions", "/v1/sessions/{session_id}/jobs", "/v1/metrics",
            "/v1/health"} <= set(paths)
    submit = paths["/v1/sessions/{session_id}/jobs"]["post"]
    assert {"400", "401", "404", "413", "429"} <= set(submit["responses"])


def test_http_client_needs_no_ray(tmp_path, keys: ClientKeys) -> None:
    # The client side imports neither Ray nor FastAPI.
    code = textwrap.dedent("""
        import sys
        import theodosian as th
        from theodosian import serve
        c = serve.HttpClient("http://127.0.0.1:9", "theo_x", retries=0, connect_timeout_s=1)
        keys = serve.ClientKeys.generate(th.Context("test_n12", backend="cpu",
                                                    allow_insecure=True))
        body = keys.upload.to_bytes()
        assert not {"ray", "fastapi", "starlette", "uvicorn"} & set(sys.modules), sorted(
            m for m in sys.modules if m.split(".")[0] in ("ray", "fastapi"))
        print("ok", len(body))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr[-2000:]


def test_key_upload_round_trips_as_frames(keys: ClientKeys) -> None:
    body = keys.upload.to_bytes()
    (k0, meta), (k1, payload) = frames.parse(body, 1 << 30)
    assert (k0, k1) == (frames.JSON, frames.BINARY) and bytes(payload) == keys.upload.payload
    assert json.loads(bytes(meta)) == {"format": 1, "fingerprint": keys.upload.fingerprint,
                                       "relin": True, "rotations": [1, 2],
                                       "conjugation": False, "bootstrap": None}
    assert dataclasses.replace(keys.upload, payload=b"").metadata() == keys.upload.metadata()


def test_metrics_are_valid_prometheus_text() -> None:
    from theodosian.serve.http_metrics import HttpCounters, prometheus_text

    m = {"health": {"status": "degraded", "workers": 2, "workers_alive": 1, "sessions": 3,
                    "uptime_s": 12.5},
         "counters": {"jobs_submitted": 7, "jobs_completed": 6, "workers_lost": 1},
         "queue_depth": 2, "jobs_open": 1, "jobs_running": 1,
         "latency_ms": {"p50": 120.0, "p99": 480.0, "samples": 6},
         "workers": [{"worker_id": "w0", "host": 'a"b', "alive": True, "inflight": 1,
                      "utilization": 0.5, "jobs_done": 4,
                      "keys": {"device_key_bytes": 10, "device_key_budget": 100,
                               "evictions": 0}},
                     {"worker_id": "w1", "host": "b", "alive": False, "inflight": 0}]}
    http = HttpCounters()
    http.count("POST", "/v1/sessions/{session_id}/jobs", 202)
    http.count("GET", "auth", 401)
    http.refused("rate")
    text = prometheus_text(m, http, "r1", active_keys=2)
    assert "theodosian_up 0.5" in text and 'host="a\\"b"' in text
    parser = pytest.importorskip("prometheus_client.parser")
    families = {f.name: f for f in parser.text_string_to_metric_families(text)}
    assert families["theodosian_workers_alive"].samples[0].value == 1
    reqs = families["theodosian_http_requests"].samples
    assert {s.labels["status"] for s in reqs} == {"202", "401"}
    assert families["theodosian_http_refusals"].samples[0].labels["limit"] == "rate"
    lat = families["theodosian_job_latency_seconds"].samples
    assert {s.labels.get("quantile") for s in lat if "quantile" in s.labels} == {"0.5", "0.99"}


# ---- Session.map: the next jobs stay submitted while the results of the jobs in flight come back
class _FakeJob:
    def __init__(self, session: "_FakeSession", batch: list[int]) -> None:
        self.session, self.batch = session, batch
        self.cancelled = threading.Event()

    def result(self, timeout_s=None, *, host=False, host_context=None) -> list[int]:
        """A download: counted while under way; waits (bounded) until `meet` downloads were
        under way at once, and, for a batch in `block`, until the job is cancelled."""
        s, first = self.session, self.batch[0]
        with s.cond:
            s.downloading += 1
            s.started.add(first)
            s.max_downloading = max(s.max_downloading, s.downloading)
            s.cond.notify_all()
            if not s.cond.wait_for(lambda: s.max_downloading >= s.meet, timeout=10):
                s.unmet += 1
        try:
            if first in s.block:
                assert self.cancelled.wait(10), "a blocked job was never cancelled"
                raise serve.SessionError("job: unknown job (cancelled, test)")
            if first in s.fail:
                with s.cond:  # fails once the next job's download is under way too
                    s.cond.wait_for(lambda: first + 1 in s.started, timeout=10)
                raise JobError("job: the circuit failed (test)")
            if first in s.lose:
                s.lose.discard(first)
                raise serve.ServerUnavailableError("result stream broken (test)")
            time.sleep(s.hold_s)
            return [2 * x for x in self.batch]
        finally:
            with s.cond:
                s.downloading -= 1
                s.outstanding -= 1

    def cancel(self) -> None:
        with self.session.cond:
            self.session.cancelled.append(self.batch[0])
        self.cancelled.set()


class _FakeSession(serve.session.ClientSession):
    """submit/run of a client without a server: counts the jobs submitted and not delivered and
    the downloads under way at once."""

    def __init__(self, lose: set[int] = frozenset(), *, meet: int = 1,
                 block: set[int] = frozenset(), fail: set[int] = frozenset(),
                 hold_s: float = 0.0) -> None:
        super().__init__(None, "s", dataclasses.make_dataclass("K", ["context", "upload"])(
            None, dataclasses.make_dataclass("U", ["fingerprint"])("f")))
        self.outstanding = self.max_outstanding = 0
        self.downloading = self.max_downloading = self.unmet = 0
        self.submitted: list[int] = []
        self.started: set[int] = set()  # the batches whose download began
        self.cancelled: list[int] = []
        self.reran: list[int] = []
        self.lose, self.block, self.fail = set(lose), set(block), set(fail)
        self.meet, self.hold_s = meet, hold_s
        self.submit_threads: set[str] = set()
        # submit runs on map's submitting thread, result on its fetching threads
        self.cond = threading.Condition()

    def submit(self, circuit, cts, *, args=None, timeout_s=None) -> _FakeJob:
        with self.cond:
            self.outstanding += 1
            self.max_outstanding = max(self.max_outstanding, self.outstanding)
            self.submitted.append(cts[0])
            self.submit_threads.add(threading.current_thread().name)
        return _FakeJob(self, list(cts))

    def run(self, circuit, cts, *, args=None, timeout_s=None, host=False, host_context=None):
        self.reran.append(cts[0])
        return [2 * x for x in cts]


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_session_map_keeps_in_flight_jobs_submitted_in_order(in_flight: int) -> None:
    # The first in_flight jobs' downloads wait for each other (meet): they must be under way at
    # once, each on a thread of its own, yet the results come back in the order of the batches.
    s = _FakeSession(lose={4}, meet=in_flight, hold_s=0.002)
    taken: list[int] = []

    def batches():
        for i in range(7):
            taken.append(i)
            yield [i, 10 + i]

    got = []
    for out in s.map("double", batches(), in_flight=in_flight):
        # Read lazily: never more than in_flight batches taken past the ones delivered (and so
        # never more than in_flight jobs' results held by map).
        assert len(taken) <= len(got) + in_flight
        assert len(s.submitted) <= len(got) + in_flight
        got.append(out)
    assert got == [[2 * i, 20 + 2 * i] for i in range(7)]
    assert s.unmet == 0 and s.max_downloading == in_flight
    assert s.max_outstanding <= in_flight
    assert s.submitted == list(range(7)) and len(s.submit_threads) == 1  # submitted in order
    assert s.reran == [4]  # the job whose results were lost ran again, through run()
    assert s.outstanding == 0 and s.downloading == 0 and s.cancelled == []
    with pytest.raises(ValueError, match="in_flight"):
        next(s.map("double", batches(), in_flight=0))


def test_session_map_one_in_flight_downloads_one_job_at_a_time() -> None:
    s = _FakeSession(hold_s=0.005)
    assert list(s.map("double", ([i] for i in range(4)), in_flight=1)) == [[0], [2], [4], [6]]
    assert s.max_downloading == 1 and s.max_outstanding == 1


def test_session_map_left_early_cancels_the_jobs_submitted_ahead() -> None:
    # Jobs 1 and 2 are downloading (blocked until cancelled; job 0's download waits until all
    # three are under way) when the loop is left: both are cancelled, their downloads end,
    # nothing runs again, and close() returns once they have.
    s = _FakeSession(block={1, 2}, meet=3)
    stream = s.map("double", ([i] for i in range(10)), in_flight=3)
    assert next(stream) == [0]
    stream.close()
    # in_flight counts the job being delivered: jobs 1 and 2 were submitted ahead of job 0's.
    assert s.submitted == [0, 1, 2] and sorted(s.cancelled) == [1, 2]
    assert s.downloading == 0 and s.outstanding == 0 and s.reran == []


def test_session_map_a_failed_job_raises_in_order_and_cancels_the_jobs_ahead() -> None:
    # Job 2 fails (not a lost connection: no rerun) while job 3 downloads: jobs 0 and 1 are
    # delivered first, then map raises the job's error; job 3, submitted ahead and blocked, is
    # cancelled.
    s = _FakeSession(fail={2}, block={3})
    got = []
    with pytest.raises(JobError, match="circuit failed"):
        for out in s.map("double", ([i] for i in range(6)), in_flight=2):
            got.append(out)
    assert got == [[0], [2]]
    assert s.cancelled == [3] and s.reran == [] and s.downloading == 0
    assert s.submitted == [0, 1, 2, 3]


def test_session_map_a_lost_job_runs_again_while_the_next_downloads() -> None:
    # Job 0's results are lost: it runs again (run()) on its fetching thread, job 1's download
    # under way meanwhile; the order of the results stays that of the batches.
    s = _FakeSession(lose={0}, meet=2)
    assert list(s.map("double", ([i] for i in range(3)), in_flight=2)) == [[0], [2], [4]]
    assert s.reran == [0] and s.unmet == 0


def test_bench_http_clients_warm_up_one_job_at_a_time_then_keep_jobs_in_flight() -> None:
    from theodosian.serve.bench import run_load
    from theodosian.serve.bench_http import _client_jobs

    sessions = [_FakeSession(meet=2), _FakeSession(meet=2)]  # two downloads at once
    last: dict[int, list[int]] = {}
    job = _client_jobs(sessions, "double", [1, 2], None, 2, 1, 3, last)
    res = run_load(job, clients=2, jobs_per_client=3, warmup=1)
    assert res.ops == 2 * 3 * 2 and len(res.latencies_s) == 6
    for s in sessions:
        # The warm-up job through run(), so nothing is in flight when the clock starts; then
        # one map over the timed jobs, two of them submitted at a time.
        assert s.reran == [1] and s.submitted == [1, 1, 1] and s.max_outstanding == 2
    assert last == {0: [2, 4], 1: [2, 4]}
