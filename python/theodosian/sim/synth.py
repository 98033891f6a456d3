"""Synthetic workload traces built from recorded primitive traces, for workloads whose encrypted
implementation is not in the library yet. Each is labelled synthetic in its meta and says where
its counts come from.

ResNet-20 (CIFAR-10, one image, the multiplexed-parallel-convolution implementation of Lee et
al., ICML 2022, which HMC-FHE evaluates): per convolution layer the op counts below, at the level
the layers run at after a bootstrapping (``layer`` traces: bootparam_40's level 9, 14 limbs), and
one bootstrapping per layer before its approximate ReLU. The counts are estimates from the layer
structure, not measured from an implementation:

* 19 3x3 convolutions (conv1, then 3 stages x 3 basic blocks x 2) + the final average pool and
  fully connected layer;
* a convolution: 8 rotations for the kernel taps plus log2(channels) for the channel sums plus
  the multiplexing gathers of the down-sampled stages (stage 1/2/3: 4 + 0, 5 + 2, 6 + 4 ->
  12 / 15 / 18 rotations), 9 x 4 plaintext multiplications and as many additions, one rescale;
* an approximate ReLU (composite minimax sign of degrees 15, 15, 27, baby-step giant-step):
  19 ciphertext multiplications with relinearization and rescale, 60 additions;
* average pool + FC: 16 rotations, 10 plaintext multiplications, 10 additions;
* 19 bootstrappings (one before each approximate ReLU).
"""

from __future__ import annotations

import os

from .errors import SimInputError
from .trace import Trace, concat, find_trace, load_trace

# (stage, rotations) of the 19 convolutions
_CONVS = [(1, 12)] + [(1, 12)] * 6 + [(2, 15)] * 6 + [(3, 18)] * 6
_PMULT_PER_CONV = 36
_RELU_HMULT = 19
_RELU_ADD = 60

RESNET20_COUNTS = {
    "bootstraps": len(_CONVS),
    "rotations": sum(r for _, r in _CONVS) + 16,
    "pmults": len(_CONVS) * _PMULT_PER_CONV + 10,
    "hadds": len(_CONVS) * (_PMULT_PER_CONV + _RELU_ADD) + 10,
    "hmults": len(_CONVS) * _RELU_HMULT,
    "rescales": len(_CONVS) + 1,
}


def _load(folder: str | None, name: str) -> Trace:
    if folder is None:
        return find_trace(name)
    path = os.path.join(folder, name + ".json")
    if not os.path.exists(path):
        raise SimInputError(path, "(file)", f"the synthetic workload needs the trace {name}")
    return load_trace(path)


def resnet20(boot: str = "bootparam_40-boot", layer_prefix: str = "bootparam_40-l14",
             folder: str | None = None) -> Trace:
    """The synthetic ResNet-20 trace: ``boot`` and the ``layer_prefix``-{hrot, pmult, hadd,
    hmult_rescale, rescale} traces (bundled names, or files in ``folder``)."""
    b = _load(folder, boot)
    rot = _load(folder, f"{layer_prefix}-hrot")
    pm = _load(folder, f"{layer_prefix}-pmult")
    add = _load(folder, f"{layer_prefix}-hadd")
    hm = _load(folder, f"{layer_prefix}-hmult_rescale")
    rs = _load(folder, f"{layer_prefix}-rescale")
    parts = []
    for i, (_stage, rots) in enumerate(_CONVS):
        layer = f"Layer{i + 1}"
        parts += [(rot, rots, f"{layer}/Conv"), (pm, _PMULT_PER_CONV, f"{layer}/Conv"),
                  (add, _PMULT_PER_CONV, f"{layer}/Conv"), (rs, 1, f"{layer}/Conv"),
                  (b, 1, f"{layer}/Boot"), (hm, _RELU_HMULT, f"{layer}/ReLU"),
                  (add, _RELU_ADD, f"{layer}/ReLU")]
    parts += [(rot, 16, "PoolFC"), (pm, 10, "PoolFC"), (add, 10, "PoolFC"), (rs, 1, "PoolFC")]
    meta = {"preset": b.meta.get("preset"), "synthetic": True,
            "synthetic_source": "theodosian.sim.synth.resnet20: op counts estimated from the "
            "ResNet-20 layer structure of Lee et al. (ICML 2022) over recorded primitive traces",
            "counts": RESNET20_COUNTS, "primitives": [b.source, rot.source, pm.source,
                                                      add.source, hm.source, rs.source]}
    for k in ("dnum", "alpha", "max_level", "cache_mib"):
        if k in b.meta:
            meta[k] = b.meta[k]
    return concat("resnet20-synthetic", parts, meta)
