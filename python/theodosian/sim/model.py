"""The kernel model's constants (model.json): per family the instruction counts, shared-memory
use, occupancy and the efficiency fitted against measured H100 kernel times; the affinity model's
c1. ``python -m theodosian.sim fit`` refits them from bench/results (docs/sim.md, "Calibration").
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .documents import package_file, read_json, require_header
from .errors import SimInputError, require_number, require_object, require_str
from .kernels import FAMILIES

FORMAT = "theo-sim-model"
VERSION = 1

_FAMILY_FIELDS = {
    "instr_per_mac": dict(minimum=0),
    "instr_per_word": dict(minimum=0),
    "words_per_thread": dict(positive=True),
    "compute_factor": dict(positive=True),
    "memory_factor": dict(positive=True),
}


@dataclass
class Model:
    families: dict[str, dict[str, float]]
    c1: float
    l2_effective_fraction: float = 0.75
    source: str = ""
    fit: dict[str, Any] = field(default_factory=dict)
    variants: dict[str, Any] = field(default_factory=dict)
    variant: str = "measured"

    def family(self, name: str) -> dict[str, float]:
        return self.families[name]

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "source": self.source,
                "gpu": {"l2_effective_fraction": self.l2_effective_fraction},
                "families": self.families, "affinity": {"c1": self.c1},
                "variants": self.variants, "fit": self.fit}

    def with_variant(self, name: str | None) -> "Model":
        """The model with one of its kernel variants applied (``None`` / "measured": as is)."""
        if name in (None, "", "measured"):
            return self
        if name not in self.variants:
            raise SimInputError("model", "variants", f"no variant {name!r} (known: measured, "
                                f"{', '.join(sorted(self.variants))})")
        fams = {k: dict(v) for k, v in self.families.items()}
        for fam, over in self.variants[name].get("families", {}).items():
            fams[fam].update(over)
        return Model(families=fams, c1=self.c1, l2_effective_fraction=self.l2_effective_fraction,
                     source=self.source, fit=self.fit, variants=self.variants, variant=name)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=1)
            f.write("\n")


def from_json(doc: Any, source: str = "<model>") -> Model:
    require_header(doc, source, FORMAT, VERSION)
    fams = require_object(source, doc, "families", "")
    out: dict[str, dict[str, float]] = {}
    for name in FAMILIES:
        f = require_object(source, fams, name, "families")
        d: dict[str, float] = {}
        for k, v in f.items():
            d[k] = require_number(source, f, k, f"families.{name}")
        for k, kw in _FAMILY_FIELDS.items():
            d[k] = require_number(source, f, k, f"families.{name}", **kw)
        out[name] = d
    for k in ("passes", "shared_per_word_per_pass"):
        require_number(source, fams["NTT"], k, "families.NTT", positive=True)
    require_number(source, fams["BConv"], "table_reuse", "families.BConv", positive=True)
    aff = require_object(source, doc, "affinity", "")
    gpu = require_object(source, doc, "gpu", "")
    return Model(families=out, c1=require_number(source, aff, "c1", "affinity", minimum=0),
                 l2_effective_fraction=require_number(source, gpu, "l2_effective_fraction", "gpu",
                                                      minimum=0, maximum=1),
                 source=require_str(source, doc, "source", "", default=""),
                 fit=doc.get("fit", {}) if isinstance(doc.get("fit", {}), dict) else {},
                 variants=_variants(source, doc.get("variants", {})))


def _variants(source: str, v: Any) -> dict:
    if not isinstance(v, dict):
        raise SimInputError(source, "variants", "must be an object")
    for name, body in v.items():
        fams = body.get("families", {}) if isinstance(body, dict) else None
        if not isinstance(fams, dict):
            raise SimInputError(source, f"variants.{name}.families", "must be an object")
        for fam, over in fams.items():
            if fam not in FAMILIES:
                raise SimInputError(source, f"variants.{name}.families.{fam}",
                                    f"unknown family (known: {', '.join(FAMILIES)})")
            for k in over:
                require_number(source, over, k, f"variants.{name}.families.{fam}", minimum=0)
    return v


def default_model_path() -> str:
    return package_file("model.json")


def load_model(path: str | None = None, variant: str | None = None) -> Model:
    """model.json (or ``path``), with kernel variant ``variant`` applied."""
    source = path or default_model_path()
    return from_json(read_json(source), source).with_variant(variant)
