"""theodosian.serve: an evaluation server on Ray. Many clients, each with its own keys, run circuits
on encrypted batches on a fleet of GPUs (one worker actor per GPU; the CPU backend where there is
none).

Server (one machine; see docs/serve.md for a multi-node cluster)::

    python -m theodosian.serve start            # or: theodosian.serve.start(ServerConfig(...))

Client::

    import theodosian as th
    from theodosian import serve

    ctx = th.Context("bootparam_40")
    keys = serve.ClientKeys.generate(ctx, rotations=[1, 2], bootstrap=True)  # secret key stays
    with serve.Client().open_session(keys) as session:
        ct = keys.encryptor().encrypt(x)
        out = session.run("bootstrap", [ct])          # or submit(...).result(), await run_async
        y = keys.decryptor().decrypt(out[0])

HTTP (an API key, no Ray on the client; the server: ``start_http`` or ``start --http``)::

    client = serve.HttpClient("https://host:8000", api_key="theo_...")
    with client.open_session(keys) as session:
        out = session.run("bootstrap", [ct])

Importing this package does not need Ray; starting or connecting with serve.Client does
(``pip install 'theodosian[serve]'``).
"""

from __future__ import annotations

from .circuits import CircuitEnv, circuit, register_circuit
from .circuits import names as circuit_names
from .client import Client, Job, Session
from .config import NAMESPACE, SERVER_NAME, ServerConfig
from .errors import (
    AuthenticationError,
    BusyError,
    JobError,
    LimitError,
    RayMissingError,
    ServeError,
    ServerUnavailableError,
    SessionError,
)
from .http_client import HttpClient, HttpJob, HttpSession
from .http_server import HttpServer, start_http
from .keys import ClientKeys, KeyUpload, parameters_fingerprint
from .limits import HttpConfig, KeyLimits
from .server import Server, get_server, init_ray, start

__all__ = [
    "start",
    "get_server",
    "init_ray",
    "Server",
    "ServerConfig",
    "SERVER_NAME",
    "NAMESPACE",
    "Client",
    "Session",
    "Job",
    "HttpClient",
    "HttpSession",
    "HttpJob",
    "HttpConfig",
    "HttpServer",
    "KeyLimits",
    "start_http",
    "ClientKeys",
    "KeyUpload",
    "parameters_fingerprint",
    "circuit",
    "register_circuit",
    "circuit_names",
    "CircuitEnv",
    "ServeError",
    "SessionError",
    "BusyError",
    "JobError",
    "ServerUnavailableError",
    "RayMissingError",
    "LimitError",
    "AuthenticationError",
]
