#pragma once
// Host-callable launchers of the CUDA backend's kernels. Argument structs are passed to kernels by
// value (kernel parameter space), so a launch needs no argument upload and can be graph-captured.
// Launchers check nothing about shapes (the backend does); they check the launch itself.

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <span>

#include "theo/math/modarith.h"
#include "theo/ring/basis.h"

namespace theo::cuda {

// Polys per batched NTT / add launch; larger batches are split into several launches.
inline constexpr u32 kMaxBatch = 16;
// Limbs per NTT launch (one grid row each); larger batches are split into several launches.
inline constexpr u32 kMaxNttLimbs = 256;
// Inputs per automorphism_sum / digits per key_mult launch; more are chained with accumulation.
inline constexpr u32 kMaxTerms = 16;

struct ConstPtrs {
  const u32* p[kMaxTerms];
};
// One Montgomery-form constant per limb (c * 2^32 mod q).
struct LimbConsts {
  u32 v[kMaxLimbs];
};

// Per-prime tables of the ring, uploaded once by the backend. Indexed by PrimeId.
struct RingTables {
  const Modulus* mod = nullptr;  // [prime]
  const i32* fwd = nullptr;      // [prime * N + m] = centered mont(psi^brev(m))
  const i32* inv = nullptr;      // [prime * N + m] = centered mont(psi^-brev(m))
  u32 log_n = 0;
  // Shoup pairs {w, floor(w 2^32 / q)} of the canonical psi^brev(m) / psi^-brev(m): the
  // register-resident NTT kernels multiply with one mul.hi and two mul.lo instead of Montgomery's
  // four multiplies.
  const uint2* fwd_shoup = nullptr;  // [prime * N + m]
  const uint2* inv_shoup = nullptr;  // [prime * N + m]
  // The w' halves alone, for the row phase, whose twiddles (255 per row, none shared between rows)
  // are as much DRAM traffic as the data with pairs: w = ceil(w' q / 2^32) for q < 2^31.
  const u32* fwd_wp = nullptr;  // [prime * N + m]
  const u32* inv_wp = nullptr;  // [prime * N + m]
  // Row factors of the register row kernels' twiddles made on the fly (N = 2^(4e),
  // ntt_register.cu): for row r < 2^(2e) and stage j < e of the second register pass, the
  // Montgomery form (centered) of psi^(brev_2e(r) 2^(e - j)) (inverse: psi^-(...)), kRowFactors
  // words per row; nullptr for other N.
  static constexpr u32 kRowFactors = 4;
  const i32* fwd_rowf = nullptr;  // [(prime * 2^(2e) + r) * kRowFactors + j]
  const i32* inv_rowf = nullptr;  // [(prime * 2^(2e) + r) * kRowFactors + j]
};

// Tunables of the two-phase NTT (N = N1 x N2). Phase 1 transforms columns of stride N2 (the first
// log N1 Cooley-Tukey stages), phase 2 contiguous rows of N2 words (the rest). Each block holds a
// tile of 2^tile_log words in shared memory.
struct NttConfig {
  u32 log_n1 = 0;     // 0: log N / 2
  u32 tile_log = 11;  // words per block = 2^tile_log (clamped to N)
  u32 threads = 256;  // threads per block (<= 512 and <= tile / 2)
  u32 radix_log = 3;  // stages per register pass: 3 (radix 8, 40 registers) or 4 (radix 16)
  // Register-resident kernels when N = 2^(4e), e in {3, 4} (N = 2^12, 2^16) and the split is the
  // default: each phase loads straight into registers, one shared-memory exchange, one barrier.
  // 0 forces the shared-memory tile kernels above (tests, before/after benchmarks).
  u32 fast = 1;
  // Register row kernels: how many stages of the second pass, counted from its last (the stages
  // with the most twiddles: 8, 4, 2, 1 per thread at N = 2^16), make their twiddles on the fly as
  // (row-0 twiddle) x (row factor), Cheddar's OT: from a few KB per prime that stay in L1 instead
  // of the table's N words per limb from L2 / DRAM, at the price of Montgomery butterflies and one
  // multiply per twiddle. 0: every twiddle from the table; counts round down to 0, 1, 2 or e.
  u32 row_otf = 2;
  // Register row kernels. The one-tile kernel runs six 256-thread blocks per SM at 40 registers;
  // the persistent kernel (ntt_rows_reg_persistent) at most rows_resident blocks per SM (and no
  // more than its occupancy, 3 at ~80 registers), each looping over tiles with the next tile's
  // words loaded while it transforms this one. A launch takes the persistent kernel when no block
  // gets more than rows_persistent_tiles tiles; rows_resident = 0 or rows_persistent_tiles = 0:
  // never. Measured on the H100 (docs/performance-journal.md, "a persistent register row
  // kernel"): at one or two tiles per block it
  // wins (the registers to batch every load, then the prefetch), at four the six-block kernel's
  // occupancy does.
  u32 rows_resident = 3;
  u32 rows_persistent_tiles = 2;
  // Register column kernels at N = 2^16: a launch that fits one wave of two 512-thread blocks per
  // SM takes the 64-register build instead of the 40-register one (three blocks per SM); 0: never.
  u32 cols_wide = 1;
};

// One poly of an NTT launch. Its limbs in the launch are listed by NttLimb; limb l of it is read
// at src + l N and written at dst + l N.
struct NttPoly {
  const u32* src = nullptr;   // read by the first phase (== dst in place)
  u32* dst = nullptr;         // written by the first phase, transformed in place by the second
  u32* input_copy = nullptr;  // nullable: receives the words the first phase reads
  // Forward epilogue (nullable): on limbs [sub_first, sub_first + sub_limbs) the last phase
  // stores (sub_(l - sub_first) - y_l) * s_l instead of y_l.
  const u32* sub = nullptr;
  u32 sub_first = 0;
  u32 sub_limbs = 0;
};
// One limb of an NTT launch (grid row blockIdx.y): ref packs the poly's index in NttBatch::poly
// (bits 16 and up), the limb of that poly (bits 8-15) and its prime id (bits 0-7); c = the
// Montgomery pre- (forward) or post-multiplier (inverse, N^-1 folded in); s = the Montgomery
// epilogue multiplier.
struct NttLimb {
  u32 ref = 0;
  u32 c = 0;
  u32 s = 0;
};
static_assert(kMaxLimbs <= 256 && sizeof(PrimeId) == 1, "NttLimb::ref has 8 bits per limb index");
constexpr u32 ntt_limb_ref(u32 poly, u32 limb, u32 prime) {
  return poly << 16 | limb << 8 | prime;
}
__host__ __device__ constexpr u32 ntt_limb_poly(u32 ref) {
  return ref >> 16;
}
__host__ __device__ constexpr u32 ntt_limb_index(u32 ref) {
  return (ref >> 8) & 0xffu;
}
__host__ __device__ constexpr u32 ntt_limb_prime(u32 ref) {
  return ref & 0xffu;
}
// Passed as a kernel parameter (about 3.7 KB; CUDA >= 12.1 allows 32 KB), so a launch needs no
// upload and can be graph-captured.
struct NttBatch {
  NttPoly poly[kMaxBatch];
  NttLimb limb[kMaxNttLimbs];
};
// Whether launch_kernel (backend/cuda/launch.cuh) asks for programmatic dependent launch.
// Process-wide (the attribute belongs to the launch, and the kernels are safe either way); CUDA
// backends set it from Tuning::programmatic_launch when made or retuned.
bool programmatic_launch();
void set_programmatic_launch(bool on);

// The first `limbs` limbs of `b`. pre_consts: the forward multiplies by c (the inverse always
// does); input_copy: every poly of b has one; epilogue: forward only, some poly has a sub operand.
void launch_ntt(const RingTables& t, const NttConfig& cfg, const NttBatch& b, u32 limbs,
                bool pre_consts, bool input_copy, bool epilogue, bool inverse, cudaStream_t s);

// ---- element-wise -------------------------------------------------------------------------------
enum class EwOp {
  kAdd,           // out0 = a + b
  kSub,           // out0 = a - b
  kNeg,           // out0 = -a
  kMul,           // out0 = a * b
  kMulAdd,        // out0 = a * b + c
  kMulScalar,     // out0 = a * s
  kAddScalar,     // out0 = a + s (s canonical, not Montgomery)
  kMulScalarAdd,  // out0 = a * s + b
  kSubMulScalar,  // out0 = (a - b) * s
  kTensor,        // in (a0, a1, b0, b1): out0 = a0 b0, out1 = a0 b1 + a1 b0, out2 = a1 b1
};
struct EwArgs {
  const u32* in[4] = {};
  u32* out[3] = {};
};
// consts: per-limb scalars (Montgomery form for the multiplying ops, canonical for kAddScalar).
void launch_elementwise(EwOp op, const EwArgs& args, u32 n, const Basis& basis, const Modulus* mods,
                        const LimbConsts* consts, u32 block_threads, cudaStream_t s);

// out_k = a_k + b_k (or a_k - b_k) for k < count, polys of one basis, every pointer 16-byte
// aligned and n % 4 == 0. One launch over all polys, one 16-byte vector per thread; l2_bytes (the
// device's L2 size) decides whether outputs are written with streaming (evict-first) stores.
struct AddBatch {
  const u32* a[kMaxBatch];
  const u32* b[kMaxBatch];
  u32* out[kMaxBatch];
};
void launch_add_batch(bool subtract, const AddBatch& t, u32 count, u32 n, const Basis& basis,
                      const Modulus* mods, std::size_t l2_bytes, cudaStream_t s);

// out = sum_k a_k * c_k (+ out when accumulate), c_k one Montgomery-form constant per limb.
// Constants travel as kernel parameters (about 8 KB: CUDA >= 12.1 allows 32 KB), so the launch
// needs no upload and can be graph-captured.
inline constexpr u32 kScalarSumTerms = 8;
struct ScalarSumArgs {
  const u32* a[kScalarSumTerms];
  u32 c[kScalarSumTerms][kMaxLimbs];
};
void launch_mul_scalar_sum(const ScalarSumArgs& args, u32 terms, u32* out, bool accumulate, u32 n,
                           const Basis& basis, const Modulus* mods, u32 block_threads,
                           cudaStream_t s);

// EventTimer's stream hold: a one-thread kernel that spins until *release (mapped host memory)
// is nonzero, or gives up after 0.2 s and sets *timed_out.
void launch_hold_stream(const u32* release, u32* timed_out, cudaStream_t s);

// out0 = sum_k d_k kb_k, out1 = sum_k d_k ka_k (+ previous out when accumulate); galois != 0
// reads every d_k through phi_galois (NTT-domain automorphism); add0 (optional, out0's shape) is
// added to out0, read through phi_galois likewise.
// Scaled terms of key_mult_add_scaled: out0 += s * a0, out1 += s * a1 (s Montgomery, per limb).
struct ScaledAdds {
  const u32* a0 = nullptr;
  const u32* a1 = nullptr;
  LimbConsts s{};
};
void launch_key_mult(const ConstPtrs& d, const ConstPtrs& kb, const ConstPtrs& ka, u32 terms,
                     u32* out0, u32* out1, bool accumulate, u32 n, const Basis& basis,
                     const Modulus* mods, cudaStream_t s, u32 galois = 0, const u32* add0 = nullptr,
                     const ScaledAdds* scaled = nullptr);

// key_mult_rotations (Backend::key_mult_rotations): rotations of one set of digits per launch.
inline constexpr u32 kRotBlock = 1024;  // words of a digit block (a power of two, <= N)
inline constexpr u32 kMaxRotations = 8;
inline constexpr u32 kMaxRotDigits = 8;
struct RotationArgs {
  const u32* d[kMaxRotDigits] = {};
  const u32* kb[kMaxRotations][kMaxRotDigits] = {};
  const u32* ka[kMaxRotations][kMaxRotDigits] = {};
  u32* out0[kMaxRotations] = {};
  u32* out1[kMaxRotations] = {};
  u32 g[kMaxRotations] = {};      // Galois elements
  u32 g_inv[kMaxRotations] = {};  // their inverses mod 2N
  const u32* add0 = nullptr;      // nullable: phi_g(add0) joins every out0
  u32 digits = 0, rotations = 0;
};
// Needs n a multiple of kRotBlock and every pointer 16-byte aligned (the caller checks).
void launch_key_mult_rotations(const RotationArgs& a, u32 n, const Basis& basis,
                               const Modulus* mods, cudaStream_t s);

// key_mult_sums (Backend::key_mult_sums): up to kMaxSums sums over up to kMaxSumTerms shared
// (b, a) terms per launch; a null d[g][k] leaves term k out of sum g.
inline constexpr u32 kMaxSums = 4;
inline constexpr u32 kMaxSumTerms = 32;
struct SumsArgs {
  const u32* b[kMaxSumTerms] = {};
  const u32* a[kMaxSumTerms] = {};
  const u32* d[kMaxSums][kMaxSumTerms] = {};
  u32* out0[kMaxSums] = {};
  u32* out1[kMaxSums] = {};
  u32 terms = 0, sums = 0;
};
// Needs n a multiple of 4 and every pointer 16-byte aligned (the caller checks).
void launch_key_mult_sums(const SumsArgs& a, u32 n, const Basis& basis, const Modulus* mods,
                          cudaStream_t s);

// out = a * X^k in the NTT domain; k reduced mod 2N by the caller.
void launch_mul_monomial(const RingTables& t, const u32* a, u32 k, u32* out, u32 n,
                         const Basis& basis, cudaStream_t s);

// ---- automorphism -------------------------------------------------------------------------------
struct GaloisList {
  u32 k[kMaxTerms];
};
// out = sum_j phi_{k_j}(in_j) (+ out when accumulate).
void launch_automorphism_sum(const ConstPtrs& ins, const GaloisList& ks, u32 terms, u32* out,
                             bool accumulate, u32 log_n, const Basis& basis, const Modulus* mods,
                             cudaStream_t s);

// ---- basis conversion ---------------------------------------------------------------------------
// Device tables of one BConv plan.
struct BConvDevice {
  const Modulus* src_mod = nullptr;  // [j]
  const Modulus* dst_mod = nullptr;  // [i]
  const u32* src_hat_inv = nullptr;  // [j] mont((Q/s_j)^-1 mod s_j)
  const i32* matrix = nullptr;       // [i * src + j] centered mont((Q/s_j) mod d_i)
  const double* src_inv = nullptr;   // [j] 1.0 / s_j (exact mode)
  const i32* q_mod_dst = nullptr;    // [i] centered mont(Q mod d_i) (exact mode)
  u32 src_size = 0;
  u32 dst_size = 0;
  bool exact = false;  // subtract round(sum t_j / s_j) * Q (the exact-BConv contract)
  // Blocked kernel: fold the 64-bit accumulators every fold_steps 4-term steps; 0 = never (the
  // plan bounded sum_j max|t_j| |M_ij| below 2^63 for every row, so no sum can overflow).
  u32 fold_steps = 1;
  // Tensor-core kernel (bconv_tensor_table.h): the byte-split A fragments and per-row constants,
  // and r0 = ceil(src / 4); r0 = 0: no such table (unrefined plan or more than 16 sources).
  const u32* tc_frags = nullptr;
  const i32* tc_rows = nullptr;
  u32 tc_r0 = 0;
};
// Conversions per launch of launch_bconv_matmul_batch (larger batches take several launches).
inline constexpr u32 kMaxBConvBatch = 16;
// Source bases up to this size take the small-source kernel (one accumulator, rows in sequence).
inline constexpr u32 kBConvSmallMaxSrc = 16;
struct BConvConfig {
  // 1 (default): the blocked kernel (t_j once per coefficient in shared memory, 4 coefficients x
  // up to 4 output rows per thread) wherever its shape rules hold (n a multiple of 128, tables
  // within 48 KB of shared memory); 0: the per-coefficient tile kernel below for every shape
  // (tests, before/after benchmarks).
  u32 blocked = 1;
  u32 dst_tile = 0;  // tile kernel: output limbs per thread in registers (4, 8, 16; 0 = by dst)
  // Threads per block, one coefficient each: tile kernel any of 32..1024; blocked kernel 128 or
  // 256 (coefficients per block; halved when the tables would not fit).
  u32 threads = 256;
  // Small-source kernel (|S| <= kBConvSmallMaxSrc): output rows per block. 0 (default) keeps the
  // blocked / tile kernels: on the H200 the small kernel measured no faster than the tile kernel
  // for 12 -> 48 and ~20% slower on ModUp shapes (instruction-bound: ~180 per output word).
  u32 small_rows = 0;
  // 1 (default): conversions whose plan has a tensor-core table (refined plans, up to 16 sources;
  // n a multiple of 128) take the tensor-core kernel; 0: the kernels above.
  u32 tensor = 1;
};
// const_mult: input is x (full BConv); otherwise input already holds [x_j (Q/s_j)^-1]_{s_j}.
void launch_bconv(const BConvDevice& b, const BConvConfig& cfg, const u32* in, u32* out, u32 n,
                  bool const_mult, cudaStream_t s);
// Matrix-mult-only conversions bs[k]: ins[k] -> outs[k], one launch per kMaxBConvBatch where the
// blocked kernel applies to all of them, else one launch_bconv each. Same words either way.
void launch_bconv_matmul_batch(std::span<const BConvDevice> bs, std::span<const u32* const> ins,
                               std::span<u32* const> outs, const BConvConfig& cfg, u32 n,
                               cudaStream_t s);

// The tensor-core kernel (bconv_tensor.cu): whether it takes b at this n, one conversion, and a
// batch of conversions that all take it and share their exactness.
bool bconv_tensor_applies(const BConvDevice& b, u32 n);
void launch_bconv_tensor(const BConvDevice& b, const u32* in, u32* out, u32 n, bool const_mult,
                         cudaStream_t s);
void launch_bconv_tensor_batch(std::span<const BConvDevice> bs, std::span<const u32* const> ins,
                               std::span<u32* const> outs, u32 n, cudaStream_t s);

// ---- sampling -----------------------------------------------------------------------------------
// out (limbs of `basis`, n words each) = the seed expansion of Backend::sample_uniform
// (math/uniform_expand.h).
void launch_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id, u32* out, u32 n,
                           const Basis& basis, const Modulus* mods, cudaStream_t s);

}  // namespace theo::cuda
