"""The registry of named circuits a server runs on batches of ciphertexts.

A circuit is a Python function ``fn(env, cts, **args) -> list[Ciphertext]`` over the library's
calls. ``env`` (:class:`CircuitEnv`) gives the session's Context, an Evaluator holding the
session's keys, the keys themselves and cached helpers (a Bootstrapper per configuration). Register
one with the decorator::

    from theodosian.serve import circuit

    @circuit("affine", arity=1)
    def affine(env, cts, *, scale=2.0):
        ev = env.evaluator
        return [ev.rescale(ev.multiply_const(ct, scale)) for ct in cts]

``args`` declares the JSON arguments (:class:`theodosian.serve.argspec.Arg`): they are checked
before the circuit runs, and only circuits with a declaration (``args=[]`` for none) are offered
over the HTTP API. ``arity`` is the number of input ciphertexts per independent group (2 for a
product of pairs);
the scheduler splits a batch into chunks of whole groups and spreads them over workers when the
circuit is ``elementwise`` (every group's outputs depend on that group alone). A server imports
extra circuit modules at start (``--circuits module``), every module named by the
``theodosian.serve.circuits`` entry point, and the workloads' module when it is installed.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib
import importlib.util
import math
from typing import Any, Callable, Iterable, Sequence

import theodosian as th

from .argspec import Arg, power_of_two
from .argspec import json_schema as args_json_schema
from .argspec import validate as validate_args
from .errors import JobError

CircuitFn = Callable[..., Sequence[th.Ciphertext]]

#: Modules registering circuits that are imported when they exist (the workloads' inference).
OPTIONAL_PLUGINS = ("theodosian.workloads.serve",)
ENTRY_POINT_GROUP = "theodosian.serve.circuits"


@dataclasses.dataclass(frozen=True)
class Circuit:
    name: str
    fn: CircuitFn
    arity: int = 1
    elementwise: bool = True
    doc: str = ""
    #: The declared arguments; None: not declared (not offered over HTTP, args passed as given).
    args: tuple[Arg, ...] | None = None

    @property
    def http(self) -> bool:
        """Offered over the HTTP API (its arguments are declared)."""
        return self.args is not None

    def check_args(self, args: Any) -> dict[str, Any]:
        """The checked arguments with defaults (JobError naming the problem); undeclared
        arguments pass as given."""
        if self.args is None:
            if not isinstance(args, dict):
                raise JobError("args must be a dict")
            return dict(args)
        return validate_args(self.args, args, self.name)

    def describe(self) -> dict[str, Any]:
        """The catalogue entry (name, arity, elementwise, doc, JSON Schema of the args)."""
        return {"name": self.name, "arity": self.arity, "elementwise": self.elementwise,
                "doc": self.doc, "args": args_json_schema(self.args or ())}

    def check_batch(self, count: int) -> None:
        if count == 0:
            raise JobError(f"circuit {self.name!r}: empty batch")
        if count % self.arity:
            raise JobError(f"circuit {self.name!r} takes groups of {self.arity} ciphertexts; "
                           f"got a batch of {count}")


class CircuitEnv:
    """What a circuit sees: the session's context, keys and an Evaluator with them."""

    def __init__(self, context: th.Context, keys: Any, helpers: "HelperCache") -> None:
        self.context = context
        self.keys = keys
        self._helpers = helpers
        self.evaluator = th.Evaluator(context, relin_key=keys.relin_key,
                                      galois_keys=keys.galois_keys)

    @property
    def relin_key(self) -> Any:
        if self.keys.relin_key is None:
            raise JobError("this session uploaded no relinearization key")
        return self.keys.relin_key

    @property
    def bootstrapping_keys(self) -> Any:
        if self.keys.bootstrapping_keys is None:
            raise JobError("this session uploaded no bootstrapping keys")
        return self.keys.bootstrapping_keys

    def bootstrapper(self, **config: Any) -> th.Bootstrapper:
        """A Bootstrapper for this context (cached per worker and configuration; the session's
        bootstrapping configuration when none is given)."""
        if not config:
            config = dict(getattr(self.keys, "bootstrap_config", None) or {})
        return self._helpers.bootstrapper(self.context, config)

    def polynomial_evaluator(self) -> th.PolynomialEvaluator:
        return th.PolynomialEvaluator(self.context, relin_key=self.relin_key)


class HelperCache:
    """Expensive per-context helpers shared by every session of a worker (Bootstrapper construction
    encodes every linear-transform diagonal). Sessions choose their bootstrapping configuration,
    so at most `max_bootstrappers` are kept, least recently used first out."""

    def __init__(self, max_bootstrappers: int = 4) -> None:
        self.max_bootstrappers = max(1, max_bootstrappers)
        self._boot: collections.OrderedDict[tuple[int, tuple[tuple[str, Any], ...]],
                                            th.Bootstrapper] = collections.OrderedDict()

    def bootstrapper(self, context: th.Context, config: dict[str, Any]) -> th.Bootstrapper:
        key = (context.id, tuple(sorted(config.items())))
        boot = self._boot.get(key)
        if boot is None:
            boot = th.Bootstrapper(context, **config)
            self._boot[key] = boot
            while len(self._boot) > self.max_bootstrappers:
                self._boot.popitem(last=False)
        self._boot.move_to_end(key)
        return boot


_REGISTRY: dict[str, Circuit] = {}


def register_circuit(name: str, fn: CircuitFn, *, arity: int = 1, elementwise: bool = True,
                     args: Sequence[Arg] | None = None, replace: bool = False) -> Circuit:
    """Adds a named circuit (see the module doc). args: its declared arguments (None: undeclared,
    not offered over HTTP). Raises ValueError when the name is taken, unless replace."""
    if not name or not isinstance(name, str):
        raise ValueError("a circuit needs a non-empty name")
    if arity < 1:
        raise ValueError("arity must be >= 1")
    if name in _REGISTRY and not replace:
        raise ValueError(f"circuit {name!r} is already registered")
    c = Circuit(name, fn, arity, elementwise, (fn.__doc__ or "").strip().split("\n")[0],
                None if args is None else tuple(args))
    _REGISTRY[name] = c
    return c


def circuit(name: str, *, arity: int = 1, elementwise: bool = True,
            args: Sequence[Arg] | None = None,
            replace: bool = False) -> Callable[[CircuitFn], CircuitFn]:
    """Decorator form of register_circuit."""

    def wrap(fn: CircuitFn) -> CircuitFn:
        register_circuit(name, fn, arity=arity, elementwise=elementwise, args=args,
                         replace=replace)
        return fn

    return wrap


def get(name: str) -> Circuit:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise JobError(f"no circuit named {name!r} (registered: {', '.join(names())})") from None


def names() -> list[str]:
    return sorted(_REGISTRY)


def http_catalogue() -> list[Circuit]:
    """The circuits offered over HTTP (declared arguments), by name."""
    return [_REGISTRY[n] for n in sorted(_REGISTRY) if _REGISTRY[n].http]


def load_plugins(modules: Iterable[str] = ()) -> list[str]:
    """Imports circuit modules: the given ones (errors propagate), every entry point of the group
    theodosian.serve.circuits, and the optional workloads' module when installed. Returns the
    modules imported."""
    loaded = []
    for mod in modules:
        importlib.import_module(mod)
        loaded.append(mod)
    for mod in OPTIONAL_PLUGINS:
        try:
            found = importlib.util.find_spec(mod) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            importlib.import_module(mod)
            loaded.append(mod)
    try:
        from importlib.metadata import entry_points  # noqa: PLC0415
        eps = entry_points()
        group = (eps.select(group=ENTRY_POINT_GROUP) if hasattr(eps, "select")
                 else eps.get(ENTRY_POINT_GROUP, []))
        for ep in group:
            ep.load()
            loaded.append(ep.value)
    except Exception as exc:  # a broken plugin must not hide the others; name it
        raise ImportError(f"theodosian.serve: loading circuit entry points failed: {exc}") from exc
    return loaded


def run(c: Circuit, env: CircuitEnv, cts: list[th.Ciphertext], args: dict[str, Any]
        ) -> list[th.Ciphertext]:
    """Runs a circuit, turning a wrong call into a JobError that names the circuit."""
    c.check_batch(len(cts))
    args = c.check_args(args)
    try:
        out = c.fn(env, cts, **args)
    except TypeError as exc:
        raise JobError(f"circuit {c.name!r}: {exc}") from exc
    except th.Error as exc:
        raise JobError(f"circuit {c.name!r} failed: {type(exc).__name__}: {exc}") from exc
    out = list(out)
    if not all(isinstance(o, th.Ciphertext) for o in out):
        raise JobError(f"circuit {c.name!r} must return a list of Ciphertexts")
    return out


# ---- built-in circuits --------------------------------------------------------------------------


@circuit("identity", args=[])
def _identity(env: CircuitEnv, cts: list[th.Ciphertext]) -> list[th.Ciphertext]:
    """The inputs unchanged (measures serialization and transport)."""
    return cts


@circuit("square", args=[])
def _square(env: CircuitEnv, cts: list[th.Ciphertext]) -> list[th.Ciphertext]:
    """x^2 per ciphertext: square, relinearize, rescale."""
    ev = env.evaluator
    return [ev.rescale(ev.square(ct, env.relin_key)) for ct in cts]


@circuit("multiply", arity=2, args=[])
def _multiply(env: CircuitEnv, cts: list[th.Ciphertext]) -> list[th.Ciphertext]:
    """Products of pairs (HMult): out[i] = in[2i] * in[2i+1], relinearized and rescaled."""
    ev = env.evaluator
    rlk = env.relin_key
    return [ev.multiply_relin_rescale(cts[i], cts[i + 1], rlk) for i in range(0, len(cts), 2)]


def _interval(args_a: float, args_b: float) -> None:
    if not args_a < args_b:
        raise JobError(f"circuit 'polynomial': the interval [a, b] = [{args_a}, {args_b}] is "
                       "empty (a < b is needed)")


@circuit("polynomial", args=[
    Arg("coeffs", "float_list", min_len=1, max_len=64, minimum=-1e12, maximum=1e12,
        doc="Chebyshev coefficients c_0 .. c_d (degree at most 63)"),
    Arg("a", "float", default=-1.0, minimum=-1e6, maximum=1e6, doc="interval start"),
    Arg("b", "float", default=1.0, minimum=-1e6, maximum=1e6, doc="interval end")])
def _polynomial(env: CircuitEnv, cts: list[th.Ciphertext], *, coeffs: Sequence[float],
                a: float = -1.0, b: float = 1.0) -> list[th.Ciphertext]:
    """A Chebyshev series sum c_i T_i on [a, b] per ciphertext (args: coeffs, a, b)."""
    _interval(float(a), float(b))
    series = th.ChebyshevSeries([float(c) for c in coeffs], float(a), float(b))
    pe = env.polynomial_evaluator()
    return [pe.evaluate(ct, series) for ct in cts]


@circuit("rotate", args=[
    Arg("steps", "int_list", min_len=1, max_len=32, minimum=-(1 << 20), maximum=1 << 20,
        doc="rotation steps (the session needs a Galois key for each)")])
def _rotate(env: CircuitEnv, cts: list[th.Ciphertext], *, steps: Sequence[int]
            ) -> list[th.Ciphertext]:
    """Every rotation in `steps` of every ciphertext (hoisted): len(steps) outputs per input."""
    ev = env.evaluator
    out: list[th.Ciphertext] = []
    for ct in cts:
        out.extend(ev.rotate_hoisted(ct, [int(s) for s in steps]))
    return out


@circuit("rotate_sum", args=[
    Arg("width", "int", minimum=1, maximum=1 << 16, check=power_of_two,
        doc="a power of two; keys for rotations 1, 2, 4, ... width/2")])
def _rotate_sum(env: CircuitEnv, cts: list[th.Ciphertext], *, width: int) -> list[th.Ciphertext]:
    """Slot i gets the sum of slots i .. i+width-1 (width a power of two, checked by its Arg;
    rotations 1, 2, 4, ... up to width/2 must have keys)."""
    ev = env.evaluator
    out = []
    for ct in cts:
        acc = ct
        for k in range(int(math.log2(width))):
            acc = ev.add(acc, ev.rotate(acc, 1 << k))
        out.append(acc)
    return out


@circuit("bootstrap", args=[])
def _bootstrap(env: CircuitEnv, cts: list[th.Ciphertext]) -> list[th.Ciphertext]:
    """Bootstraps every ciphertext (the session must have uploaded bootstrapping keys)."""
    keys = env.bootstrapping_keys
    boot = env.bootstrapper()
    return [boot.bootstrap(ct, keys) for ct in cts]


def evaluate_in_process(name: str, context: th.Context, keys: Any, cts: Sequence[th.Ciphertext],
                        args: dict[str, Any] | None = None, *, fn: CircuitFn | None = None,
                        helpers: HelperCache | None = None) -> list[th.Ciphertext]:
    """The reference: a circuit evaluated here with the same code path the workers use."""
    c = Circuit(name, fn) if fn is not None else get(name)
    env = CircuitEnv(context, keys, helpers or HelperCache())
    return run(c, env, list(cts), dict(args or {}))
