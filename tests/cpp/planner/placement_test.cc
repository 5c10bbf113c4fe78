// Placement of plain lifetimes: each test pins one policy with exact offsets worked out by hand.
#include "planner/placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "graph/errors.h"

namespace cortexm {
namespace {

using Offsets = std::vector<int64_t>;

Placement tflm(const std::vector<Lifetime>& buffers, int64_t alignment = 16) {
  Placement p = place_buffers_with(buffers, alignment, "size_first_fit");
  EXPECT_EQ(check_placement(buffers, alignment, p), "");
  return p;
}

TEST(Placement, LargestFirst) {
  // All live together: stacked in order of decreasing size.
  const Placement p = tflm({{16, 0, 0}, {48, 0, 0}, {32, 0, 0}});
  EXPECT_EQ(p.offsets, (Offsets{80, 0, 48}));
  EXPECT_EQ(p.arena_size, 96);
  EXPECT_EQ(p.lower_bound, 96);
}

// A buffer whose contents move down inside it (a depthwise output written 32 bytes below its
// input): input [32, 96) at steps 0-1, output [0, 64) at steps 1-2. What it frees is free.
TEST(Placement, PartsLeaveTheBytesTheyFreeToOthers) {
  const Lifetime moving{96, 0, 2, {{32, 64, 0, 0}, {0, 96, 1, 1}, {0, 64, 2, 2}}};
  for (const std::string& policy : placement_policies()) {
    SCOPED_TRACE(policy);
    // 32 bytes at step 0 fit below the input; 32 at step 2 above the output.
    const std::vector<Lifetime> buffers = {moving, {32, 0, 0}, {32, 2, 2}};
    const Placement p = place_buffers_with(buffers, 16, policy);
    EXPECT_EQ(check_placement(buffers, 16, p), "");
    EXPECT_EQ(p.arena_size, 96);
    EXPECT_EQ(p.lower_bound, 96);
  }
  // Parts count at their own steps: 64 + 32 at step 0, 96 at 1, 64 + 32 at 2.
  EXPECT_EQ(peak_live_bytes({moving, {32, 0, 0}, {32, 2, 2}}, 16), 96);
  // A neighbour over the input's bytes at step 0 collides; over the freed bytes it does not.
  Placement bad;
  bad.offsets = {0, 64};
  bad.arena_size = 96;
  bad.lower_bound = 96;
  EXPECT_NE(check_placement({moving, {32, 0, 0}}, 16, bad), "");
  bad.offsets = {0, 0};
  EXPECT_EQ(check_placement({moving, {32, 0, 0}}, 16, bad), "");
  EXPECT_THROW(place_buffers_with({{96, 0, 2, {{8, 64, 0, 0}}}}, 16, "size_first_fit"), GraphError);
}

TEST(Placement, EqualSizesGoInIndexOrder) {
  const Placement p = tflm({{32, 0, 0}, {32, 0, 0}, {32, 0, 0}});
  EXPECT_EQ(p.offsets, (Offsets{0, 32, 64}));
}

TEST(Placement, BuffersWithDisjointLifetimesShareMemory) {
  const Placement p = tflm({{64, 0, 1}, {48, 2, 3}, {32, 4, 4}});
  EXPECT_EQ(p.offsets, (Offsets{0, 0, 0}));
  EXPECT_EQ(p.arena_size, 64);
  EXPECT_EQ(p.lower_bound, 64);
}

TEST(Placement, FirstGapThatFits) {
  // Placed as 64@0 (steps 0-1), 48@0 (steps 2-3), 32@64 (steps 0-2); the 16 at step 2 sees 48@0
  // and 32@64 and fits the 16-byte gap between them.
  const Placement p = tflm({{64, 0, 1}, {32, 0, 2}, {48, 2, 3}, {16, 2, 2}});
  EXPECT_EQ(p.offsets, (Offsets{0, 64, 0, 48}));
  EXPECT_EQ(p.arena_size, 96);
  EXPECT_EQ(p.lower_bound, 96);
}

// At step 1 the live buffers 48@64 and 32@144 leave gaps [0, 64) and [112, 144) for a 32.
const std::vector<Lifetime> kTwoGaps = {{64, 0, 0}, {48, 0, 1}, {32, 0, 0}, {32, 0, 1}, {32, 1, 1}};

TEST(Placement, FirstFitTakesTheLowestGap) {
  const Placement p = tflm(kTwoGaps);
  EXPECT_EQ(p.offsets, (Offsets{0, 64, 112, 144, 0}));
  EXPECT_EQ(p.arena_size, 176);
}

TEST(Placement, BestFitTakesTheTightestGap) {
  const Placement p = place_buffers_with(kTwoGaps, 16, "size_best_fit");
  EXPECT_EQ(check_placement(kTwoGaps, 16, p), "");
  EXPECT_EQ(p.offsets, (Offsets{0, 64, 112, 144, 112}));
  EXPECT_EQ(p.arena_size, 176);
}

TEST(Placement, BestFitGoesOnTopWhenNoGapFits) {
  // 64@0, 48@64; at step 1 the second 48 fits below the first (gap [0, 64)) -> 0.
  const std::vector<Lifetime> gap = {{64, 0, 0}, {48, 0, 1}, {48, 1, 1}};
  EXPECT_EQ(place_buffers_with(gap, 16, "size_best_fit").offsets, (Offsets{0, 64, 0}));
  // With the 64 still live at step 1 there is no gap: on top of both.
  const std::vector<Lifetime> no_gap = {{64, 0, 1}, {48, 0, 1}, {48, 1, 1}};
  EXPECT_EQ(place_buffers_with(no_gap, 16, "size_best_fit").offsets, (Offsets{0, 64, 112}));
}

TEST(Placement, AlignmentIs16Bytes) {
  // Sizes round up to 16: 17 -> 32, 10 -> 16, 1 -> 16.
  const Placement p = tflm({{10, 0, 0}, {17, 0, 0}, {1, 0, 0}});
  EXPECT_EQ(p.offsets, (Offsets{32, 0, 48}));
  EXPECT_EQ(p.arena_size, 64);
  EXPECT_EQ(p.lower_bound, 64);
  // Another alignment rounds to it instead: 17 -> 20, 10 -> 12, 1 -> 4.
  const Placement four = tflm({{10, 0, 0}, {17, 0, 0}, {1, 0, 0}}, 4);
  EXPECT_EQ(four.offsets, (Offsets{20, 0, 32}));
  EXPECT_EQ(four.arena_size, 36);
}

TEST(Placement, LowerBoundIsPeakLiveBytes) {
  // Live bytes per step: 32, 80, 64, 112.
  const std::vector<Lifetime> buffers = {{32, 0, 1}, {48, 1, 2}, {16, 2, 3}, {96, 3, 3}};
  EXPECT_EQ(peak_live_bytes(buffers, 16), 112);
  EXPECT_EQ(tflm(buffers).lower_bound, 112);
  // Aligned bytes count: two 1-byte buffers need 32.
  EXPECT_EQ(peak_live_bytes({{1, 0, 0}, {1, 0, 0}}, 16), 32);
  EXPECT_EQ(peak_live_bytes({}, 16), 0);
}

TEST(Placement, ZeroSizeBuffersTakeNoMemory) {
  const Placement p = tflm({{0, 0, 0}, {16, 0, 0}, {0, 0, 0}});
  EXPECT_EQ(p.offsets, (Offsets{0, 0, 0}));
  EXPECT_EQ(p.arena_size, 16);
}

TEST(Placement, BestPolicyIsTheSmallestArenaEarliestOnTies) {
  // kTwoGaps: every policy reaches the lower bound, so the first one wins.
  const Placement p = place_buffers(kTwoGaps, 16);
  EXPECT_EQ(p.policy, "size_first_fit");
  EXPECT_EQ(p.arena_size, 176);
}

TEST(Placement, BadArgumentsThrow) {
  EXPECT_THROW(place_buffers({{16, 0, 0}}, 0), GraphError);
  EXPECT_THROW(place_buffers({{16, 0, 0}}, 24), GraphError);
  EXPECT_THROW(place_buffers({{-1, 0, 0}}, 16), GraphError);
  EXPECT_THROW(place_buffers({{16, 2, 1}}, 16), GraphError);
  EXPECT_THROW(place_buffers({{16, -1, 1}}, 16), GraphError);
  EXPECT_THROW(place_buffers_with({{16, 0, 0}}, 16, "no_such_policy"), GraphError);
}

TEST(Placement, CheckFindsOverlapMisalignmentAndOverflow) {
  const std::vector<Lifetime> buffers = {{32, 0, 1}, {32, 1, 2}};
  Placement p = tflm(buffers);
  ASSERT_EQ(p.offsets, (Offsets{0, 32}));
  Placement overlapping = p;
  overlapping.offsets[1] = 16;
  EXPECT_NE(check_placement(buffers, 16, overlapping), "");
  Placement misaligned = p;
  misaligned.offsets[1] = 40;
  misaligned.arena_size = 80;
  EXPECT_NE(check_placement(buffers, 16, misaligned), "");
  Placement overflowing = p;
  overflowing.arena_size = 48;
  EXPECT_NE(check_placement(buffers, 16, overflowing), "");
  Placement wrong_bound = p;
  wrong_bound.lower_bound = 32;
  EXPECT_NE(check_placement(buffers, 16, wrong_bound), "");
}

std::vector<Lifetime> random_lifetimes(std::mt19937& rng) {
  const int n = std::uniform_int_distribution<int>(1, 40)(rng);
  const int steps = std::uniform_int_distribution<int>(1, 30)(rng);
  std::vector<Lifetime> buffers;
  for (int i = 0; i < n; ++i) {
    const int kind = std::uniform_int_distribution<int>(0, 3)(rng);
    int64_t size = 0;
    if (kind == 0) size = std::uniform_int_distribution<int64_t>(0, 40)(rng);          // tiny
    if (kind == 1) size = 16 * std::uniform_int_distribution<int64_t>(1, 64)(rng);     // aligned
    if (kind == 2) size = std::uniform_int_distribution<int64_t>(1, 5000)(rng);        // anything
    if (kind == 3) size = 1024 * std::uniform_int_distribution<int64_t>(1, 8)(rng);    // repeats
    const int32_t first = std::uniform_int_distribution<int32_t>(0, steps - 1)(rng);
    const int32_t length = std::uniform_int_distribution<int32_t>(0, 1)(rng)
                               ? std::uniform_int_distribution<int32_t>(0, 2)(rng)
                               : std::uniform_int_distribution<int32_t>(0, steps)(rng);
    buffers.push_back(Lifetime{size, first, first + length});
  }
  return buffers;
}

TEST(Placement, RandomLifetimesPlaceValidlyAboveTheLowerBound) {
  std::mt19937 rng(20261122);
  int improved = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const std::vector<Lifetime> buffers = random_lifetimes(rng);
    for (int64_t alignment : {16, 4}) {
      const int64_t bound = peak_live_bytes(buffers, alignment);
      int64_t smallest = -1;
      std::string smallest_policy;
      for (const std::string& policy : placement_policies()) {
        const Placement p = place_buffers_with(buffers, alignment, policy);
        ASSERT_EQ(check_placement(buffers, alignment, p), "") << "trial " << trial << " " << policy;
        ASSERT_GE(p.arena_size, bound);
        ASSERT_EQ(p.arena_size % alignment, 0);
        // Never worse than stacking every buffer.
        int64_t total = 0;
        for (const Lifetime& b : buffers) total += align_up(b.size, alignment);
        ASSERT_LE(p.arena_size, total);
        if (smallest < 0 || p.arena_size < smallest) {
          smallest = p.arena_size;
          smallest_policy = policy;
        }
      }
      const Placement best = place_buffers(buffers, alignment);
      ASSERT_EQ(best.arena_size, smallest) << "trial " << trial;
      ASSERT_EQ(best.policy, smallest_policy) << "trial " << trial;
      ASSERT_EQ(check_placement(buffers, alignment, best), "");
      // Deterministic.
      ASSERT_EQ(place_buffers(buffers, alignment).offsets, best.offsets);
      if (best.arena_size < place_buffers_with(buffers, alignment, "size_first_fit").arena_size)
        ++improved;
    }
  }
  // The other policies beat TFLM's ordering on some of these sets.
  EXPECT_GT(improved, 0);
}

}  // namespace
}  // namespace cortexm
