#pragma once
// In-place negacyclic NTT of one limb (canonical in, canonical out), in the order of the Backend
// contract. The optional constant is fused into the first forward / last inverse stage.

#include "theo/ring/ntt_tables.h"

namespace theo::cpu {

// a <- NTT(c * a); c == nullptr means c = 1.
void ntt_limb(u32* a, const NttTable& t, const u32* c);
// a <- c * INTT(a) (N^-1 included); c == nullptr means c = 1.
void intt_limb(u32* a, const NttTable& t, const u32* c);

}  // namespace theo::cpu
