// Memory inside a fork (backend/fork_state.h): which lane may reuse a block freed between fork()
// and join(), in the capture arena's free lists and in ForkState's rules that the CUDA pool
// follows; and Backend::bconv_matmul_batch's default (the calls one by one, jobs checked).

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "backend/capture_arena.h"
#include "backend/fork_state.h"
#include "ring/counting_allocator.h"
#include "ring/ring_test_util.h"
#include "theo/backend/factory.h"
#include "theo/errors.h"

namespace theo::test {
namespace {

TEST(ForkState, FreeRulesFollowTheLaneThatAllocated) {
  ForkState f;
  int before = 0, branch = 0, main_lane = 0;
  EXPECT_EQ(f.on_free(&before), ForkState::FreeRule::kNormal);  // no fork open
  f.fork();
  f.note_alloc(&branch);
  EXPECT_EQ(f.on_free(&before), ForkState::FreeRule::kHold);  // made before the fork
  f.end_fork();
  f.note_alloc(&main_lane);
  EXPECT_EQ(f.on_free(&branch), ForkState::FreeRule::kHold);     // the branch may still use it
  EXPECT_EQ(f.on_free(&main_lane), ForkState::FreeRule::kLane);  // only this lane touched it
  f.join();
  EXPECT_EQ(f.on_free(&branch), ForkState::FreeRule::kNormal);
}

TEST(ForkState, OtherThreadsKeepTheNormalRules) {
  ForkState f;
  f.fork();
  int x = 0;
  ForkState::FreeRule seen = ForkState::FreeRule::kHold;
  bool open_elsewhere = true;
  std::thread t([&] {
    f.note_alloc(&x);
    seen = f.on_free(&x);
    open_elsewhere = f.open();
  });
  t.join();
  EXPECT_EQ(seen, ForkState::FreeRule::kNormal);
  EXPECT_FALSE(open_elsewhere);
  f.join();
}

TEST(CaptureArena, LanesReuseOnlyWhatIsSafeUntilTheJoin) {
  auto up = std::make_shared<CountingAllocator>();
  ForkState fork;
  {
    CaptureArena arena(up);
    arena.set_fork(&fork);
    u32* early = arena.allocate(100);
    arena.deallocate(early, 100);  // freed before the fork: either lane may take it
    u32* kept = arena.allocate(100);
    EXPECT_EQ(kept, early);

    fork.fork();  // branch
    u32* b1 = arena.allocate(100);
    arena.deallocate(b1, 100);
    EXPECT_EQ(arena.allocate(100), b1) << "the branch reuses its own freed block";
    arena.deallocate(b1, 100);
    arena.deallocate(kept, 100);  // made before the fork, dropped in the branch: held
    fork.end_fork();              // main lane
    std::set<u32*> main_blocks;
    for (int i = 0; i < 3; ++i)
      main_blocks.insert(arena.allocate(100));
    EXPECT_FALSE(main_blocks.count(b1)) << "the main lane took a block the branch may still use";
    EXPECT_FALSE(main_blocks.count(kept)) << "the main lane took a held block";
    u32* m = *main_blocks.begin();
    arena.deallocate(m, 100);
    EXPECT_EQ(arena.allocate(100), m) << "the main lane reuses its own freed block";
    arena.join();
    fork.join();
    // After the join every block freed inside the fork is reusable.
    std::set<u32*> after;
    for (int i = 0; i < 2; ++i)
      after.insert(arena.allocate(100));
    EXPECT_TRUE(after.count(b1) && after.count(kept));
    arena.close();
  }
  EXPECT_EQ(up->live(), 0) << "the arena returned every block it made";
}

TEST(BConvBatch, DefaultIsTheCallsOneByOneAndChecksTheJobs) {
  const auto be = make_cpu_backend(mixed_ring(10, 12));
  const Basis s = Basis::range(0, 4), d1 = Basis::range(4, 5), d2 = Basis::range(9, 3);
  const auto p1 = be->make_bconv(s, d1), p2 = be->make_bconv(s, d2, /*exact=*/true);
  RnsPoly x = be->make_poly(s), a = be->make_poly(d1), b = be->make_poly(d2);
  RnsPoly a2 = be->make_poly(d1), b2 = be->make_poly(d2);
  std::vector<u32> w(x.words());
  for (std::size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<u32>((i * 2654435761u) % be->modulus(s.ids[i / x.n()]).q);
  be->upload(w.data(), x.ref());
  const BConvJob jobs[] = {{p1.get(), x.cref(), a.ref()}, {p2.get(), x.cref(), b.ref()}};
  be->bconv_matmul_batch(jobs);
  be->bconv_matmul(*p1, x.cref(), a2.ref());
  be->bconv_matmul(*p2, x.cref(), b2.ref());
  std::vector<u32> g(a.words()), e(a.words());
  be->download(a.cref(), g.data());
  be->download(a2.cref(), e.data());
  EXPECT_EQ(g, e);
  g.resize(b.words());
  e.resize(b.words());
  be->download(b.cref(), g.data());
  be->download(b2.cref(), e.data());
  EXPECT_EQ(g, e);

  const BConvJob overlapping[] = {{p1.get(), x.cref(), a.ref()}, {p1.get(), x.cref(), a.ref()}};
  EXPECT_THROW(be->bconv_matmul_batch(overlapping), ParameterError);
  const BConvJob no_plan[] = {{nullptr, x.cref(), a.ref()}};
  EXPECT_THROW(be->bconv_matmul_batch(no_plan), ParameterError);
}

}  // namespace
}  // namespace theo::test
