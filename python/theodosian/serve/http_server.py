"""Starting the HTTP API: a Ray Serve application (the ingress deployment, FastAPI) in front of a
running Ray server (server.start). Ray Serve's proxies take the connections (HTTPS when a
certificate is configured) and hand each request to an ingress replica; the replica drives the
controller actor, which keeps scheduling jobs on the workers.

    from theodosian import serve
    srv = serve.start(serve.ServerConfig(...))               # the engine
    http = serve.start_http(serve.HttpConfig(api_keys="keys.json", port=8000))
    ...
    http.stop(); srv.stop()

The ingress replicas run on the node that starts the API (they read the API key file there);
`HttpConfig.proxy_location` puts the proxies on that node only (HeadOnly) or on every node.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from . import circuits as circuit_registry
from .config import NAMESPACE
from .errors import require_ray
from .limits import HttpConfig

HTTP_APP_NAME = "theodosian-http"
#: Requests one replica takes at once (streams of large results last seconds; Ray Serve's default
#: of 5 would queue them behind each other).
MAX_ONGOING_REQUESTS = 4096


class HttpIngress:
    """The ingress replica: builds the API against the named controller (see start_http)."""

    def __init__(self, cfg: HttpConfig, circuit_modules: tuple[str, ...] = ()) -> None:
        import ray  # noqa: PLC0415
        from ray import serve  # noqa: PLC0415

        from .http_api import Api  # noqa: PLC0415

        # The same catalogue as the workers': arguments are checked here first.
        circuit_registry.load_plugins(circuit_modules)
        controller = ray.get_actor(cfg.server_name, namespace=NAMESPACE)
        try:
            replica = serve.get_replica_context().replica_tag
        except Exception:  # noqa: BLE001 - a label only
            replica = "0"
        self.api = Api(cfg, controller, replica=str(replica))

    def __serve_build_asgi_app__(self) -> Any:
        from .http_app import build_app  # noqa: PLC0415

        return build_app(self.api)


@dataclasses.dataclass
class HttpServer:
    """A started HTTP API."""

    config: HttpConfig
    url: str

    def stop(self) -> None:
        from ray import serve  # noqa: PLC0415

        serve.delete(HTTP_APP_NAME)


def start_http(cfg: HttpConfig, *, circuit_modules: tuple[str, ...] = (),
               timeout_s: float = 300.0) -> HttpServer:
    """Deploys the HTTP API in the Ray cluster this process is connected to (the Ray server named
    cfg.server_name must be running). Returns when it answers."""
    ray = require_ray()
    from ray import serve  # noqa: PLC0415
    from ray.serve.config import HTTPOptions  # noqa: PLC0415

    from .apikeys import load  # noqa: PLC0415
    from .http_api import _parameter_sets  # noqa: PLC0415

    if not cfg.api_keys:
        raise ValueError("the HTTP API needs an API key file (HttpConfig.api_keys; make one with "
                         "python -m theodosian.serve keys create --file PATH)")
    load(cfg.api_keys)  # refuses a missing or malformed file here, before anything starts
    _parameter_sets(cfg)  # and parameter sets that do not load
    try:
        ray.get_actor(cfg.server_name, namespace=NAMESPACE)
    except ValueError as exc:
        raise ValueError(f"no Ray server named {cfg.server_name!r} runs: start it first "
                         "(theodosian.serve.start / python -m theodosian.serve start)") from exc
    options = HTTPOptions(host=cfg.host, port=cfg.port, ssl_certfile=cfg.tls_cert or None,
                          ssl_keyfile=cfg.tls_key or None)
    serve.start(http_options=options, proxy_location=cfg.proxy_location)
    node = ray.util.get_node_ip_address()
    deployment = serve.deployment(
        name="HttpIngress", num_replicas=cfg.replicas,
        max_ongoing_requests=MAX_ONGOING_REQUESTS,
        # On this node (the key file is here), taking no CPU from the workers.
        ray_actor_options={"num_cpus": 0, "resources": {f"node:{node}": 0.001}},
    )(serve.ingress()(HttpIngress))
    serve.run(deployment.bind(cfg, tuple(circuit_modules)), name=HTTP_APP_NAME,
              route_prefix="/", blocking=False)
    _wait_running(timeout_s)
    host = cfg.host if cfg.host not in ("0.0.0.0", "::") else node
    return HttpServer(cfg, f"{cfg.scheme}://{host}:{cfg.port}")


def stop_http() -> bool:
    """Removes the HTTP API from the cluster this process is connected to; False when it does
    not run there."""
    from ray import serve  # noqa: PLC0415

    try:
        if HTTP_APP_NAME not in serve.status().applications:
            return False
    except Exception:  # noqa: BLE001 - Ray Serve does not run in this cluster
        return False
    serve.delete(HTTP_APP_NAME)
    return True


def _wait_running(timeout_s: float) -> None:
    import time  # noqa: PLC0415

    from ray import serve  # noqa: PLC0415

    deadline = time.monotonic() + timeout_s
    while True:
        status = serve.status().applications.get(HTTP_APP_NAME)
        state = str(getattr(status, "status", ""))
        if state.endswith("RUNNING"):
            return
        if state.endswith("DEPLOY_FAILED"):
            raise RuntimeError(f"the HTTP API did not start: {getattr(status, 'message', '')}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the HTTP API did not start within {timeout_s} s ({state})")
        time.sleep(0.2)
