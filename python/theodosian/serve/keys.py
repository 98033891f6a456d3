"""Evaluation keys that leave the client: the one place that knows how keys travel.

A client makes its keys with :meth:`ClientKeys.generate` (secret key, public key, and the evaluation
keys a session needs: relinearization, rotations, bootstrapping) and uploads ``keys.upload`` once
when it opens a session. The upload holds the keys' compact serialization (``to_bytes(compact=
True)``: each key's uniform half as its 32-byte seed, about half the size); the secret key never
leaves the client. The server turns an upload back into keys with :func:`materialize` whenever a
worker needs them (first use, or after LRU eviction).
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any, Mapping, Sequence

import theodosian as th

from . import frames
from .argspec import Arg
from .argspec import validate as validate_args
from .errors import JobError

#: Every switching key (relin key, one Galois key, an encapsulation key) has dnum digits of two
#: polynomials over Q_max u P, in 32-bit words.
_WORD_BYTES = 4

#: Bootstrapper options a session may ask for.
BOOTSTRAP_OPTIONS = frozenset({"slots", "cts_levels", "stc_levels", "evalmod_levels",
                               "arcsine_degree", "min_keys", "message_ratio_bits"})


def parameters_fingerprint(params: th.Parameters) -> str:
    """The parameter set's fingerprint (hex; the library's, which serialized objects carry): two
    sets with the same fingerprint make the same Context."""
    return params.fingerprint


def switching_key_bytes(params: th.Parameters) -> int:
    """Memory of one switching key once loaded."""
    return params.dnum * 2 * (params.max_limbs + params.alpha) * params.n * _WORD_BYTES


@dataclasses.dataclass(frozen=True)
class KeyUpload:
    """What a client sends once per session: the parameter set, its fingerprint, which keys, and
    their compact bytes. ``nbytes`` is the memory the keys take once loaded on a worker (used for
    the key-memory budget)."""

    params_json: str
    fingerprint: str
    payload: bytes
    relin: bool
    rotations: tuple[int, ...]
    conjugation: bool
    bootstrap: Mapping[str, Any] | None
    nbytes: int

    def describe(self) -> str:
        parts = []
        if self.relin:
            parts.append("relin")
        if self.rotations:
            parts.append(f"{len(self.rotations)} rotations")
        if self.conjugation:
            parts.append("conjugation")
        if self.bootstrap is not None:
            parts.append("bootstrapping")
        return (f"{', '.join(parts) or 'no keys'} ({len(self.payload) / 2**20:.1f} MiB compact, "
                f"{self.nbytes / 2**20:.1f} MiB loaded)")

    def metadata(self) -> dict[str, Any]:
        """What travels beside the key container over HTTP (the server recomputes the rest)."""
        return {"format": UPLOAD_FORMAT, "fingerprint": self.fingerprint,
                "relin": self.relin, "rotations": list(self.rotations),
                "conjugation": self.conjugation,
                "bootstrap": None if self.bootstrap is None else dict(self.bootstrap)}

    def to_bytes(self) -> bytes:
        """The HTTP session upload (POST /v1/sessions): a frame stream of the metadata and the
        key container (theodosian.serve.frames)."""
        return frames.encode_bytes([self.metadata(), self.payload])


@dataclasses.dataclass
class SessionKeys:
    """Evaluation keys made usable on one worker."""

    relin_key: Any
    galois_keys: Any
    bootstrapping_keys: Any
    bootstrap_config: dict[str, Any] | None
    nbytes: int


def _bootstrap_kwargs(spec: Mapping[str, Any] | bool | None) -> dict[str, Any] | None:
    if spec is None or spec is False:
        return None
    if spec is True:
        return {}
    unknown = set(spec) - BOOTSTRAP_OPTIONS
    if unknown:
        raise ValueError(f"bootstrap: unknown Bootstrapper options {sorted(unknown)}; "
                         f"allowed: {sorted(BOOTSTRAP_OPTIONS)}")
    return dict(spec)


# ---- the payload: named parts (relin, galois, bootstrapping), each a library serialization ------
# magic, count, then per part: name length (u32), name, data length (u64), data.
_MAGIC = b"THEOKEYS"


def _pack(parts: Mapping[str, bytes]) -> bytes:
    out = [_MAGIC, struct.pack("<I", len(parts))]
    for name, data in parts.items():
        raw = name.encode()
        out += [struct.pack("<I", len(raw)), raw, struct.pack("<Q", len(data)), data]
    return b"".join(out)


def _unpack(blob: bytes | memoryview) -> dict[str, memoryview]:
    view = memoryview(blob)
    if bytes(view[:8]) != _MAGIC:
        raise JobError("key upload: not a key container (bad magic)")
    pos = 8

    def take(n: int) -> memoryview:
        nonlocal pos
        if n < 0 or pos + n > len(view):
            raise JobError("key upload: truncated key container")
        chunk = view[pos:pos + n]
        pos += n
        return chunk

    (count,) = struct.unpack("<I", take(4))
    if count > 3:
        raise JobError(f"key upload: {count} parts (at most relin, galois, bootstrapping)")
    parts: dict[str, memoryview] = {}
    for _ in range(count):
        (name_len,) = struct.unpack("<I", take(4))
        name = bytes(take(min(name_len, 64))).decode(errors="replace")
        (data_len,) = struct.unpack("<Q", take(8))
        parts[name] = take(data_len)
    unknown = set(parts) - {"relin", "galois", "bootstrapping"}
    if unknown:
        raise JobError(f"key upload: unknown parts {sorted(unknown)}")
    if pos != len(view):
        raise JobError("key upload: trailing bytes after the key container")
    return parts


class ClientKeys:
    """A client's keys: the secret key (stays here), the public key, the evaluation keys, and the
    upload that gives a server the evaluation keys."""

    def __init__(self, context: th.Context, secret_key: Any, public_key: Any, relin_key: Any,
                 galois_keys: Any, bootstrapping_keys: Any, upload: KeyUpload) -> None:
        self.context = context
        self.secret_key = secret_key
        self.public_key = public_key
        self.relin_key = relin_key
        self.galois_keys = galois_keys
        self.bootstrapping_keys = bootstrapping_keys
        self.upload = upload

    @classmethod
    def generate(cls, context: th.Context, *, relin: bool = True, rotations: Sequence[int] = (),
                 conjugation: bool = False, bootstrap: Mapping[str, Any] | bool | None = None,
                 progress: bool | None = None) -> "ClientKeys":
        """Makes a secret key (from the OS's randomness) and the evaluation keys a session needs.

        relin: a relinearization key (products). rotations / conjugation: Galois keys.
        bootstrap: True or Bootstrapper options (slots, cts_levels, ...) for bootstrapping keys.
        progress: progress bars for long key generation and serialization."""
        boot_kwargs = _bootstrap_kwargs(bootstrap)
        rotations = tuple(int(r) for r in rotations)
        kg = th.KeyGenerator(context)
        sk = kg.secret_key()
        pk = kg.public_key(sk)
        rlk = kg.relin_key(sk) if relin else None
        gk = (kg.galois_keys(sk, list(rotations), conjugation=conjugation, progress=progress)
              if rotations or conjugation else None)
        bks = None
        count = (1 if relin else 0) + (len(gk) if gk is not None else 0)
        if boot_kwargs is not None:
            boot = th.Bootstrapper(context, **boot_kwargs)
            bks = boot.generate_keys(kg, sk, progress=progress)
            count += 1 + len(bks.galois_keys) + 2  # relin, Galois, the two encapsulation keys
        parts = {}
        if rlk is not None:
            parts["relin"] = rlk.to_bytes(compact=True, progress=progress)
        if gk is not None:
            parts["galois"] = gk.to_bytes(compact=True, progress=progress)
        if bks is not None:
            parts["bootstrapping"] = bks.to_bytes(compact=True, progress=progress)
        params = context.params
        upload = KeyUpload(params_json=params.to_json(), fingerprint=parameters_fingerprint(params),
                           payload=_pack(parts), relin=relin, rotations=rotations,
                           conjugation=conjugation, bootstrap=boot_kwargs,
                           nbytes=count * switching_key_bytes(params))
        return cls(context, sk, pk, rlk, gk, bks, upload)

    def encryptor(self) -> th.Encryptor:
        return th.Encryptor(self.context, self.public_key)

    def decryptor(self) -> th.Decryptor:
        return th.Decryptor(self.context, self.secret_key)

    def session_relin_key(self) -> Any:
        if self.relin_key is not None:
            return self.relin_key
        return self.bootstrapping_keys.relin_key if self.bootstrapping_keys is not None else None

    def evaluator(self) -> th.Evaluator:
        """An in-process Evaluator with the same keys as the server's (the reference)."""
        return th.Evaluator(self.context, relin_key=self.session_relin_key(),
                            galois_keys=self.galois_keys)

    def session_keys(self) -> SessionKeys:
        """The evaluation keys as a server's worker holds them (for in-process references)."""
        return SessionKeys(relin_key=self.session_relin_key(), galois_keys=self.galois_keys,
                           bootstrapping_keys=self.bootstrapping_keys,
                           bootstrap_config=_bootstrap_kwargs(self.upload.bootstrap),
                           nbytes=self.upload.nbytes)


# ---- uploads over HTTP: everything a client sends is checked before the server keeps it ----------
UPLOAD_FORMAT = 1
#: Galois rotations one upload may announce.
MAX_ROTATIONS = 4096
_PART_TYPES = {"relin": ("RelinKey",), "galois": ("GaloisKeys",),
               "bootstrapping": ("EvaluationKeys", "BootstrappingKeys")}


def _bootstrap_spec(params: th.Parameters) -> list[Arg]:
    half = params.n // 2

    def slots_ok(v: int) -> str | None:
        return None if v == 0 or not v & (v - 1) else f"{v} is not 0 or a power of two"

    return [Arg("slots", "int", default=0, minimum=0, maximum=half, check=slots_ok),
            Arg("cts_levels", "int", default=0, minimum=0, maximum=64),
            Arg("stc_levels", "int", default=0, minimum=0, maximum=64),
            Arg("evalmod_levels", "int", default=0, minimum=0, maximum=64),
            Arg("arcsine_degree", "int", default=0, minimum=0, maximum=64),
            Arg("min_keys", "bool", default=False),
            Arg("message_ratio_bits", "int", default=0, minimum=0, maximum=64)]


def check_bootstrap_options(spec: Any, params: th.Parameters) -> dict[str, Any] | None:
    """A session's Bootstrapper options from the network, typed and bounded (JobError names the
    problem); only the options given are kept."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise JobError("key upload: 'bootstrap' must be null or an object of Bootstrapper "
                       "options")
    checked = validate_args(_bootstrap_spec(params), spec, "bootstrap")
    return {k: checked[k] for k in spec}


def upload_from_request(meta: dict[str, Any], payload: bytes | memoryview,
                        allowed: Mapping[str, th.Parameters]) -> KeyUpload:
    """The server side of an HTTP session upload: the metadata and the key container checked
    against the parameter sets the server offers (`allowed`, by fingerprint). The parameter set
    comes from the server, never from the client; the loaded size (for the key budget) is counted
    from the keys' own headers. The keys' words are checked when a worker loads them."""
    if meta.get("format") != UPLOAD_FORMAT:
        raise JobError(f"key upload: format {meta.get('format')!r} (expected {UPLOAD_FORMAT})")
    fp = meta.get("fingerprint")
    if not isinstance(fp, str) or fp not in allowed:
        raise JobError("key upload: the keys' parameter set is not offered by this server "
                       f"(fingerprint {str(fp)[:16]}...; GET /v1/parameters lists those offered)")
    params = allowed[fp]
    for flag in ("relin", "conjugation"):
        if not isinstance(meta.get(flag), bool):
            raise JobError(f"key upload: {flag!r} must be true or false")
    rotations = meta.get("rotations")
    if not isinstance(rotations, list) or len(rotations) > MAX_ROTATIONS or not all(
            isinstance(r, int) and not isinstance(r, bool) and abs(r) < params.n
            for r in rotations):
        raise JobError(f"key upload: 'rotations' must be a list of at most {MAX_ROTATIONS} "
                       f"integers of magnitude below N = {params.n}")
    bootstrap = check_bootstrap_options(meta.get("bootstrap"), params)
    parts = _unpack(payload)
    count = 0
    info: dict[str, dict[str, Any]] = {}
    for name, data in parts.items():
        try:
            i = th.serialized_info(data)
        except th.Error as exc:
            raise JobError(f"key upload: part {name!r}: {exc}") from None
        if i["type"] not in _PART_TYPES[name]:
            raise JobError(f"key upload: part {name!r} holds a {i['type']}")
        if i["fingerprint"] != fp:
            raise JobError(f"key upload: part {name!r} was made for other parameters")
        if i["bytes"] != len(data):
            raise JobError(f"key upload: part {name!r} declares {i['bytes']} bytes, has "
                           f"{len(data)}")
        info[name] = i
        if name == "relin":
            count += 1
        elif name == "galois":
            count += len(i["galois_elements"])
        else:
            count += (len(i["galois_elements"]) + (1 if i["has_relin_key"] else 0)
                      + (2 if i["has_bootstrapping_keys"] else 0))
    boot = info.get("bootstrapping")
    if meta["relin"] and "relin" not in info and not (boot and boot["has_relin_key"]):
        raise JobError("key upload: a relinearization key was announced but is missing")
    if bootstrap is not None and not (boot and boot["has_bootstrapping_keys"]):
        raise JobError("key upload: bootstrapping keys were announced but are missing")
    return KeyUpload(params_json=params.to_json(), fingerprint=fp, payload=bytes(payload),
                     relin=meta["relin"], rotations=tuple(rotations),
                     conjugation=meta["conjugation"], bootstrap=bootstrap,
                     nbytes=count * switching_key_bytes(params))


def materialize(context: th.Context, upload: KeyUpload) -> SessionKeys:
    """The server side: an upload loaded on `context` (whose parameters must match). Every part is
    validated by the library before use (checksums, fingerprint, sizes)."""
    if parameters_fingerprint(context.params) != upload.fingerprint:
        raise JobError("key upload: the keys were made for other parameters than this context")
    parts = _unpack(upload.payload)
    limit = len(upload.payload)
    try:
        rlk = (th.RelinKey.from_bytes(context, parts["relin"], max_bytes=limit)
               if "relin" in parts else None)
        gk = (th.GaloisKeys.from_bytes(context, parts["galois"], max_bytes=limit)
              if "galois" in parts else None)
        bks = (th.BootstrappingKeys.from_bytes(context, parts["bootstrapping"], max_bytes=limit)
               if "bootstrapping" in parts else None)
    except th.Error as exc:
        raise JobError(f"key upload: the keys do not load: {type(exc).__name__}: {exc}") from exc
    if upload.relin and rlk is None:
        raise JobError("key upload: a relinearization key was announced but is missing")
    if upload.bootstrap is not None and bks is None:
        raise JobError("key upload: bootstrapping keys were announced but are missing")
    if rlk is None and bks is not None:
        rlk = bks.relin_key
    return SessionKeys(relin_key=rlk, galois_keys=gk, bootstrapping_keys=bks,
                       bootstrap_config=_bootstrap_kwargs(upload.bootstrap), nbytes=upload.nbytes)
