"""Evaluation keys that leave the client: the one place that knows how keys travel.

A client makes its keys with :meth:`ClientKeys.generate` (secret key, public key, and the evaluation
keys a session needs: relinearization, rotations, bootstrapping) and uploads ``keys.upload`` once
when it opens a session. The server turns an upload back into usable keys with
:func:`materialize` whenever a worker needs them (first use, or after LRU eviction).

Two transports, chosen by :func:`key_transport`:

* ``"compact"``: the keys' own serialization (``to_bytes(compact=True)`` / ``from_bytes``), when the
  library has it. The server never learns the secret key.
* ``"keygen-seed"``: for builds without key serialization. The client draws a fresh 32-byte seed
  and makes its keys with ``KeyGenerator(ctx, seed)``; the upload carries that seed and the server
  makes bit-identical keys with the same calls. **The seed determines the secret key**, so this
  hands the server the secret key: it is refused unless the client passes
  ``insecure_key_transport=True`` and the server was started with the same opt-in. Tests and
  benchmarks only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
import struct
from typing import Any, Mapping, Sequence

import theodosian as th

from .errors import JobError, ServeError

#: Galois keys per Galois element, relin key, bootstrapping keys: every switching key has
#: dnum digits of 2 polynomials over Q_max u P (u32 words).
_WORD_BYTES = 4


def parameters_fingerprint(params: th.Parameters) -> str:
    """A hex fingerprint of a parameter set: SHA-256 over its canonical JSON without the
    informational fields (name, comment). Two sets with the same fingerprint make the same
    Context, so ciphertexts and keys move between them."""
    fields = json.loads(params.to_json())
    for informational in ("name", "comment"):
        fields.pop(informational, None)
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def switching_key_bytes(params: th.Parameters) -> int:
    """Memory of one switching key once materialized (relin key, one Galois key, ...)."""
    return params.dnum * 2 * (params.max_limbs + params.alpha) * params.n * _WORD_BYTES


def key_transport() -> str:
    """'compact' when this build serializes keys, else 'keygen-seed'."""
    needed = (th.RelinKey, th.GaloisKeys, th.BootstrappingKeys)
    if all(hasattr(cls, "to_bytes") and hasattr(cls, "from_bytes") for cls in needed):
        return "compact"
    return "keygen-seed"


@dataclasses.dataclass(frozen=True)
class KeyUpload:
    """What a client sends once per session: which keys, for which parameters, and their bytes.

    ``payload`` is the compact key bytes (transport 'compact') or the key-generation seed
    (transport 'keygen-seed'). ``nbytes`` is the memory the keys take once materialized on a
    worker (used for the key-memory budget)."""

    params_json: str
    fingerprint: str
    transport: str
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
        return f"{', '.join(parts) or 'no keys'} ({self.transport}, {self.nbytes / 2**20:.1f} MiB)"

    def parameters(self) -> th.Parameters:
        return th.Parameters.from_json(self.params_json)


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
    allowed = {"slots", "cts_levels", "stc_levels", "evalmod_levels", "arcsine_degree",
               "min_keys", "message_ratio_bits"}
    unknown = set(spec) - allowed
    if unknown:
        raise ValueError(f"bootstrap: unknown Bootstrapper options {sorted(unknown)}; "
                         f"allowed: {sorted(allowed)}")
    return dict(spec)


def _estimate_nbytes(params: th.Parameters, relin: bool, galois_count: int,
                     boot_rotations: int | None) -> int:
    keys = (1 if relin else 0) + galois_count
    if boot_rotations is not None:
        # relin + conjugation + rotations + the two encapsulation keys
        keys += 1 + 1 + boot_rotations + 2
    return keys * switching_key_bytes(params)


# ---- compact container (transport 'compact') ----------------------------------------------------
# A flat list of named byte strings: magic, count, then (name length, name, data length, data).
_MAGIC = b"THEOKEYS"


def _pack(parts: Mapping[str, bytes]) -> bytes:
    out = [_MAGIC, struct.pack("<I", len(parts))]
    for name, data in parts.items():
        raw = name.encode()
        out += [struct.pack("<I", len(raw)), raw, struct.pack("<Q", len(data)), data]
    return b"".join(out)


def _unpack(blob: bytes) -> dict[str, bytes]:
    view = memoryview(blob)
    if bytes(view[:8]) != _MAGIC:
        raise JobError("key upload: not a key container (bad magic)")
    pos = 8

    def take(n: int) -> memoryview:
        nonlocal pos
        if pos + n > len(view):
            raise JobError("key upload: truncated key container")
        chunk = view[pos:pos + n]
        pos += n
        return chunk

    (count,) = struct.unpack("<I", take(4))
    parts: dict[str, bytes] = {}
    for _ in range(count):
        (name_len,) = struct.unpack("<I", take(4))
        name = bytes(take(name_len)).decode()
        (data_len,) = struct.unpack("<Q", take(8))
        parts[name] = bytes(take(data_len))
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
                 insecure_key_transport: bool = False) -> "ClientKeys":
        """Makes a secret key and the evaluation keys a session needs.

        relin: a relinearization key (products). rotations / conjugation: Galois keys.
        bootstrap: True or Bootstrapper options (slots, cts_levels, ...) for bootstrapping keys.
        insecure_key_transport: allow the 'keygen-seed' transport (see the module doc) when this
        build cannot serialize keys; refused otherwise."""
        boot_kwargs = _bootstrap_kwargs(bootstrap)
        transport = key_transport()
        if transport == "keygen-seed" and not insecure_key_transport:
            raise ServeError(
                "this build of theodosian cannot serialize keys, so a session's keys can only "
                "travel as their key-generation seed, which reveals the secret key to the server. "
                "Pass insecure_key_transport=True to accept that (tests, benchmarks, a server you "
                "trust with the secret key).")
        seed = secrets.token_bytes(32) if transport == "keygen-seed" else None
        made = _make_keys(context, seed, relin, tuple(rotations), conjugation, boot_kwargs)
        sk, pk, rlk, gk, bks, boot_rotations = made
        params = context.params
        upload_fields = dict(
            params_json=params.to_json(), fingerprint=parameters_fingerprint(params),
            transport=transport, relin=relin, rotations=tuple(int(r) for r in rotations),
            conjugation=conjugation, bootstrap=boot_kwargs,
            nbytes=_estimate_nbytes(params, relin, len(gk) if gk is not None else 0,
                                    boot_rotations))
        if transport == "keygen-seed":
            payload = seed
        else:
            parts = {}
            if rlk is not None:
                parts["relin"] = rlk.to_bytes(compact=True)
            if gk is not None:
                parts["galois"] = gk.to_bytes(compact=True)
            if bks is not None:
                parts["bootstrapping"] = bks.to_bytes(compact=True)
            payload = _pack(parts)
        assert payload is not None
        upload = KeyUpload(payload=payload, **upload_fields)
        return cls(context, sk, pk, rlk, gk, bks, upload)

    def encryptor(self) -> th.Encryptor:
        return th.Encryptor(self.context, self.public_key)

    def decryptor(self) -> th.Decryptor:
        return th.Decryptor(self.context, self.secret_key)

    def evaluator(self) -> th.Evaluator:
        """An in-process Evaluator with the same keys as the server's (the reference)."""
        return th.Evaluator(self.context, relin_key=self.session_relin_key(),
                            galois_keys=self.galois_keys)

    def session_relin_key(self) -> Any:
        if self.relin_key is not None:
            return self.relin_key
        return self.bootstrapping_keys.relin_key if self.bootstrapping_keys is not None else None

    def session_keys(self) -> SessionKeys:
        """The evaluation keys as a server's worker holds them (for in-process references)."""
        return SessionKeys(relin_key=self.session_relin_key(), galois_keys=self.galois_keys,
                           bootstrapping_keys=self.bootstrapping_keys,
                           bootstrap_config=_bootstrap_kwargs(self.upload.bootstrap),
                           nbytes=self.upload.nbytes)


def _make_keys(context: th.Context, seed: bytes | None, relin: bool, rotations: tuple[int, ...],
               conjugation: bool, boot_kwargs: dict[str, Any] | None):
    """The fixed sequence of key-generation calls (the 'keygen-seed' transport replays it)."""
    kg = th.KeyGenerator(context, seed=seed) if seed is not None else th.KeyGenerator(context)
    sk = kg.secret_key()
    pk = kg.public_key(sk)
    rlk = kg.relin_key(sk) if relin else None
    gk = (kg.galois_keys(sk, list(rotations), conjugation=conjugation, progress=False)
          if rotations or conjugation else None)
    bks = None
    boot_rotations = None
    if boot_kwargs is not None:
        boot = th.Bootstrapper(context, **boot_kwargs)
        bks = boot.generate_keys(kg, sk, progress=False)
        boot_rotations = len(boot.rotations())
    return sk, pk, rlk, gk, bks, boot_rotations


def materialize(context: th.Context, upload: KeyUpload, *, allow_keygen_seed: bool) -> SessionKeys:
    """The server side: an upload made usable with `context` (whose parameters must match)."""
    if parameters_fingerprint(context.params) != upload.fingerprint:
        raise JobError("key upload: the keys were made for other parameters than this context")
    if upload.transport == "keygen-seed":
        if not allow_keygen_seed:
            raise ServeError(
                "key upload refused: transport 'keygen-seed' reveals the secret key; this server "
                "was not started with allow_insecure_key_transport=True")
        if len(upload.payload) != 32:
            raise JobError("key upload: a key-generation seed is 32 bytes")
        _, _, rlk, gk, bks, _ = _make_keys(context, upload.payload, upload.relin,
                                           upload.rotations, upload.conjugation,
                                           _bootstrap_kwargs(upload.bootstrap))
    elif upload.transport == "compact":
        parts = _unpack(upload.payload)
        try:
            rlk = th.RelinKey.from_bytes(context, parts["relin"]) if "relin" in parts else None
            gk = th.GaloisKeys.from_bytes(context, parts["galois"]) if "galois" in parts else None
            bks = (th.BootstrappingKeys.from_bytes(context, parts["bootstrapping"])
                   if "bootstrapping" in parts else None)
        except th.Error as exc:
            raise JobError(f"key upload: the keys do not load: {exc}") from exc
    else:
        raise JobError(f"key upload: unknown transport {upload.transport!r}")
    if rlk is None and bks is not None:
        rlk = bks.relin_key
    return SessionKeys(relin_key=rlk, galois_keys=gk, bootstrapping_keys=bks,
                       bootstrap_config=_bootstrap_kwargs(upload.bootstrap), nbytes=upload.nbytes)
