#pragma once
// Macros shared by host and device code. Headers that include this compile with or without CUDA.

#if defined(__CUDACC__)
#define THEO_HD __host__ __device__ __forceinline__
#else
#define THEO_HD inline
#endif

#include <cstddef>
#include <cstdint>

namespace theo {

using u32 = std::uint32_t;
using i32 = std::int32_t;
using u64 = std::uint64_t;
using i64 = std::int64_t;

}  // namespace theo
