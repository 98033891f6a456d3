"""Exceptions raised by theodosian.

Every error the C++ library raises arrives as one of these, with the library's message (which names
the offending field, level, scale, key or context). Each is a subclass of :class:`Error` and of the
built-in exception a Python user would expect (``ValueError``, ``KeyError``, ``MemoryError``), so
both ``except theodosian.Error`` and ``except ValueError`` work.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "ParameterError",
    "SecurityError",
    "LevelError",
    "ScaleError",
    "MissingKeyError",
    "ContextError",
    "OutOfMemoryError",
    "BackendError",
]


class Error(RuntimeError):
    """Base of every theodosian exception (a RuntimeError)."""


class ParameterError(Error, ValueError):
    """A parameter set, parameter file or argument is invalid; the message names the field."""


class SecurityError(ParameterError):
    """The parameter set is below 128-bit security and allow_insecure was not given."""


class LevelError(Error, ValueError):
    """Operands are at incompatible or exhausted levels (e.g. rescale at level 0)."""


class ScaleError(Error, ValueError):
    """Operand scales differ beyond the context's tolerance."""


class MissingKeyError(Error, KeyError):
    """A required relinearization, rotation or conjugation key is missing."""

    def __str__(self) -> str:
        # KeyError would show the repr of the message; show the message itself.
        if len(self.args) == 1:
            return str(self.args[0])
        return super().__str__()


class ContextError(Error, ValueError):
    """Objects of two different Contexts were mixed, or an object is empty."""


class OutOfMemoryError(Error, MemoryError):
    """A device or host allocation failed; the message says how much was asked and is free."""


class BackendError(Error):
    """A CUDA runtime call or kernel launch failed (or the CUDA backend is not available)."""


for _cls in (Error, ParameterError, SecurityError, LevelError, ScaleError, MissingKeyError,
             ContextError, OutOfMemoryError, BackendError):
    _cls.__module__ = "theodosian"
del _cls
