#pragma once
// Batched evaluator ops: several independent ops whose key switches run together as L2-sized
// batches (L2-aware multi-polynomial caching, Theodosian §IV-A; KeySwitcher::run). At
// small L one key switch cannot fill the GPU, so batching B of them raises utilization for as
// long as their combined working set stays in the L2 cache; the batch size comes from
// KeySwitchPlanner::batch_size. Each result is word for word the one of the single op named below.

#include <span>
#include <vector>

#include "theo/ckks/evaluator.h"

namespace theo {

// [i] = ev.multiply(*a[i], *b[i], rlk) (tensor + relinearization, no rescale).
std::vector<Ciphertext> multiply_batch(const Evaluator& ev, std::span<const Ciphertext* const> a,
                                       std::span<const Ciphertext* const> b, const RelinKey& rlk);

// [i] = ev.multiply_relin_rescale(*a[i], *b[i], rlk) (ModDown merged with the rescale). The
// relinearization key is read once per batch (the plan's shared-key pass). batch: the number of
// products per batch (0: KeySwitchPlanner::batch_size from the footprint model; a caller that
// batches for parallelism rather than for L2 reuse, such as circuits over groups of a few
// ciphertexts, passes the count).
std::vector<Ciphertext> multiply_relin_rescale_batch(const Evaluator& ev,
                                                     std::span<const Ciphertext* const> a,
                                                     std::span<const Ciphertext* const> b,
                                                     const RelinKey& rlk, u32 batch = 0);

// [i] = ev.rescale(*cts[i]); ciphertexts at one level share one INTT -> BConv -> NTT pass.
std::vector<Ciphertext> rescale_batch(const Evaluator& ev, std::span<const Ciphertext* const> cts);

// [i] = ev.level_down(*cts[i], level); ciphertexts at one level and scale share each pass.
std::vector<Ciphertext> level_down_batch(const Evaluator& ev,
                                         std::span<const Ciphertext* const> cts, u32 level);

// [i] = ev.rotate(*cts[i], rotations[i], keys): rotations of different ciphertexts.
std::vector<Ciphertext> rotate_batch(const Evaluator& ev, std::span<const Ciphertext* const> cts,
                                     std::span<const int> rotations, const GaloisKeys& keys);

// The giant steps of a double-hoisted baby-step / giant-step linear transform:
// [i] = ev.rotate_hoisted_extended(ev.mod_down(std::move(in[i])), {shifts[i]}, keys)[0], with the
// ModDowns and the ModUps of a batch run together. `in` is consumed; all at one level.
std::vector<ExtendedCiphertext> mod_down_rotate_extended_batch(const Evaluator& ev,
                                                               std::span<ExtendedCiphertext> in,
                                                               std::span<const int> shifts,
                                                               const GaloisKeys& keys);

}  // namespace theo
