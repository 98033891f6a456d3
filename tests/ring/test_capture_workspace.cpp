// CaptureWorkspace (backend/capture_arena.h): which blocks of a capture later captures of the same
// sequence may take (its scratch only: never its outputs, nor blocks adopted from before it),
// from either lane of a fork; who returns the memory; and the refusals (a workspace of another
// allocator, two replays of one sequence at once).

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "backend/capture_arena.h"
#include "backend/fork_state.h"
#include "ring/counting_allocator.h"
#include "theo/errors.h"

namespace theo::test {
namespace {

TEST(CaptureWorkspace, LaterCapturesTakeOnlyScratch) {
  auto up = std::make_shared<CountingAllocator>();
  u32* input = up->allocate(100);  // made before the captures
  {
    auto ws = std::make_shared<CaptureWorkspace>(up);
    auto first = std::make_shared<CaptureArena>(up, ws);
    u32* scratch = first->allocate(100);
    u32* out = first->allocate(100);
    first->deallocate(scratch, 100);
    first->adopt(input, 100);  // an input dropped inside the capture
    first->close();
    EXPECT_EQ(ws->free_bytes(), 100 * sizeof(u32)) << "only the scratch is free";
    EXPECT_EQ(ws->bytes(), 300 * sizeof(u32));
    first->deallocate(out, 100);  // an output dropped after its capture: still written by replays

    auto second = std::make_shared<CaptureArena>(up, ws);
    std::set<u32*> got;
    for (int i = 0; i < 3; ++i)
      got.insert(second->allocate(100));
    EXPECT_TRUE(got.count(scratch)) << "the first capture's scratch was not reused";
    EXPECT_FALSE(got.count(out)) << "an output was handed on";
    EXPECT_FALSE(got.count(input)) << "an adopted block was handed on";
    second->close();  // all three still held: nothing free
    EXPECT_EQ(ws->free_bytes(), 0u);
    EXPECT_EQ(up->live(), 5);

    // A graph of the sequence gone: its blocks stay with the workspace (a later graph may read
    // its outputs), until the workspace and every arena are gone.
    first.reset();
    EXPECT_EQ(up->live(), 5);
    ws.reset();
    EXPECT_EQ(up->live(), 5);
  }
  EXPECT_EQ(up->live(), 0) << "the workspace returned every block";
}

TEST(CaptureWorkspace, EitherLaneOfAForkTakesScratch) {
  auto up = std::make_shared<CountingAllocator>();
  auto ws = std::make_shared<CaptureWorkspace>(up);
  ForkState fork;
  std::vector<u32*> scratch;
  {
    CaptureArena first(up, ws);
    for (int i = 0; i < 2; ++i)
      scratch.push_back(first.allocate(100));
    for (u32* p : scratch)
      first.deallocate(p, 100);
    first.close();
  }
  CaptureArena second(up, ws);
  second.set_fork(&fork);
  fork.fork();
  u32* branch = second.allocate(100);
  fork.end_fork();
  u32* main_lane = second.allocate(100);
  const std::set<u32*> want(scratch.begin(), scratch.end());
  EXPECT_TRUE(want.count(branch) && want.count(main_lane) && branch != main_lane);
  second.deallocate(branch, 100);  // made by the branch, dropped by the main lane: held
  EXPECT_NE(second.allocate(100), branch) << "the main lane took a block the branch may use";
  second.join();
  fork.join();
  second.close();
  EXPECT_EQ(ws->free_bytes(), 100 * sizeof(u32)) << "the held block is scratch after the join";
}

TEST(CaptureWorkspace, BestFitAtMostTwiceTheRequest) {
  auto up = std::make_shared<CountingAllocator>();
  auto ws = std::make_shared<CaptureWorkspace>(up);
  u32* big = up->allocate(1000);
  ws->own(big, 1000);
  ws->give(big, 1000);
  EXPECT_EQ(ws->take(100).first, nullptr) << "a small request pinned a large block";
  const auto [p, words] = ws->take(600);
  EXPECT_EQ(p, big);
  EXPECT_EQ(words, 1000u);
  EXPECT_EQ(ws->free_bytes(), 0u);
}

TEST(CaptureWorkspace, RefusesAnotherAllocatorAndOverlappingReplays) {
  auto up = std::make_shared<CountingAllocator>();
  auto other = std::make_shared<CountingAllocator>();
  auto ws = std::make_shared<CaptureWorkspace>(up);
  EXPECT_THROW((void)std::make_shared<CaptureArena>(other, ws), BackendError);
  EXPECT_THROW((void)std::make_shared<CaptureWorkspace>(nullptr), ParameterError);
  {
    const CaptureWorkspace::Replay running(*ws);
    EXPECT_THROW(CaptureWorkspace::Replay second(*ws), BackendError);
  }
  const CaptureWorkspace::Replay after(*ws);  // the first one ended
}

}  // namespace
}  // namespace theo::test
