// Memory ops, allocator, backend construction and selection.

#include <cstdint>
#include <limits>

#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"

namespace theo::test {
namespace {

class MemoryTest : public RingTest {};

TEST_F(MemoryTest, UploadDownloadCopyFillZero) {
  auto be = make_cpu_backend(mixed_ring(10, 4));
  const Basis basis = Basis::range(1, 3);
  const auto w = random_words(*be, basis);
  RnsPoly a = from_words(*be, basis, w);
  EXPECT_EQ(words(*be, a), w);
  RnsPoly b = be->make_poly(basis);
  be->copy(a.cref(), b.ref());
  EXPECT_EQ(words(*be, b), w);
  // Limb views are offsets into one allocation.
  be->fill_zero(a.slice(1, 1));
  auto z = words(*be, a);
  for (u32 c = 0; c < be->n(); ++c)
    EXPECT_EQ(z[be->n() + c], 0u);
  EXPECT_EQ(z[0], w[0]);
  be->copy(b.slice(1, 1), a.slice(1, 1));
  EXPECT_EQ(words(*be, a), w);
}

TEST_F(MemoryTest, AllocatorIsAlignedAndReportsHugeRequests) {
  auto be = make_cpu_backend(mixed_ring(10, 1));
  auto alloc = be->allocator();
  EXPECT_TRUE(alloc->host_accessible());
  u32* p = alloc->allocate(1000);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  alloc->deallocate(p, 1000);
  try {
    alloc->allocate(std::numeric_limits<std::size_t>::max() / 2);
    FAIL() << "no OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(
        std::string(e.what()).find(std::to_string(std::numeric_limits<std::size_t>::max() / 2)),
        std::string::npos)
        << e.what();
  }
}

TEST_F(MemoryTest, BackendSelection) {
  const RingParams ring = mixed_ring(10, 2);
  EXPECT_EQ(make_cpu_backend(ring, 2)->name(), "cpu (2 threads)");
  setenv("THEO_BACKEND", "cpu", 1);
  EXPECT_EQ(make_default_backend(ring)->kind(), BackendKind::kCpu);
  setenv("THEO_BACKEND", "tpu", 1);
  EXPECT_THROW(make_default_backend(ring), ParameterError);
  if (!cuda_available()) {
    setenv("THEO_BACKEND", "cuda", 1);
    EXPECT_THROW(make_default_backend(ring), BackendError);
    unsetenv("THEO_BACKEND");
    EXPECT_EQ(make_default_backend(ring)->kind(), BackendKind::kCpu);
  }
  unsetenv("THEO_BACKEND");
}

TEST_F(MemoryTest, RingParamsAreValidated) {
  RingParams r = mixed_ring(10, 2);
  r.log_n = 9;
  EXPECT_THROW(make_cpu_backend(r), ParameterError);
  r = mixed_ring(10, 2);
  r.primes.push_back(r.primes[0] + 2);  // not 1 mod 2N
  EXPECT_THROW(make_cpu_backend(r), ParameterError);
  r = mixed_ring(10, 2);
  r.primes.push_back(find_ntt_primes(10, 31, 1)[0] + (1u << 31));  // wraps, so test >= 2^31
  EXPECT_THROW(make_cpu_backend(r), ParameterError);
}

TEST(BasisToString, ListsIds) {
  EXPECT_EQ(to_string(Basis{3, 0, 17}), "{3,0,17}");
  EXPECT_EQ(to_string(Basis{}), "{}");
}

}  // namespace
}  // namespace theo::test
