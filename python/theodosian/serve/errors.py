"""Exceptions of theodosian.serve. Every one is a :class:`theodosian.Error` (a RuntimeError), so a
client can catch the library's errors and the server's alike."""

from __future__ import annotations

from .._errors import Error


class ServeError(Error):
    """Base of the evaluation server's errors."""


class SessionError(ServeError, PermissionError):
    """The session is unknown, closed, or not this client's: the request was refused."""


class BusyError(ServeError):
    """Every worker's queue is full (the client asked not to wait, or waiting timed out)."""


class JobError(ServeError):
    """The job was refused or failed on the server (bad circuit, bad arguments, a ciphertext for
    other parameters, an error in the circuit). The message names what was wrong."""


class ServerUnavailableError(ServeError, ConnectionError):
    """The server, or every worker able to run the job, went away or did not answer in time."""


class RayMissingError(ServeError, ImportError):
    """Ray is not installed (``pip install 'theodosian[serve]'``)."""


def require_ray():
    """Imports and returns the ray module, or raises RayMissingError naming the fix."""
    try:
        import ray  # noqa: PLC0415 - optional dependency, imported only where it is needed
    except ImportError as exc:
        raise RayMissingError(
            "theodosian.serve needs Ray for the server and the client: "
            "pip install 'theodosian[serve]' (or pip install ray)") from exc
    return ray
