"""What a session of either client holds (client.Session over Ray, http_client.HttpSession over
HTTP): the client, the session's id, the client's keys and their Context; a `with` block closes
the session when it ends."""

from __future__ import annotations

from typing import Any, TypeVar

from .errors import ServeError
from .keys import ClientKeys

_S = TypeVar("_S", bound="ClientSession")


class ClientSession:
    """Base of Session and HttpSession: their keys live on the server."""

    def __init__(self, client: Any, session_id: str, keys: ClientKeys) -> None:
        self._client = client
        self.id = session_id
        self.keys = keys
        self.context = keys.context
        self._fingerprint = keys.upload.fingerprint

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.close()
        except ServeError:
            pass
