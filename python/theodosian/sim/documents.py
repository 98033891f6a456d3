"""The simulator's JSON documents (traces, machines, the model): finding a file by path or bundled
name, reading it, and checking its "format" / "version" header. Errors are SimInputError."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, TypeVar

from .errors import SimInputError, require_number, require_str

T = TypeVar("T")


def package_file(name: str) -> str:
    """The path of ``name`` in the simulator's package folder (bundled traces, machines, model)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def read_json(source: str) -> Any:
    """The parsed JSON document in file ``source``."""
    try:
        with open(source, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise SimInputError(source, "(document)", f"not valid JSON: {e}") from None
    except OSError as e:
        raise SimInputError(source, "(file)", f"cannot read: {e.strerror}") from None


def require_header(doc: Any, source: str, fmt: str, version: int) -> None:
    """``doc`` is a JSON object whose "format" is ``fmt`` and whose "version" is ``version``."""
    if not isinstance(doc, dict):
        raise SimInputError(source, "(document)", f"must be a JSON object, got {type(doc).__name__}")
    got = require_str(source, doc, "format", "")
    if got != fmt:
        raise SimInputError(source, "format", f"must be '{fmt}', got {got!r}")
    ver = require_number(source, doc, "version", "", integer=True)
    if ver != version:
        raise SimInputError(source, "version", f"this simulator reads version {version}, got {ver}")


def bundled_names(directory: str) -> list[str]:
    """The names (file names less ".json") of the documents bundled in ``directory``, sorted."""
    return sorted(f[:-5] for f in os.listdir(directory) if f.endswith(".json"))


def find_document(name_or_path: str | os.PathLike, directory: str, what: str,
                  load: Callable[[str], T]) -> T:
    """``load`` of a file path, or of the bundled ``what`` (trace, machine) of that name."""
    p = os.fspath(name_or_path)
    if os.path.exists(p):
        return load(p)
    cand = os.path.join(directory, p if p.endswith(".json") else p + ".json")
    if os.path.exists(cand):
        return load(cand)
    raise SimInputError(p, "(file)", f"no such file, and no bundled {what} of that name "
                        f"(bundled: {', '.join(bundled_names(directory))})")
