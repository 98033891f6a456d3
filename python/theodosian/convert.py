"""A user's own network: a PyTorch CIFAR ResNet ``state_dict`` -> the library's model file.

The common CIFAR ResNet-20 layout (He et al. 2016, "option A" shortcuts; e.g. the widely used
``resnet20`` with a ``LambdaLayer`` shortcut)::

    conv1.weight  bn1.{weight,bias,running_mean,running_var[,num_batches_tracked]}
    layer{1,2,3}.{0,1,2}.conv1.weight  .bn1.*  .conv2.weight  .bn2.*
    linear.{weight,bias}  (or fc.{weight,bias})

Batch norm is folded into the convolutions here (float64, then stored as float32 with an
identity batch norm and ``bn_eps`` 0, so the library's own folding is exact). The result is a
ReLU model (``theodosian.cnn.ResNet``, ``activation="relu"``): plaintext logits with exact ReLU,
encrypted inference with AppReLU (``theodosian.ResNetInference``). Calibrate it on your images
(:func:`theodosian.cnn.calibrate`) before encrypted inference: AppReLU scales every activation's
input by its calibrated range.

Option-A shortcuts subsample by 2 and zero-pad the new channels. Implementations pad at the end
(``pad="end"``) or on both sides (``pad="both"``, ``F.pad(..., (0, 0, 0, 0, planes // 4,
planes // 4))``, the common CIFAR code); the library pads at the end, so for "both" the residual
stream's channels are permuted (conv outputs, batch norms, the next convs' inputs, the FC's
columns): the same function, another channel order inside.

Reads ``.npz`` (numpy only) and ``.pt`` / ``.pth`` (needs PyTorch). A missing, unexpected or
misshapen tensor is refused by name (``ValueError``); projection ("option B") shortcuts are not
supported.

    from theodosian import convert
    model = convert.load_pytorch_resnet("resnet20.pt")       # cnn.ResNet, BN folded
    model.meta["act_max_inputs"] = cnn.calibrate(model, x_train)
    model.save("resnet20.theocnn", dtype="f4")
"""

from __future__ import annotations

import os
import re
from typing import Dict, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import cnn

_BN = ("weight", "bias", "running_mean", "running_var")


def read_state_dict(path: str) -> Dict[str, np.ndarray]:
    """Tensors of a saved state_dict: ``.npz`` with numpy, ``.pt`` / ``.pth`` with PyTorch (a
    state_dict, or a checkpoint dict holding one under ``state_dict``)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npz":
        with np.load(path, allow_pickle=False) as z:
            return {k: np.asarray(z[k]) for k in z.files}
    if ext in (".pt", ".pth"):
        try:
            import torch
        except ImportError as e:
            raise ImportError(
                f"{path}: reading .pt / .pth files needs PyTorch (pip install torch); or save the "
                "state_dict as .npz: np.savez(path, **{k: v.cpu().numpy() for k, v in "
                "sd.items()})") from e
        obj = torch.load(path, map_location="cpu", weights_only=True)
        if isinstance(obj, Mapping) and "state_dict" in obj and isinstance(obj["state_dict"],
                                                                             Mapping):
            obj = obj["state_dict"]
        if not isinstance(obj, Mapping):
            raise ValueError(f"{path}: not a state_dict (got {type(obj).__name__})")
        return {k: v.detach().cpu().numpy() for k, v in obj.items()}
    raise ValueError(f"{path}: unknown extension {ext!r} (.npz, .pt or .pth)")


def _strip_prefix(state: Mapping[str, np.ndarray]) -> Dict[str, np.ndarray]:
    """DataParallel's "module." prefix, when every key has it."""
    keys = list(state)
    if keys and all(k.startswith("module.") for k in keys):
        return {k[len("module."):]: np.asarray(v) for k, v in state.items()}
    return {k: np.asarray(v) for k, v in state.items()}


def _architecture(state: Mapping[str, np.ndarray]) -> Tuple[Tuple[int, ...], int, int, int, str]:
    """(widths, blocks per stage, classes, input channels, fc name) from the tensors present."""
    if "conv1.weight" not in state:
        raise ValueError("missing tensor conv1.weight (not a CIFAR ResNet state_dict)")
    stages = sorted({int(m.group(1)) for k in state for m in [re.match(r"layer(\d+)\.", k)] if m})
    if not stages or stages != list(range(1, len(stages) + 1)):
        raise ValueError(f"stages {stages}: expected layer1, layer2, ... in order")
    blocks = sorted({int(m.group(1)) for k in state
                     for m in [re.match(r"layer1\.(\d+)\.", k)] if m})
    if blocks != list(range(len(blocks))):
        raise ValueError(f"layer1 blocks {blocks}: expected 0, 1, ... in order")
    widths = []
    for s in stages:
        name = f"layer{s}.0.conv1.weight"
        if name not in state:
            raise ValueError(f"missing tensor {name}")
        widths.append(int(state[name].shape[0]))
    fcs = [n for n in ("linear", "fc") if f"{n}.weight" in state]
    if len(fcs) != 1:
        raise ValueError("expected exactly one of linear.weight and fc.weight, found "
                         f"{[n + '.weight' for n in fcs] or 'neither'}")
    classes = int(state[fcs[0] + ".weight"].shape[0])
    return tuple(widths), len(blocks), classes, int(state["conv1.weight"].shape[1]), fcs[0]


def expected_shapes(widths: Sequence[int], blocks: int, classes: int, channels: int,
                    fc: str = "linear") -> Dict[str, Tuple[int, ...]]:
    """Every tensor a CIFAR ResNet state_dict of this shape holds (num_batches_tracked aside)."""
    out: Dict[str, Tuple[int, ...]] = {"conv1.weight": (widths[0], channels, 3, 3)}
    out.update({f"bn1.{p}": (widths[0],) for p in _BN})
    cin = widths[0]
    for s, w in enumerate(widths):
        for b in range(blocks):
            pre = f"layer{s + 1}.{b}."
            out[pre + "conv1.weight"] = (w, cin, 3, 3)
            out[pre + "conv2.weight"] = (w, w, 3, 3)
            for bn in ("bn1", "bn2"):
                out.update({f"{pre}{bn}.{p}": (w,) for p in _BN})
            cin = w
    out[f"{fc}.weight"] = (classes, widths[-1])
    out[f"{fc}.bias"] = (classes,)
    return out


def _check(state: Mapping[str, np.ndarray], want: Mapping[str, Tuple[int, ...]]) -> None:
    for name, shape in want.items():
        if name not in state:
            raise ValueError(f"missing tensor {name} (shape {shape})")
        got = tuple(state[name].shape)
        if got != shape:
            raise ValueError(f"tensor {name} has shape {got}, expected {shape}")
        if not np.all(np.isfinite(state[name])):
            raise ValueError(f"tensor {name} has a non-finite value")
        if name.endswith("running_var") and np.any(state[name] < 0):
            raise ValueError(f"tensor {name} has a negative variance")
    for name in state:
        if name in want or name.endswith("num_batches_tracked"):
            continue
        why = (" (projection shortcuts, option B, are not supported)"
               if re.search(r"\.(shortcut|downsample)\.", name) else "")
        raise ValueError(f"unexpected tensor {name}{why}")


def _stream_permutations(widths: Sequence[int], pad: str) -> list:
    """Per stage, perm[k] = the source model's channel of our residual-stream channel k."""
    perms = [np.arange(widths[0])]
    for s in range(1, len(widths)):
        cin, cout, prev = widths[s - 1], widths[s], perms[-1]
        if pad == "end":
            perms.append(np.arange(cout))
            continue
        if cout != 2 * cin:
            raise ValueError(f"pad='both' needs each stage to double the width ({cin} -> {cout})")
        shift = cout // 4
        carried = prev + shift  # our channel k < cin sits on the source's k + cout / 4
        rest = np.array([c for c in range(cout) if c not in set(carried.tolist())])
        perms.append(np.concatenate([carried, rest]))
    return perms


def convert_state_dict(state: Mapping[str, np.ndarray], image: int = 32, pad: str = "both",
                       bn_eps: float = 1e-5) -> cnn.ResNet:
    """A CIFAR ResNet state_dict -> ``cnn.ResNet`` (ReLU), batch norm folded. `pad`: how the
    option-A shortcut places the zero channels ("both" or "end", see the module docstring)."""
    if pad not in ("both", "end"):
        raise ValueError(f"pad {pad!r}: 'both' or 'end'")
    sd = _strip_prefix(state)
    widths, blocks, classes, channels, fc = _architecture(sd)
    _check(sd, expected_shapes(widths, blocks, classes, channels, fc))
    for s in range(1, len(widths)):
        if widths[s] < widths[s - 1]:
            raise ValueError(f"layer{s + 1} narrows the network ({widths[s - 1]} -> {widths[s]})")
    perm = _stream_permutations(widths, pad)
    f64 = {k: v.astype(np.float64) for k, v in sd.items()}

    def fold(conv: str, bn: str, out_perm: Optional[np.ndarray], in_perm: Optional[np.ndarray]):
        w = f64[conv]
        g, b = f64[bn + ".weight"], f64[bn + ".bias"]
        mu, var = f64[bn + ".running_mean"], f64[bn + ".running_var"]
        f = g / np.sqrt(var + bn_eps)
        wf = w * f[:, None, None, None]
        bf = b - f * mu
        if out_perm is not None:
            wf, bf = wf[out_perm], bf[out_perm]
        if in_perm is not None:
            wf = wf[:, in_perm]
        return wf, bf

    params: Dict[str, np.ndarray] = {}

    def put(conv: str, bn: str, w: np.ndarray, bias: np.ndarray) -> None:
        # The folded convolution with an identity batch norm carrying the bias (bn_eps 0).
        c = w.shape[0]
        params[conv] = w.astype(np.float32)
        params[bn + ".gamma"] = np.ones(c, np.float32)
        params[bn + ".beta"] = bias.astype(np.float32)
        params[bn + ".mean"] = np.zeros(c, np.float32)
        params[bn + ".var"] = np.ones(c, np.float32)

    put("stem.conv", "stem.bn", *fold("conv1.weight", "bn1", perm[0], None))
    cfg = cnn.ResNetConfig(image=image, channels=channels, widths=widths, blocks=blocks,
                           classes=classes, activation="relu")
    stage_in = 0
    for i, (name, _, _, _) in enumerate(cfg.block_names()):
        s, b = divmod(i, blocks)
        pre = f"layer{s + 1}.{b}."
        put(name + ".conv1", name + ".bn1",
            *fold(pre + "conv1.weight", pre + "bn1", None, perm[stage_in]))
        put(name + ".conv2", name + ".bn2",
            *fold(pre + "conv2.weight", pre + "bn2", perm[s], None))
        stage_in = s
    params["fc.weight"] = f64[fc + ".weight"][:, perm[-1]].astype(np.float32)
    params["fc.bias"] = f64[fc + ".bias"].astype(np.float32)
    model = cnn.ResNet(cfg, params, bn_eps=0.0)
    model.meta = {"dataset": "converted from a PyTorch state_dict (batch norm folded, "
                             f"option-A pad '{pad}')"}
    return model


def load_pytorch_resnet(path: str, image: int = 32, pad: str = "both",
                        bn_eps: float = 1e-5) -> cnn.ResNet:
    """read_state_dict + convert_state_dict."""
    return convert_state_dict(read_state_dict(path), image=image, pad=pad, bn_eps=bn_eps)
