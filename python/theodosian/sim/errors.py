"""The simulator's input error: names the file and the field that is wrong."""

from __future__ import annotations

from typing import Any


class SimInputError(ValueError):
    """A trace, machine or model file (or a value built in code) that the simulator cannot use.

    ``field`` is the dotted path of the offending field, e.g. ``ops[12].bytes_read`` or
    ``hmc.cubes``; the message starts with the source and the field.
    """

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        super().__init__(f"{source}: field '{field}': {problem}")


def _absent(source: str, where: str, default: Any, required: str) -> Any:
    """What a missing field stands for: ``default``, or (None) an error naming what is required."""
    if default is not None:
        return default
    raise SimInputError(source, where, f"missing ({required} is required)")


def require_number(source: str, obj: dict, key: str, path: str, *, minimum: float | None = None,
                   positive: bool = False, integer: bool = False, default: float | None = None,
                   maximum: float | None = None) -> float:
    """obj[key] as a number, checked; ``default`` when absent (None: required)."""
    where = f"{path}.{key}" if path else key
    if key not in obj:
        return _absent(source, where, default, "a number")
    v = obj[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SimInputError(source, where, f"must be a number, got {type(v).__name__} {v!r}")
    if v != v or v in (float("inf"), float("-inf")):
        raise SimInputError(source, where, f"must be finite, got {v!r}")
    if integer and int(v) != v:
        raise SimInputError(source, where, f"must be an integer, got {v!r}")
    if positive and not v > 0:
        raise SimInputError(source, where, f"must be > 0, got {v!r}")
    if minimum is not None and v < minimum:
        raise SimInputError(source, where, f"must be >= {minimum}, got {v!r}")
    if maximum is not None and v > maximum:
        raise SimInputError(source, where, f"must be <= {maximum}, got {v!r}")
    return int(v) if integer else float(v)


def require_str(source: str, obj: dict, key: str, path: str, *, default: str | None = None) -> str:
    where = f"{path}.{key}" if path else key
    if key not in obj:
        return _absent(source, where, default, "a string")
    v = obj[key]
    if not isinstance(v, str):
        raise SimInputError(source, where, f"must be a string, got {type(v).__name__} {v!r}")
    return v


def require_object(source: str, obj: dict, key: str, path: str, *, optional: bool = False):
    where = f"{path}.{key}" if path else key
    if key not in obj or obj[key] is None:
        if optional:
            return None
        raise SimInputError(source, where, "missing (an object is required)")
    v = obj[key]
    if not isinstance(v, dict):
        raise SimInputError(source, where, f"must be an object, got {type(v).__name__}")
    return v
