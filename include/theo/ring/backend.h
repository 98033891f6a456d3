#pragma once
// The Backend interface: every ring operation the scheme layer needs, implemented once for the CPU
// (the reference, backend/cpu/) and once for NVIDIA GPUs (backend/cuda/).
//
// Contract shared by all implementations (the CPU backend is the oracle; the CUDA backend must
// produce identical words):
//  * Inputs and outputs are canonical residues in [0, q). Outputs may alias inputs of the same
//    shape (in-place) unless an op says otherwise.
//  * All operands of an element-wise op have the same n and the same Basis.
//  * NTT order: forward NTT takes coefficients a_0..a_{N-1} and writes A[i] = a(psi^(2*brev(i)+1))
//    for i in [0, N), brev = bit reversal over log2 N bits and psi = ntt_root(q, N)
//    (math/primes.h). INTT is its exact inverse (N^-1 included).
//  * Automorphism phi_k (k odd, X -> X^k) acts on NTT-domain data as
//    out[i] = in[brev(((2*brev(i)+1)*k mod 2N - 1) / 2)]   (see ring/automorphism.h).
//  * BConv (fast basis conversion, Cheddar Eq. 2) from basis S = {s_j} to D = {d_i}, on coefficient
//    data x (limbs over S). With Q = prod s_j:
//        t_j = center([x_j * (Q/s_j)^-1]_{s_j})                in (-s_j/2, s_j/2]
//        y_i = [ sum_j t_j * [Q/s_j]_{d_i} ]_{d_i}              canonical
//    The sum is exact (no intermediate rounding), so the result is a function of x alone:
//    y = x + e*Q mod d_i with |e| <= |S|/2 for
//    the centered x in (-Q/2, Q/2]. bconv_matmul performs only the second line on input
//    that already holds [x_j * (Q/s_j)^-1]_{s_j} (the const-mult fused into the INTT before it).
//  * Exact BConv (plans made with exact = true): the overflow e*Q is removed, so y is the exact
//    centered lift of x mod Q (for |x| < Q/2 away from ties). With, in IEEE double precision,
//        acc = 0;  for j ascending: acc = acc + double(t_j) * src_inv[j]   (no fused multiply-add)
//        v   = floor(acc + 0.5)
//        y_i = [ sum_j t_j * [Q/s_j]_{d_i} - v * [Q]_{d_i} ]_{d_i}
//    Every backend evaluates acc in exactly this order and rounding, so results stay bit-exact.
//    ModDown and rescale use it: their result is then round(x / Q) rather than off by up to |S|/2.
//  * Ops run in issue order on the backend's stream; host data is visible only after download()
//    or synchronize(). Capture and the second stream: theo/ring/stream_control.h.

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "theo/math/modarith.h"
#include "theo/ring/poly.h"
#include "theo/ring/stream_control.h"

namespace theo {

// kCostOnly: a backend that computes nothing (model/'s make_cost_only_backend, for traces).
enum class BackendKind { kCpu, kCuda, kCostOnly };

// The ring a backend serves: degree N = 2^log_n and the table of all primes (PrimeId = index).
struct RingParams {
  u32 log_n = 0;
  std::vector<u32> primes;
  u32 n() const { return u32{1} << log_n; }
};

// Host-side BConv tables from `src` to `dst` (see contract above). Built by make_bconv_table().
struct BConvTable {
  Basis src;
  Basis dst;
  std::vector<u32> src_hat_inv;  // [j] = (Q/s_j)^-1 mod s_j, canonical
  std::vector<u32> matrix;       // [i * src.size + j] = (Q/s_j) mod d_i, canonical
  bool exact = false;            // remove the e*Q overflow (see contract above)
  std::vector<double> src_inv;   // [j] = 1.0 / s_j (exact mode)
  std::vector<u32> q_mod_dst;    // [i] = Q mod d_i, canonical (exact mode)
};
BConvTable make_bconv_table(const RingParams& ring, const Basis& src, const Basis& dst,
                            bool exact = false);

// A BConvTable prepared by one backend (e.g. uploaded to the device). Immutable, shareable.
class BConvPlan {
 public:
  explicit BConvPlan(BConvTable table) : table_(std::move(table)) {}
  virtual ~BConvPlan() = default;
  const BConvTable& table() const { return table_; }
  const Basis& src() const { return table_.src; }
  const Basis& dst() const { return table_.dst; }

 private:
  BConvTable table_;
};

// One conversion of Backend::bconv_matmul_batch.
struct BConvJob {
  const BConvPlan* plan = nullptr;
  ConstPolyRef in;
  PolyRef out;
};

// Backend::memory_report(). All zero where a backend does not track the quantity.
struct MemoryReport {
  std::size_t live_bytes = 0;    // held by this backend's live allocations
  std::size_t peak_bytes = 0;    // the most live_bytes has been since the backend was made
  std::size_t device_used = 0;   // the whole device in use (every process, the CUDA context)
  std::size_t device_total = 0;  // the device's memory
  // What the backend's memory pool holds from the device, blocks it keeps free included (CUDA:
  // the stream-ordered pool's reserved memory), now and at most.
  std::size_t reserved_bytes = 0;
  std::size_t reserved_peak_bytes = 0;
};

// Every op below is a public non-virtual function that checks its arguments (the shapes, limbs,
// constants and overlaps its comment states; src/ring/backend_ops.cpp) and then calls the
// backend's protected do_ implementation, which may rely on them. A backend adds only the checks
// of its own representation (e.g. the CUDA backend's 16-byte alignment, a plan made by another
// backend). A failed check throws ParameterError before any work is issued.
class Backend : public StreamControl {
 public:
  ~Backend() override = default;

  virtual BackendKind kind() const = 0;
  virtual std::string name() const = 0;  // e.g. "cpu (2 threads)", "cuda (NVIDIA H200)"
  const RingParams& ring() const { return ring_; }
  u32 n() const { return ring_.n(); }
  const Modulus& modulus(PrimeId id) const { return moduli_[id]; }

  // ---- memory -------------------------------------------------------------------------------
  virtual std::shared_ptr<Allocator> allocator() = 0;
  RnsPoly make_poly(const Basis& basis) { return RnsPoly(allocator(), n(), basis); }
  // Host memory for words on their way to or from upload / download (serialization's staging):
  // page-locked where the backend copies faster from and to it (CUDA), else ordinary memory.
  // Thread-safe, and usable while other threads run work on the backend.
  virtual std::shared_ptr<Allocator> host_staging_allocator();
  // upload, download and synchronize need the host: BackendError while capturing or forked
  // (synchronize: while capturing).
  void upload(const u32* host, PolyRef dst);
  void download(ConstPolyRef src, u32* host);
  void copy(ConstPolyRef src, PolyRef dst);
  void fill_zero(PolyRef dst);
  void synchronize();

  // ---- NTT ----------------------------------------------------------------------------------
  // Batched over all limbs of all polys, which may differ in Basis (a backend may still cover the
  // whole batch with one launch) and must not overlap each other. Optional arguments:
  //  * consts: per-limb constants multiplied in for free, before the forward transform (ntt) or
  //    after the inverse one (intt). Either one per limb of polys[0], taken by every poly (the
  //    polys then share polys[0]'s Basis), or one per limb of every poly in turn (as many as the
  //    polys have limbs together).
  //  * src (one per poly, each shaped like its poly): out of place, polys[k] = T(src[k]) and src[k]
  //    is left as it was. src[k] may be polys[k] itself (in place) but must overlap no other poly
  //    of the call. Saves the copy that an in-place transform of a kept input needs.
  //  * input_copy (one per poly, each shaped like its poly): a copy of the input fused into the
  //    transform's read: input_copy[k] receives the words the transform of polys[k] reads (src[k],
  //    else polys[k] before the call), unchanged. No input_copy may overlap a poly, a src or
  //    another input_copy.
  void ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts = {},
           std::span<const ConstPolyRef> src = {}, std::span<const PolyRef> input_copy = {});
  void intt(std::span<const PolyRef> polys, std::span<const u32> post_consts = {},
            std::span<const ConstPolyRef> src = {}, std::span<const PolyRef> input_copy = {});
  // The tail of ModDown and rescale fused into the forward NTT (Cheddar Seq.3): y_k = NTT of
  // polys[k] in place (pre_consts as for ntt), then on the window of limbs [first, first + W) of
  // polys[k], W = a[k].limbs():
  //     polys[k]_(first + i) = (a[k]_i - y_k,(first + i)) * s_i       for i < W
  // and y_k on the other limbs: the words of ntt() followed by sub_mul_scalar() on the window,
  // without writing and reading y_k's window in between. Every a[k] is over a[0]'s Basis, which
  // is the window's Basis in polys[k]; s holds one canonical constant per limb of a[0]; no a[k]
  // may overlap a poly of the call.
  void ntt_sub_mul_scalar(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                          std::span<const ConstPolyRef> a, u32 first, std::span<const u32> s);

  // ---- basis conversion ---------------------------------------------------------------------
  // A plan of this backend (BackendError while capturing: it uploads tables).
  std::shared_ptr<const BConvPlan> make_bconv(const Basis& src, const Basis& dst,
                                              bool exact = false);
  // Full BConv (const mult + matrix mult) of coefficient data `in` (plan.src) into `out`
  // (plan.dst); `plan` made by this backend's make_bconv, `in` and `out` disjoint.
  void bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out);
  // Matrix mult only: `in` already holds [x_j * (Q/s_j)^-1]_{s_j}.
  void bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out);
  // Several independent bconv_matmul (no job's out overlaps another job's in or out), as one
  // launch where the backend can: e.g. every digit of a ModUp, both polys of a ModDown. The same
  // words as the calls one by one, which is what the default does.
  void bconv_matmul_batch(std::span<const BConvJob> jobs);

  // ---- element-wise (per limb, canonical in and out) ----------------------------------------
  void add(ConstPolyRef a, ConstPolyRef b, PolyRef out);
  void sub(ConstPolyRef a, ConstPolyRef b, PolyRef out);
  // out[k] = a[k] + b[k] (add_batch) or a[k] - b[k] (sub_batch) for every k; each triple obeys
  // add's / sub's rules, and triples may differ in shape. out[k] may alias a[k] or b[k] but no
  // operand of another triple: a backend may interleave the triples. Adding the polys of a
  // ciphertext in one call lets the GPU cover them with one launch instead of one per poly.
  void add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                 std::span<const PolyRef> out);
  void sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                 std::span<const PolyRef> out);
  void neg(ConstPolyRef a, PolyRef out);
  void mul(ConstPolyRef a, ConstPolyRef b, PolyRef out);
  // out = a * b + c
  void mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out);
  // out_i = a_i * s_i, one constant per limb
  void mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out);
  // out_i = a_i + s_i (every coefficient / evaluation of limb i)
  void add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out);
  // out_i = a_i * s_i + b_i
  void mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b, PolyRef out);
  // out_i = (a_i - b_i) * s_i   (rescale / ModDown tail)
  void sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s, PolyRef out);
  // out_i = sum_k a_k,i * s[k * L + i] (L = limbs; one row of canonical per-limb constants per
  // term). All operands share one shape; out must not alias an input. A linear combination in one
  // pass (the leaves of polynomial evaluation) instead of a multiply and an add per term.
  void mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s, PolyRef out);
  // Tensor product of (a0, a1) and (b0, b1): d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1.
  void tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
              PolyRef d1, PolyRef d2);
  // tensor of (s a0, s a1) and (b0, b1), s one canonical constant per limb: an integer factor on
  // one operand (T_2m = 2 T_m^2 - 1) without a pass over it first. The same words as mul_scalar
  // of a0 and a1 by s, then tensor, which is what the default does.
  void tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1, PolyRef d0,
                     PolyRef d1, PolyRef d2, std::span<const u32> s);
  // KeyMult over all digits in one pass: out0 = sum_k d_k * kb_k, out1 = sum_k d_k * ka_k.
  // All operands share one Basis; out0/out1 must not alias inputs.
  void key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1);
  // key_mult, then out0 += s * a0 and out1 += s * a1 limb by limb (s: one canonical constant per
  // limb, e.g. P mod q_i): relinearization's P d_0 and P d_1 terms in the KeyMult pass instead of
  // two more passes over out0 / out1. a0 and a1 shaped like out0, aliasing neither output. The
  // same words as key_mult and two mul_scalar_add, which is what the default does.
  void key_mult_add_scaled(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                           std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                           ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s);
  // key_mult of automorphed digits without materializing them: out0 = sum_k phi_g(d_k) kb_k
  // (+ phi_g(add0) when add0 has words), out1 = sum_k phi_g(d_k) ka_k (phi_g as in
  // automorphism(); g odd). Hoisted rotations read the shared ModUp digits through the
  // permutation instead of writing and re-reading dnum permuted copies per rotation, and add the
  // rotated P c0 in the same pass (add0: shaped like out0, aliasing neither output).
  void key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                            std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                            PolyRef out0, PolyRef out1, ConstPolyRef add0 = {});
  // key_mult_automorphed for several rotations of the same digits (hoisted baby steps): for
  // rotation r (Galois element gs[r]), out0[r] = sum_k phi(d_k) kb[r * D + k] (+ phi(add0)),
  // out1[r] = sum_k phi(d_k) ka[r * D + k], D = digits.size(). Every phi_g maps aligned blocks of
  // words onto whole blocks, so the GPU reads each block of the digits once for all rotations
  // (L2-aware multi-polynomial caching) instead of once per rotation. The same words as the calls
  // one by one, which is what the default does.
  void key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                          std::span<const ConstPolyRef> kb, std::span<const ConstPolyRef> ka,
                          std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                          ConstPolyRef add0 = {});
  // Several key_mult sums over shared (kb, ka), e.g. a linear transform's giant steps over its
  // baby steps: out0[g] = sum_k d[g K + k] kb[k], out1[g] = sum_k d[g K + k] ka[k], K =
  // kb.size(); an empty d[g K + k] leaves term k out of sum g (each sum needs a term). The GPU
  // reads each kb / ka word once for all sums. The same words as one key_mult per sum over its
  // terms, which is what the default does.
  void key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                     std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                     std::span<const PolyRef> out1);
  // NTT-domain multiplication by the monomial X^k (k may be any integer; X^N = -1).
  void mul_monomial(ConstPolyRef a, i64 k, PolyRef out);

  // ---- automorphism (NTT domain) ------------------------------------------------------------
  // out = phi_k(in); out must not alias in; k odd.
  void automorphism(ConstPolyRef in, u32 k, PolyRef out);
  // out = sum_i phi_{k_i}(in_i) (+ out if accumulate); out must not alias any input (Par.4).
  void automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks, PolyRef out,
                        bool accumulate);

  // ---- sampling -----------------------------------------------------------------------------
  // Fills `out` with words uniform in [0, q) on every limb, expanded from a 32-byte seed so that
  // key and ciphertext `a` polynomials never cross the host bus. Construction (every backend
  // computes it word for word): for limb prime id p and coefficient i, the ChaCha20 block
  // (RFC 8439) keyed by `seed` with block counter i / 4 and nonce = stream_id (8 bytes, little
  // endian) || p (4 bytes, little endian); words 4 (i % 4) .. 4 (i % 4) + 3 of the block, read as
  // a little-endian 128-bit integer, reduced mod q (bias < q / 2^128). The words of a limb depend
  // only on (seed, stream_id, prime), so a prefix of a basis expands to a prefix of the limbs.
  void sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id, PolyRef out);

  // ---- device facts and settings ------------------------------------------------------------
  // The device's last-level (L2) cache in bytes, read at run time, for working-set planning
  // (KeySwitchPlanner::batch_size); 0 where the backend has no shared device cache to plan for
  // (CPU).
  virtual std::size_t l2_bytes() const = 0;
  // BConv table refinement (Theodosian §III-C2; Optimizations::bconv_refined): on, plans made
  // afterwards fold their accumulators only as often as their table's bounds require (often
  // never); off, after every 4 terms. The words are the same either way. Backends whose BConv
  // folds at a fixed rate ignore it.
  virtual void set_bconv_refined(bool on) { (void)on; }
  // What this backend's memory holds now, for reports (e.g. the set-up of bootstrapping); the
  // default (CPU backend) tracks nothing and returns zeros.
  virtual MemoryReport memory_report() const { return {}; }
  // Marks the work an external profiler should record (CUDA: cudaProfilerStart / Stop, for
  // `ncu --profile-from-start off`); a no-op where no profiler attaches (CPU).
  virtual void profiler_range(bool on) { (void)on; }

 protected:
  explicit Backend(RingParams ring);

  // The implementations of the public ops of the same name, called after the argument checks.
  // The defaults compose other ops (the words the public comments name).
  virtual void do_upload(const u32* host, PolyRef dst) = 0;
  virtual void do_download(ConstPolyRef src, u32* host) = 0;
  virtual void do_copy(ConstPolyRef src, PolyRef dst) = 0;
  virtual void do_fill_zero(PolyRef dst) = 0;
  virtual void do_synchronize() = 0;
  virtual void do_ntt(std::span<const PolyRef> polys, std::span<const u32> pre_consts,
                      std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) = 0;
  virtual void do_intt(std::span<const PolyRef> polys, std::span<const u32> post_consts,
                       std::span<const ConstPolyRef> src, std::span<const PolyRef> input_copy) = 0;
  virtual void do_ntt_sub_mul_scalar(std::span<const PolyRef> polys,
                                     std::span<const u32> pre_consts,
                                     std::span<const ConstPolyRef> a, u32 first,
                                     std::span<const u32> s) = 0;
  virtual std::shared_ptr<const BConvPlan> do_make_bconv(const Basis& src, const Basis& dst,
                                                         bool exact) = 0;
  virtual void do_bconv(const BConvPlan& plan, ConstPolyRef in, PolyRef out) = 0;
  virtual void do_bconv_matmul(const BConvPlan& plan, ConstPolyRef in, PolyRef out) = 0;
  virtual void do_bconv_matmul_batch(std::span<const BConvJob> jobs);
  virtual void do_add(ConstPolyRef a, ConstPolyRef b, PolyRef out) = 0;
  virtual void do_sub(ConstPolyRef a, ConstPolyRef b, PolyRef out) = 0;
  virtual void do_add_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                            std::span<const PolyRef> out) = 0;
  virtual void do_sub_batch(std::span<const ConstPolyRef> a, std::span<const ConstPolyRef> b,
                            std::span<const PolyRef> out) = 0;
  virtual void do_neg(ConstPolyRef a, PolyRef out) = 0;
  virtual void do_mul(ConstPolyRef a, ConstPolyRef b, PolyRef out) = 0;
  virtual void do_mul_add(ConstPolyRef a, ConstPolyRef b, ConstPolyRef c, PolyRef out) = 0;
  virtual void do_mul_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) = 0;
  virtual void do_add_scalar(ConstPolyRef a, std::span<const u32> s, PolyRef out) = 0;
  virtual void do_mul_scalar_add(ConstPolyRef a, std::span<const u32> s, ConstPolyRef b,
                                 PolyRef out) = 0;
  virtual void do_sub_mul_scalar(ConstPolyRef a, ConstPolyRef b, std::span<const u32> s,
                                 PolyRef out) = 0;
  virtual void do_mul_scalar_sum(std::span<const ConstPolyRef> a, std::span<const u32> s,
                                 PolyRef out) = 0;
  virtual void do_tensor(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                         PolyRef d0, PolyRef d1, PolyRef d2) = 0;
  virtual void do_tensor_scaled(ConstPolyRef a0, ConstPolyRef a1, ConstPolyRef b0, ConstPolyRef b1,
                                PolyRef d0, PolyRef d1, PolyRef d2, std::span<const u32> s);
  virtual void do_key_mult(std::span<const ConstPolyRef> digits, std::span<const ConstPolyRef> kb,
                           std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1) = 0;
  virtual void do_key_mult_add_scaled(std::span<const ConstPolyRef> digits,
                                      std::span<const ConstPolyRef> kb,
                                      std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                                      ConstPolyRef a0, ConstPolyRef a1, std::span<const u32> s);
  virtual void do_key_mult_automorphed(std::span<const ConstPolyRef> digits, u32 g,
                                       std::span<const ConstPolyRef> kb,
                                       std::span<const ConstPolyRef> ka, PolyRef out0, PolyRef out1,
                                       ConstPolyRef add0) = 0;
  virtual void do_key_mult_rotations(std::span<const ConstPolyRef> digits, std::span<const u32> gs,
                                     std::span<const ConstPolyRef> kb,
                                     std::span<const ConstPolyRef> ka,
                                     std::span<const PolyRef> out0, std::span<const PolyRef> out1,
                                     ConstPolyRef add0);
  virtual void do_key_mult_sums(std::span<const ConstPolyRef> d, std::span<const ConstPolyRef> kb,
                                std::span<const ConstPolyRef> ka, std::span<const PolyRef> out0,
                                std::span<const PolyRef> out1);
  virtual void do_mul_monomial(ConstPolyRef a, i64 k, PolyRef out) = 0;
  virtual void do_automorphism(ConstPolyRef in, u32 k, PolyRef out) = 0;
  virtual void do_automorphism_sum(std::span<const ConstPolyRef> ins, std::span<const u32> ks,
                                   PolyRef out, bool accumulate) = 0;
  virtual void do_sample_uniform(const std::array<std::uint8_t, 32>& seed, u64 stream_id,
                                 PolyRef out) = 0;

  RingParams ring_;
  std::vector<Modulus> moduli_;
};

// The implementations are made by theo/backend/factory.h.

}  // namespace theo
