"""The HTTP API's routes (FastAPI): what each request does is in http_api.Api; this file names the
routes, documents them for the OpenAPI schema (GET /v1/openapi.json, docs/serve-openapi.json),
authenticates every request before routing, and turns every refusal into its status and JSON
body. Imported by the server only (it needs FastAPI)."""

import json
from typing import Any, Optional

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

import theodosian as th

from . import frames
from .errors import ServeError
from .http_api import Api, Refusal, refusal_of
from .http_metrics import CONTENT_TYPE as METRICS_TYPE
from .limits import LIMIT_NAMES

API_TITLE = "theodosian evaluation server"
_BINARY = {frames.MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}}


# JSON answers, for the schema (the handlers build them as dicts).
class ErrorDetail(BaseModel):
    status: int
    code: str = Field(description="unauthorized, not_found, bad_request, payload_too_large, "
                      "limit, busy, unavailable, internal")
    message: str
    limit: Optional[str] = Field(None, description="the limit that refused: "
                                 + ", ".join(LIMIT_NAMES))
    maximum: Optional[float] = None
    value: Optional[float] = None
    retry_after_s: Optional[float] = None


class ErrorBody(BaseModel):
    error: ErrorDetail


class Health(BaseModel):
    status: str = Field(description="ok, degraded or down")
    workers_alive: int
    workers: int
    sessions: int
    uptime_s: float


class CircuitEntry(BaseModel):
    name: str
    arity: int = Field(description="input ciphertexts per independent group")
    elementwise: bool
    doc: str
    args: dict = Field(description="JSON Schema of the job's args object")


class Catalogue(BaseModel):
    circuits: list[CircuitEntry]


class ParameterSet(BaseModel):
    name: str
    fingerprint: str
    log_n: int
    slots: int
    parameters: dict


class ParameterSets(BaseModel):
    parameter_sets: list[ParameterSet]


class SessionOpened(BaseModel):
    session: str
    parameters: str
    fingerprint: str
    key_bytes: int = Field(description="uploaded (compact) key bytes, counted against the key")
    loaded_key_bytes: int = Field(description="the keys' size once loaded on a worker")


class SessionInfo(BaseModel):
    session: str
    jobs: int
    key_bytes: int
    loaded_key_bytes: int
    fingerprint: str
    age_s: float


class JobAccepted(BaseModel):
    job: str
    inputs: int
    chunks: int


class JobState(BaseModel):
    job: str
    state: str = Field(description="running, done or failed")
    circuit: str
    inputs: int
    chunks: int
    chunks_done: int
    error: Optional[dict] = None
    seconds: Optional[float] = None
    compute_s: Optional[float] = None


def _error_response(ref: Refusal) -> Any:
    return JSONResponse(ref.body(), status_code=ref.status, headers=ref.headers())


class AuthMiddleware:
    """ASGI middleware in front of every route (the schema and unknown paths too): the API key
    (401), the key's rate limit (429), and the request counters."""

    def __init__(self, app: Any, api: Optional[Api]) -> None:
        self.app = app
        self.api = api

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.api is None:
            await self.app(scope, receive, send)
            return
        api = self.api
        status = [0]

        async def counting_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        auth = None
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                auth = value.decode("latin-1")
        try:
            key = api.authenticate(auth)
        except Exception as exc:  # noqa: BLE001 - answered as a refusal
            ref = refusal_of(exc)
            if ref.limit:
                api.counters.refused(ref.limit)
            await _error_response(ref)(scope, receive, counting_send)
            api.counters.count(scope.get("method", ""), "auth", status[0])
            return
        scope.setdefault("state", {})["api_key"] = key
        try:
            await self.app(scope, receive, counting_send)
        finally:
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            api.counters.count(scope.get("method", ""), route, status[0])


class SubmissionStream(StreamingResponse):
    """The result stream answering a submission (?stream=true): when the response is torn down
    before the job was delivered (the client left; the task was cancelled), the job is dropped
    here, without waiting for the stream's generator to be closed or collected."""

    def __init__(self, content: Any, on_close: Any) -> None:
        super().__init__(content, media_type=frames.MEDIA_TYPE)
        self.on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.on_close()


def build_app(api: Optional[Api]) -> Any:
    """The FastAPI application (api None: for the schema only)."""
    app = FastAPI(title=API_TITLE, version=th.__version__, openapi_url=None, docs_url=None,
                  redoc_url=None, description=(
                      "Encrypted jobs on a theodosian server. Every request needs an API key "
                      "(Authorization: Bearer theo_...). Binary bodies and results are frame "
                      f"streams ({frames.MEDIA_TYPE}: 'THEOFRM1', then frames of a kind byte "
                      "'J' (JSON) or 'B' (bytes), a little-endian u64 length and the payload). "
                      "Refusals are JSON {error: {status, code, message, limit, maximum, "
                      "value}}. See docs/serve.md."))
    app.add_middleware(AuthMiddleware, api=api)

    def need_api() -> Api:
        if api is None:
            raise Refusal(503, "unavailable", "this application serves its schema only")
        return api

    def key_of(request: Request) -> Any:
        return request.state.api_key

    async def on_refusal(request: Request, exc: Exception) -> Any:
        ref = refusal_of(exc)
        if ref.limit and api is not None:
            api.counters.refused(ref.limit)
        return _error_response(ref)

    for exc_type in (Refusal, ServeError, th.Error, frames.FrameError, TimeoutError,
                     ConnectionError):
        app.add_exception_handler(exc_type, on_refusal)
    try:
        import ray.exceptions  # noqa: PLC0415

        app.add_exception_handler(ray.exceptions.RayError, on_refusal)
    except ImportError:
        pass

    async def on_invalid(request: Request, exc: Exception) -> Any:
        errors = getattr(exc, "errors", lambda: [])()
        detail = "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}"
                           for e in errors) or str(exc)
        return _error_response(Refusal(400, "bad_request", f"invalid request: {detail}"))

    app.add_exception_handler(RequestValidationError, on_invalid)

    async def on_http_error(request: Request, exc: Exception) -> Any:
        status = getattr(exc, "status_code", 500)
        code = {404: "not_found", 405: "method_not_allowed"}.get(status, "bad_request")
        return _error_response(Refusal(status, code, str(getattr(exc, "detail", exc))))

    app.add_exception_handler(StarletteHTTPException, on_http_error)

    err = {"model": ErrorBody, "description": "refused (the JSON body names why)"}

    # The handlers carry no return annotations: FastAPI would read a response model from them;
    # the models above describe the answers in the schema only.
    def ok(model: Any) -> dict:
        return {200: {"model": model}}
    common = {401: err, 429: err}

    @app.get("/v1/health", summary="Health of the server",
             responses={**ok(Health), 503: err, **common})
    async def health():
        h = await need_api().ctl.health.remote()
        return JSONResponse(h, status_code=200 if h["status"] != "down" else 503)

    @app.get("/v1/metrics", summary="Metrics (Prometheus text format)",
             response_class=Response, responses={200: {"content": {METRICS_TYPE: {}}},
                                                 **common})
    async def metrics():
        return Response(await need_api().metrics_text(), media_type=METRICS_TYPE)

    @app.get("/v1/circuits", summary="The circuits offered, with their arguments' JSON Schema",
             responses={**ok(Catalogue), **common})
    async def circuits():
        return {"circuits": need_api().catalogue()}

    @app.get("/v1/parameters", summary="The parameter sets sessions may use",
             responses={**ok(ParameterSets), **common})
    async def parameters():
        return {"parameter_sets": need_api().parameters()}

    @app.get("/v1/limits", summary="The limits that apply to this API key", responses=common)
    async def limits(request: Request):
        return need_api().limits(key_of(request))

    @app.post("/v1/sessions", status_code=201, summary="Open a session: upload evaluation keys",
              description="Body: KeyUpload.to_bytes() (a JSON frame with the keys' metadata and "
              "fingerprint, then the key container, compact serialization). Answers the "
              "session id.", openapi_extra={"requestBody": {"required": True,
                                                            "content": _BINARY}},
              responses={201: {"model": SessionOpened}, 400: err, 413: err, **common})
    async def open_session(request: Request):
        return JSONResponse(await need_api().open_session(key_of(request), request),
                            status_code=201)

    @app.get("/v1/sessions/{session_id}", summary="A session's state",
             responses={**ok(SessionInfo), 404: err, **common})
    async def session_info(session_id: str, request: Request):
        key = key_of(request)
        return await need_api().ctl.session_info.remote(session_id, key.owner_token)

    @app.delete("/v1/sessions/{session_id}", status_code=204, summary="Close a session",
                responses={404: err, **common})
    async def close_session(session_id: str, request: Request):
        key = key_of(request)
        await need_api().ctl.close_session.remote(session_id, key.owner_token)
        return Response(status_code=204)

    @app.post("/v1/sessions/{session_id}/jobs", status_code=202, summary="Submit a job",
              description="Body: a JSON frame {circuit, args, count} and `count` ciphertext "
              "frames (Ciphertext.to_bytes()). Chunks start while the body arrives. Answers 202 "
              "with the job id, or with stream=true the result stream itself (200).",
              openapi_extra={"requestBody": {"required": True, "content": _BINARY}},
              responses={202: {"model": JobAccepted},
                         200: {"content": _BINARY, "description": "stream=true: the results"},
                         400: err, 404: err, 413: err, 503: err, **common})
    async def submit(session_id: str, request: Request,
                     stream: bool = Query(False, description="answer with the result stream"),
                     timeout_s: Optional[float] = Query(None, gt=0, le=86400)):
        a = need_api()
        key = key_of(request)
        job = await a.submit(key, session_id, request, timeout_s)
        if stream:
            return SubmissionStream(a.results(key, session_id, job["job"], 0, True, job),
                                    lambda: a.abandon(key, session_id, job))
        return JSONResponse(job, status_code=202)

    @app.get("/v1/sessions/{session_id}/jobs/{job_id}", summary="A job's state",
             responses={**ok(JobState), 404: err, **common})
    async def job_status(session_id: str, job_id: str, request: Request):
        key = key_of(request)
        r = await need_api().ctl.job_results.remote(job_id, key.owner_token, 0, 0.0, False,
                                                    session_id)
        r.pop("entries", None)
        return r

    @app.get("/v1/sessions/{session_id}/jobs/{job_id}/results",
             summary="Finished chunks past `have` (chunked polling)",
             description="Frames of the chunks that finished past the first `have` (waiting up "
             "to 20 s for one), then a JSON frame with the job's state; the first `have` are "
             "released. {\"end\": true} once everything was delivered.",
             response_class=Response, responses={200: {"content": _BINARY}, 404: err, **common})
    async def results(session_id: str, job_id: str, request: Request,
                      have: int = Query(0, ge=0)):
        key = key_of(request)
        await need_api().check_job(key, session_id, job_id, have)
        return StreamingResponse(need_api().results(key, session_id, job_id, have, False),
                                 media_type=frames.MEDIA_TYPE)

    @app.get("/v1/sessions/{session_id}/jobs/{job_id}/stream",
             summary="Stream the results as chunks finish",
             response_class=Response, responses={200: {"content": _BINARY}, 404: err, **common})
    async def stream(session_id: str, job_id: str, request: Request,
                     have: int = Query(0, ge=0)):
        key = key_of(request)
        await need_api().check_job(key, session_id, job_id, have)
        return StreamingResponse(need_api().results(key, session_id, job_id, have, True),
                                 media_type=frames.MEDIA_TYPE)

    @app.delete("/v1/sessions/{session_id}/jobs/{job_id}", status_code=204,
                summary="Cancel a job or drop its results", responses={404: err, **common})
    async def drop_job(session_id: str, job_id: str, request: Request):
        key = key_of(request)
        await need_api().ctl.drop_job.remote(job_id, key.owner_token, session_id)
        return Response(status_code=204)

    default_openapi = app.openapi

    def openapi_without_422() -> dict:
        # Invalid parameters are answered 400 with the JSON error body (on_invalid), never 422.
        if app.openapi_schema is None:
            schema = default_openapi()
            for ops in schema.get("paths", {}).values():
                for op in ops.values():
                    op.get("responses", {}).pop("422", None)
            for name in ("HTTPValidationError", "ValidationError"):
                schema.get("components", {}).get("schemas", {}).pop(name, None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi_without_422  # type: ignore[method-assign]

    @app.get("/v1/openapi.json", summary="This schema", responses=common)
    async def openapi():
        return JSONResponse(app.openapi())

    return app


def openapi_schema() -> dict[str, Any]:
    """The published schema (docs/serve-openapi.json is this, written by
    `python -m theodosian.serve openapi`)."""
    return json.loads(json.dumps(build_app(None).openapi()))
