"""Arguments of a circuit: what a job's JSON ``args`` may hold, checked before anything runs.

A circuit registered with ``args=[Arg(...), ...]`` refuses unknown names, missing required
values, wrong types, values out of range and lists too long, with a message naming the argument
(the HTTP API answers 400 with it). Only circuits with such a declaration are offered over HTTP:
an argument that reaches a worker has been checked, so no JSON a client sends can make a circuit
allocate or loop without bound.

    Arg("coeffs", "float_list", min_len=1, max_len=64)
    Arg("width", "int", default=1, minimum=1, maximum=1 << 16, check=power_of_two)
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping, Sequence

from .errors import JobError

_REQUIRED = object()
KINDS = ("int", "float", "bool", "int_list", "float_list")


@dataclasses.dataclass(frozen=True)
class Arg:
    """One argument. kind: int, float, bool, int_list, float_list. minimum / maximum bound the
    value (every element of a list); min_len / max_len a list's length. check: a last test of the
    converted value returning an error message or None."""

    name: str
    kind: str
    default: Any = _REQUIRED
    minimum: float | None = None
    maximum: float | None = None
    min_len: int = 0
    max_len: int = 64
    doc: str = ""
    check: Callable[[Any], str | None] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Arg {self.name!r}: kind must be one of {KINDS}")

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def _scalar(self, value: Any, where: str) -> Any:
        base = self.kind.removesuffix("_list")
        if base == "bool":
            if not isinstance(value, bool):
                raise JobError(f"{where}: a boolean was expected, got {type(value).__name__}")
            return value
        # bool is an int in Python, never a number in an argument.
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise JobError(f"{where}: a number was expected, got {type(value).__name__}")
        if base == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise JobError(f"{where}: an integer was expected, got {value!r}")
                value = int(value)
        else:
            value = float(value)
            if not math.isfinite(value):
                raise JobError(f"{where}: a finite number was expected, got {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise JobError(f"{where}: {value!r} is below the minimum {self.minimum!r}")
        if self.maximum is not None and value > self.maximum:
            raise JobError(f"{where}: {value!r} is above the maximum {self.maximum!r}")
        return value

    def convert(self, value: Any, circuit: str) -> Any:
        where = f"circuit {circuit!r}: argument {self.name!r}"
        if self.kind.endswith("_list"):
            if not isinstance(value, (list, tuple)):
                raise JobError(f"{where}: a list was expected, got {type(value).__name__}")
            if not self.min_len <= len(value) <= self.max_len:
                raise JobError(f"{where}: {len(value)} elements (allowed: {self.min_len} to "
                               f"{self.max_len})")
            out: Any = [self._scalar(v, f"{where}[{i}]") for i, v in enumerate(value)]
        else:
            out = self._scalar(value, where)
        if self.check is not None:
            problem = self.check(out)
            if problem:
                raise JobError(f"{where}: {problem}")
        return out

    def json_schema(self) -> dict[str, Any]:
        base = self.kind.removesuffix("_list")
        scalar: dict[str, Any] = {"type": {"int": "integer", "float": "number",
                                           "bool": "boolean"}[base]}
        if self.minimum is not None:
            scalar["minimum"] = self.minimum
        if self.maximum is not None:
            scalar["maximum"] = self.maximum
        if self.kind.endswith("_list"):
            schema: dict[str, Any] = {"type": "array", "items": scalar,
                                      "minItems": self.min_len, "maxItems": self.max_len}
        else:
            schema = scalar
        if not self.required:
            schema["default"] = self.default
        if self.doc:
            schema["description"] = self.doc
        return schema


def validate(spec: Sequence[Arg], args: Any, circuit: str) -> dict[str, Any]:
    """The checked arguments (defaults filled in), or JobError naming the first problem."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise JobError(f"circuit {circuit!r}: args must be a JSON object, got "
                       f"{type(args).__name__}")
    known = {a.name for a in spec}
    unknown = sorted(str(k) for k in args if k not in known)
    if unknown:
        raise JobError(f"circuit {circuit!r}: unknown arguments {unknown} (takes: "
                       f"{sorted(known) or 'none'})")
    out: dict[str, Any] = {}
    for a in spec:
        if a.name in args:
            out[a.name] = a.convert(args[a.name], circuit)
        elif a.required:
            raise JobError(f"circuit {circuit!r}: argument {a.name!r} is required")
        else:
            out[a.name] = a.default
    return out


def json_schema(spec: Sequence[Arg]) -> dict[str, Any]:
    """A JSON Schema of the args object (published in the catalogue)."""
    return {"type": "object", "additionalProperties": False,
            "properties": {a.name: a.json_schema() for a in spec},
            "required": [a.name for a in spec if a.required]}


def power_of_two(value: int) -> str | None:
    return None if value >= 1 and not value & (value - 1) else f"{value} is not a power of two"
