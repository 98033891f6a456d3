"""The public API is documented and typed."""

from __future__ import annotations

import inspect
import pathlib

import theodosian as th


def _public_members(obj):
    for name, member in inspect.getmembers(obj):
        if name.startswith("_") and name not in ("__init__", "__call__", "__matmul__"):
            continue
        yield name, member


def test_every_public_name_has_a_docstring() -> None:
    missing = []
    for name in th.__all__:
        obj = getattr(th, name)
        if name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for mname, member in _public_members(obj):
                if mname in ("__init__",) and member is object.__init__:
                    continue
                if callable(member) or isinstance(member, property):
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{mname}")
    assert not missing, missing


def test_stubs_and_marker_are_shipped() -> None:
    assert (pathlib.Path(th.__file__).parent / "py.typed").exists()
    stub = (pathlib.Path(th._core.__file__).parent / "_core.pyi").read_text()
    for cls in ("class Context", "class Ciphertext", "class Evaluator", "class Bootstrapper"):
        assert cls in stub
