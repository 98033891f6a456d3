#pragma once
// A Backend that computes nothing: every op returns at once and leaves its outputs as they were
// (their words are meaningless), memory is address space that is never touched, and upload /
// download move no data (download writes zeros). Wrapped with make_recording_backend
// (theo/model/traffic.h) it records the op trace of any run (a KeySwitch, a Boot) with each op's
// shape, bytes and multiply-adds, in the time the host needs to issue the ops: the input of the
// traffic model's reports and of simulators. Scheme code runs on it unchanged, since no op
// depends on the values of the data; decrypted or downloaded results are garbage.
//
// It plans for the cache it is given (l2_bytes: e.g. a GpuDescriptor's), so key switches are
// batched as on that GPU; its memory_report() counts the bytes the run keeps live.

#include <cstddef>
#include <memory>

#include "theo/ring/backend.h"

namespace theo {

std::unique_ptr<Backend> make_cost_only_backend(const RingParams& ring, std::size_t l2_bytes = 0);

}  // namespace theo
