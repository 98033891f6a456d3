"""Exceptions of theodosian.serve. Every one is a :class:`theodosian.Error` (a RuntimeError), so a
client can catch the library's errors and the server's alike."""

from __future__ import annotations

from typing import Any

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


class LimitError(ServeError):
    """A request was refused by a limit: ``limit`` names it (body_bytes, ciphertexts_per_job,
    jobs_in_flight, key_bytes, sessions, rate, ...), ``status`` is the HTTP status the API answers
    with (413: too large, 429: too many now), ``maximum`` / ``value`` the numbers when there are
    some, ``retry_after_s`` when waiting helps."""

    def __init__(self, message: str, *, limit: str, status: int = 429, maximum: Any = None,
                 value: Any = None, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.limit = limit
        self.status = status
        self.maximum = maximum
        self.value = value
        self.retry_after_s = retry_after_s

    def __reduce__(self) -> tuple:
        # Crosses Ray (pickled) with its fields.
        return (_make_limit_error, (str(self), self.limit, self.status, self.maximum,
                                    self.value, self.retry_after_s))


def _make_limit_error(message: str, limit: str, status: int, maximum: Any, value: Any,
                      retry_after_s: float | None) -> LimitError:
    return LimitError(message, limit=limit, status=status, maximum=maximum, value=value,
                      retry_after_s=retry_after_s)


class AuthenticationError(ServeError, PermissionError):
    """The HTTP API refused the API key (missing, unknown, malformed or revoked: 401)."""


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
