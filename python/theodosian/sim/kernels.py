"""What each backend op is as a kernel: its paper kernel (Table II of HMC-FHE), its validation
family, and the static work the cost model and the affinity model use.

Static work of one op (from its trace record; constants per family in model.json):

* global bytes  -- the recorder's bytes read + written + tables (every word once), times the
  passes the GPU implementation makes over the data (the N = 2^16 NTT is two kernels, each reading
  and writing every word: docs/traffic-model.md);
* instructions  -- thread-level integer instructions: ``instr_per_mac`` per core modular
  multiply-add plus ``instr_per_word`` per word read or written (address, load/store, reduction);
* shared-memory instructions -- NTT: ``shared_per_word_per_pass`` per word and pass (the
  butterfly exchanges between register tiles); BConv: one table load per ``table_reuse`` MACs;
  the element-wise kernels and InnerP use none.

From these the paper's three static metrics (Section IV-A): MAI m = instructions / global bytes,
SMAI s = instructions / shared bytes (4 bytes per shared access), r = shared / all instructions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from .trace import Op

# Validation families (the NTT, BConv, KeyMult and element-wise).
FAMILIES = ("NTT", "BConv", "KeyMult", "Elementwise")

_FAMILY = {
    "ntt": "NTT", "intt": "NTT", "ntt_sub_mul_scalar": "NTT",
    "bconv": "BConv", "bconv_matmul": "BConv",
    "key_mult": "KeyMult", "key_mult_add_scaled": "KeyMult", "key_mult_automorphed": "KeyMult",
    "key_mult_rotations": "KeyMult", "key_mult_sums": "KeyMult",
}

# Table II's kernels (+ Copy for pure data movement: copies, zero fills, sampling, transfers).
PAPER_KERNELS = ("Add", "Sub", "TensorP", "iNTT", "NTT", "ConvU", "ConvD", "InnerP", "AMorph",
                 "Copy")

_PAPER = {
    "add": "Add", "add_batch": "Add", "add_scalar": "Add",
    "sub": "Sub", "sub_batch": "Sub", "neg": "Sub",
    "tensor": "TensorP", "mul": "TensorP", "mul_add": "TensorP", "mul_scalar": "TensorP",
    "mul_scalar_add": "TensorP", "sub_mul_scalar": "TensorP", "mul_scalar_sum": "TensorP",
    "mul_monomial": "TensorP",
    "ntt": "NTT", "ntt_sub_mul_scalar": "NTT", "intt": "iNTT",
    "key_mult": "InnerP", "key_mult_add_scaled": "InnerP", "key_mult_automorphed": "InnerP",
    "key_mult_rotations": "InnerP", "key_mult_sums": "InnerP",
    "automorphism": "AMorph", "automorphism_sum": "AMorph",
    "copy": "Copy", "fill_zero": "Copy", "sample_uniform": "Copy", "upload": "Copy",
    "download": "Copy",
}

# Ops whose input words are gathered through an automorphism (phi_g): under BaCP the gather
# crosses cubes.
PERMUTING = frozenset({"automorphism", "automorphism_sum", "key_mult_automorphed",
                       "key_mult_rotations"})


def family(op: str) -> str:
    return _FAMILY.get(op, "Elementwise")


def paper_kernel(o: Op) -> str:
    if o.op in ("bconv", "bconv_matmul"):
        return "ConvU" if "ModUp" in o.scope.split("/") else "ConvD"
    return _PAPER[o.op]


@dataclass(frozen=True)
class Work:
    """The static work of one op (one call)."""

    kernel: str            # paper kernel
    family: str            # validation family
    words: float           # words read + written (recorder's count, tables excluded)
    words_out: float       # words written
    bytes: float           # global bytes of one pass: read + written + tables
    read_bytes: float      # of which data read (tables excluded)
    write_bytes: float     # data written
    table_bytes: float     # tables (twiddles, BConv matrices)
    passes: int            # passes over the data on the GPU (NTT: 2 at N > 2^12)
    instr: float           # thread integer instructions
    shared_instr: float    # of which shared-memory accesses
    launches: int          # GPU kernels
    permuted_bytes: float  # bytes gathered through an automorphism (cross cubes under BaCP)
    log_n: int

    @property
    def gpu_bytes(self) -> float:
        return self.bytes * self.passes

    @property
    def mai(self) -> float:
        """Instructions per global byte (the paper's MAI)."""
        return self.instr / self.gpu_bytes if self.gpu_bytes > 0 else 0.0

    @property
    def smai(self) -> float:
        """Instructions per shared-memory byte (SMAI); 0 without shared memory."""
        return self.instr / (4.0 * self.shared_instr) if self.shared_instr > 0 else 0.0

    @property
    def ratio(self) -> float:
        """Shared-memory instructions / all instructions (SMI:TI)."""
        return self.shared_instr / self.instr if self.instr > 0 else 0.0


def ntt_passes(log_n: int, fam: dict) -> int:
    return 1 if log_n <= int(fam.get("single_pass_max_log_n", 12)) else int(fam.get("passes", 2))


MARKERS = frozenset({"fork", "end_fork", "join"})


def work(o: Op, model: "Model") -> Work:  # noqa: F821 - Model from .model
    fam_name = family(o.op)
    fam = model.family(fam_name)
    words_in = o.bytes_read / 4.0
    words_out = o.bytes_written / 4.0
    words = words_in + words_out
    log_n = o.n.bit_length() - 1
    passes = ntt_passes(log_n, fam) if fam_name == "NTT" else 1
    kernel = paper_kernel(o)
    macs = o.macs
    tile = fam.get("output_tile_rows", 0)
    if fam_name == "BConv" and tile > 0 and o.polys > 0 and o.limbs > 0:
        # tensor-core BConv: every conversion's output rows run in tiles of `tile` limbs
        # (src/backend/cuda/bconv_tensor.cu), so its MACs count as if rounded up to them
        mean = o.limbs / o.polys
        macs *= o.polys * math.ceil(mean / tile) * tile / o.limbs
    instr = macs * fam["instr_per_mac"] + words * fam["instr_per_word"]
    if kernel == "AMorph" or o.op in PERMUTING:
        instr += words_in * fam.get("instr_per_permuted_word", 0.0)
    if fam_name == "NTT":
        shared = words_out * fam["shared_per_word_per_pass"] * passes
    elif fam_name == "BConv":
        shared = o.macs / fam["table_reuse"]
    else:
        shared = 0.0
    permuted = 0.0
    if o.op in ("automorphism", "automorphism_sum"):
        permuted = o.bytes_read
    elif o.op == "key_mult_automorphed":
        # digits (d L words) of the 3 d L words key_mult reads
        permuted = max(0.0, o.bytes_read - (o.bytes_written / 2.0)) / 3.0
    elif o.op == "key_mult_rotations":
        # the digits are gathered once per rotation; rotations = output pairs
        rotations = max(1, o.polys // 2)
        out_pair_bytes = o.bytes_written / rotations  # 2 L N 4 per rotation
        limb_bytes = out_pair_bytes / 2.0
        keys = 2.0 * limb_bytes  # per digit: two key polys
        # bytes_read = digits + rotations * d * keys (+ add0): solve for d with digits = d L N 4
        d = max(1.0, round((o.bytes_read - limb_bytes) / (limb_bytes + rotations * keys)))
        permuted = rotations * d * limb_bytes
    launches = passes if fam_name == "NTT" else 1
    return Work(kernel=kernel, family=fam_name, words=words, words_out=words_out,
                bytes=o.bytes_read + o.bytes_written + o.table_bytes, read_bytes=o.bytes_read,
                write_bytes=o.bytes_written, table_bytes=o.table_bytes, passes=passes,
                instr=instr, shared_instr=shared, launches=launches, permuted_bytes=permuted,
                log_n=log_n)


@lru_cache(maxsize=64)
def automorphism_remote_fraction(log_n: int, cubes: int, samples: int = 32) -> float:
    """Fraction of the words an NTT-domain automorphism phi_g moves to another cube when the
    coefficient index is interleaved over ``cubes`` (BaCP: index mod cubes), averaged over the
    rotations g = 5^r, r = 1..samples (include/theo/ring/automorphism.h's index map). It tends to
    1 - 1/cubes."""
    if cubes <= 1:
        return 0.0
    import numpy as np

    n = 1 << log_n
    i = np.arange(n, dtype=np.int64)

    def bitrev(x):
        r = np.zeros_like(x)
        for b in range(log_n):
            r = (r << 1) | ((x >> b) & 1)
        return r

    m = bitrev(i)
    total = 0.0
    for r in range(1, samples + 1):
        k = pow(5, r, 2 * n)
        e = ((2 * m + 1) * k) & (2 * n - 1)
        src = bitrev((e - 1) >> 1)
        total += float(np.mean((src % cubes) != (i % cubes)))
    return total / samples
