"""Unpickling helpers of theodosian objects.

Pickle stores a reference to a plain Python function and its arguments; these are those functions.
Every object pickles as (parameter set as JSON, the bytes of ``to_bytes()``); unpickling finds the
Context through :meth:`theodosian.Context.for_parameters` (one per parameter fingerprint and process),
so a server process can unpickle what a client pickled.
"""

from __future__ import annotations

from typing import Any


def _restore(kind: str, params_json: str, data: Any) -> Any:
    """The object of class ``kind`` (e.g. "Ciphertext") read from ``data`` on the process's
    Context for the parameters."""
    from . import _core

    return _core._restore(kind, params_json, data)


def _restore_parameters(params_json: str) -> Any:
    """A Parameters from its JSON text."""
    from . import _core

    return _core.Parameters.from_json(params_json)


def _restore_context(params_json: str) -> Any:
    """Context.for_parameters of the JSON text."""
    from . import _core

    return _core._context_for(params_json)
