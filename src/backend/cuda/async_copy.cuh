#pragma once
// Asynchronous global -> shared copies (cp.async, sm_80+): the words travel without passing
// through registers, and a thread issues all of its copies before waiting for any, so a table
// fill costs one memory latency instead of one per loop iteration.

#include <cuda_runtime.h>

namespace theo::cuda {

// Copies 16 bytes; both addresses 16-byte aligned. L2 only (.cg): the words are read once per
// block and then served from shared memory.
__device__ __forceinline__ void cp_async16(void* shared_dst, const void* global_src) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(global_src) : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits for this thread's committed copies; a block barrier must follow before other threads
// read them.
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;" ::: "memory");
}

}  // namespace theo::cuda
