#pragma once
// Paterson-Stockmeyer with lazy relinearization and rescaling (internal to the circuits layer;
// Optimizations::Circuits::lazy_polynomial, docs/bootstrapping.md "Polynomial evaluation").

#include "circuits/ciphertext_group.h"
#include "theo/circuits/chebyshev.h"

namespace theo::detail {

// p(y) for y = T_1 at its level's default scale (slots in [-1, 1]), landing exactly on `target`
// at Delta_target; target = y's level - PolynomialEvaluator::depth(p.degree()) or above. Every
// piece p = q_0 T_g0 + q_1 T_g1 + ... + leaf is summed as tensor products plus an unrescaled
// leaf, relinearized and rescaled once; each q_j lands exactly on the level and scale its product
// needs, so no level_down is issued.
CiphertextGroup evaluate_lazy(const GroupOps& ops, CiphertextGroup y, const ChebyshevSeries& p,
                              u32 target);

}  // namespace theo::detail
