"""theodosian: CKKS fully homomorphic encryption on NVIDIA GPUs (with a bit-exact CPU backend).

Approximate arithmetic on encrypted vectors of real or complex numbers; numpy float64/complex128
in and out.

Quick start::

    import numpy as np
    import theodosian as th

    ctx = th.Context("bootparam_40")                 # a bundled preset (see th.presets())
    keygen = th.KeyGenerator(ctx)
    sk = keygen.secret_key()
    ctx.relin_key = keygen.relin_key(sk)             # used by ct * ct
    ctx.galois_keys = keygen.galois_keys(sk, [1, 2]) # used by ct << r
    enc = th.Encryptor(ctx, keygen.public_key(sk))
    dec = th.Decryptor(ctx, sk)

    x = np.linspace(-1, 1, ctx.slots)
    ct = enc.encrypt(x)
    y = dec.decrypt(ct * ct + 0.5 * ct << 1)         # float64 array, ~ np.roll(x*x + 0.5*x, -1)

Operators: ``+ - *`` between Ciphertexts, Plaintexts, scalars and arrays (``*`` rescales once;
``ct * int`` is exact), ``ct << r`` / ``ct >> r`` rotate. :class:`Evaluator` has every operation
without implicit steps. Errors are :class:`Error` subclasses that are also ValueError, KeyError or
MemoryError as appropriate. Long calls release the GIL, so several threads may evaluate at once
with one Context.
"""

from __future__ import annotations

from . import _errors
from ._errors import (
    BackendError,
    ContextError,
    Error,
    LevelError,
    MissingKeyError,
    OutOfMemoryError,
    ParameterError,
    ScaleError,
    SecurityError,
)


def _locate_core() -> None:
    """Source checkout on sys.path (e.g. PYTHONPATH=python/) without a built extension next to
    this file: use the extension of another theodosian package further on sys.path (a build's
    <build>/python/theodosian or an installed one)."""
    import importlib.machinery
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))

    def has_core(folder: str) -> bool:
        return any(os.path.exists(os.path.join(folder, "_core" + s))
                   for s in importlib.machinery.EXTENSION_SUFFIXES)

    if has_core(here):
        return
    for entry in sys.path:
        candidate = os.path.join(os.path.abspath(entry or os.curdir), "theodosian")
        if candidate != here and has_core(candidate):
            __path__.append(candidate)
            return


_locate_core()

try:
    from . import _core
except ImportError as _exc:  # pragma: no cover - only without a built extension
    # The pure-Python parts (theodosian.sim) work without it; everything else raises this.
    _core = None
    _core_error = ImportError(
        "theodosian: the compiled extension theodosian._core is missing or failed to load "
        f"({_exc}). Install the package with `pip install .` from the repository root, or put a "
        "build's python/ folder (configured with -DTHEO_BUILD_PYTHON=ON) on PYTHONPATH."
    )

    def __getattr__(name: str):
        # the extension's names raise why it is missing; anything else (e.g. the submodule
        # "sim", which `from theodosian import sim` looks up first) is an ordinary miss
        if name in __all__:
            raise _core_error
        raise AttributeError(f"module 'theodosian' has no attribute {name!r}")

if _core is not None:
    from ._core import (
        BootstrappingKeys,
        Bootstrapper,
        ChebyshevSeries,
        Ciphertext,
        Context,
        Decryptor,
        DiagonalMatrix,
        Encoder,
        Encryptor,
        EvalMod,
        EvalModParams,
        EvaluationKeys,
        HostCiphertext,
        Evaluator,
        CaptureSequence,
        Graph,
        Helr,
        HelrBatch,
        HelrState,
        GaloisKeys,
        KeyGenerator,
        LinearTransform,
        Parameters,
        Plaintext,
        PolynomialEvaluator,
        PublicKey,
        RelinKey,
        SecretKey,
        chebyshev_fit,
        chebyshev_max_error,
        coeff_to_slot_matrices,
        cuda_available,
        helr_eta_schedule,
        helr_reference_train,
        least_squares_fit,
        max_log2_pq_128,
        plan_levels,
        presets,
        serialized_info,
        sigmoid_least_squares,
        slot_to_coeff_matrices,
    )

    __version__: str = str(getattr(_core, "__version__"))

__all__ = [
    "__version__",
    # parameters and context
    "Parameters",
    "presets",
    "max_log2_pq_128",
    "cuda_available",
    "Context",
    # keys
    "KeyGenerator",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "EvaluationKeys",
    # data
    "Encoder",
    "Plaintext",
    "Ciphertext",
    "HostCiphertext",
    "Encryptor",
    "Decryptor",
    "Evaluator",
    "Graph",
    "CaptureSequence",
    # circuits
    "ChebyshevSeries",
    "chebyshev_fit",
    "chebyshev_max_error",
    "PolynomialEvaluator",
    "DiagonalMatrix",
    "LinearTransform",
    "coeff_to_slot_matrices",
    "slot_to_coeff_matrices",
    "EvalModParams",
    "EvalMod",
    "Bootstrapper",
    "BootstrappingKeys",
    # encrypted ML
    "least_squares_fit",
    "sigmoid_least_squares",
    "plan_levels",
    "Helr",
    "HelrState",
    "HelrBatch",
    "helr_eta_schedule",
    "helr_reference_train",
    # serialization (every object also has to_bytes / from_bytes / save / load / pickle)
    "serialized_info",
    # errors
    *_errors.__all__,
]

# Encrypted CNNs (cnn_bindings.cpp, activation_bindings.cpp); the plaintext side (model, training, model files) is the
# pure-Python module theodosian.cnn.
if _core is not None:
    from ._core import (
        CnnLinearLayer,
        CompositeSign,
        OddMinimaxFit,
        ResNetInference,
        ResNetKeys,
        ResNetModel,
        TensorLayout,
        app_relu,
        composite_sign,
        conv2d_bias,
        conv2d_matrix,
        fc_output_slot,
        linear_output_period,
        minimax_odd_sign,
        pooled_fc_matrix,
        shortcut_matrix,
        spatial_sum,
        spatial_sum_rotations,
    )

__all__ += [
    # composite minimax sign and AppReLU (activation_bindings.cpp)
    "minimax_odd_sign",
    "OddMinimaxFit",
    "CompositeSign",
    "composite_sign",
    "app_relu",
    "TensorLayout",
    "conv2d_matrix",
    "conv2d_bias",
    "shortcut_matrix",
    "pooled_fc_matrix",
    "fc_output_slot",
    "linear_output_period",
    "spatial_sum",
    "spatial_sum_rotations",
    "CnnLinearLayer",
    "ResNetModel",
    "ResNetInference",
    "ResNetKeys",
]
