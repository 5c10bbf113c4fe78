#include "cortexm/kernels/requantize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "random_data.h"

namespace cortexm {
namespace {

// Independent model of the rounding rules in wide arithmetic: 128-bit where the compiler has it;
// 32-bit targets use 64 bits, enough for the double-rounding model (|shifted * multiplier| < 2^62).
#ifdef __SIZEOF_INT128__
using Wide = __int128;
#else
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
#error "the single-rounding model needs __int128"
#endif
using Wide = int64_t;
#endif

int32_t requantize_model(int32_t acc, int32_t multiplier, int32_t shift) {
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
  // One rounding, halves up, of acc * multiplier / 2^(31 - shift).
  const Wide product = static_cast<Wide>(acc) * multiplier;
  return static_cast<int32_t>((product + (static_cast<Wide>(1) << (30 - shift))) >> (31 - shift));
#else
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(acc) * (uint32_t{1} << left));
  // round-half-up of shifted * multiplier / 2^31
  const Wide product = static_cast<Wide>(shifted) * multiplier;
  const int64_t high = static_cast<int64_t>(
      (product + (static_cast<Wide>(1) << 30)) >> 31);  // arithmetic shift = floor
  if (right == 0) return static_cast<int32_t>(high);
  // round-half-away-from-zero of high / 2^right
  const int64_t d = int64_t{1} << right;
  const int64_t magnitude = high < 0 ? -high : high;
  const int64_t q = (magnitude + d / 2) / d;
  return static_cast<int32_t>(high < 0 ? -q : q);
#endif
}

#if !(defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING)
TEST(Requantize, TiesRoundAwayFromZero) {
  // multiplier 2^30 is 0.5 and shift -1 halves again; even inputs make the first step exact.
  EXPECT_EQ(requantize(6, 1 << 30, -1), 2);    // 1.5
  EXPECT_EQ(requantize(-6, 1 << 30, -1), -2);  // -1.5
  EXPECT_EQ(requantize(10, 1 << 30, -1), 3);   // 2.5
  EXPECT_EQ(requantize(-10, 1 << 30, -1), -3);
  EXPECT_EQ(requantize(4, 1 << 30, -1), 1);
  EXPECT_EQ(requantize(-2, 1 << 30, -1), -1);  // -0.5
}

TEST(Requantize, DoubleRoundingRoundsTwice) {
  // 5 * 0.5 = 2.5 rounds up to 3 in the high multiply, then 3 / 2 = 1.5 rounds to 2:
  // the exact 1.25 would give 1. This is CMSIS-NN's (and TFLite's) default behaviour.
  EXPECT_EQ(requantize(5, 1 << 30, -1), 2);
  EXPECT_EQ(requantize(1, 1 << 30, -1), 1);    // 0.25 -> 0.5 -> 1
  EXPECT_EQ(requantize(-5, 1 << 30, -1), -1);  // -2.5 -> -2 -> -1
  EXPECT_EQ(requantize(7, 1 << 30, -1), 2);    // 3.5 -> 4 -> 2
}
#else
TEST(Requantize, SingleRoundingRoundsHalvesUp) {
  EXPECT_EQ(requantize(6, 1 << 30, -1), 2);    // 1.5
  EXPECT_EQ(requantize(-6, 1 << 30, -1), -1);  // -1.5
  EXPECT_EQ(requantize(5, 1 << 30, -1), 1);    // 1.25
  EXPECT_EQ(requantize(7, 1 << 30, -1), 2);    // 1.75
}
#endif

TEST(Requantize, DoublingHighMultRoundsHalfUp) {
  // 3 * 0.5 = 1.5 -> 2 and -3 * 0.5 = -1.5 -> -1 inside the high multiply (no right shift).
  EXPECT_EQ(doubling_high_mult_no_sat(3, 1 << 30), 2);
  EXPECT_EQ(doubling_high_mult_no_sat(-3, 1 << 30), -1);
}

#if !(defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING)
// The single-rounding variant, like CMSIS-NN's, is defined only where the result fits.
TEST(Requantize, Int32Extremes) {
  EXPECT_EQ(requantize(INT32_MAX, INT32_MAX, 0), requantize_model(INT32_MAX, INT32_MAX, 0));
  EXPECT_EQ(requantize(INT32_MIN, INT32_MAX, 0), requantize_model(INT32_MIN, INT32_MAX, 0));
  EXPECT_EQ(requantize(INT32_MIN, INT32_MAX, -31), requantize_model(INT32_MIN, INT32_MAX, -31));
  EXPECT_EQ(requantize(INT32_MAX, INT32_MAX, -31), 1);
  EXPECT_EQ(requantize(INT32_MIN, INT32_MAX, -31), -1);
  EXPECT_EQ(requantize(INT32_MIN, 0, 5), 0);
  // A left shift that overflows wraps as on the target.
  EXPECT_EQ(requantize(1 << 30, 1 << 30, 2), requantize_model(1 << 30, 1 << 30, 2));
}
#endif

TEST(Requantize, MatchesModelOnRandomValues) {
  testing::RandomData rng(7);
  for (int i = 0; i < 200000; ++i) {
    const int32_t acc = i % 3 == 0 ? rng.uniform(INT32_MIN, INT32_MAX) : rng.uniform(-70000, 70000);
    const int32_t multiplier = i % 5 == 0 ? rng.uniform(0, INT32_MAX) : rng.multiplier();
    const int32_t shift = rng.uniform(kMinShift, i % 7 == 0 ? kMaxShift : 2);
#if defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING
    const Wide exact = static_cast<Wide>(acc) * multiplier;
    if (exact >= (static_cast<Wide>(1) << (60 - shift)) ||
        exact < -(static_cast<Wide>(1) << (60 - shift)))
      continue;
#endif
    ASSERT_EQ(requantize(acc, multiplier, shift), requantize_model(acc, multiplier, shift))
        << "acc=" << acc << " multiplier=" << multiplier << " shift=" << shift;
  }
}

TEST(QuantizeMultiplier, TfliteConvention) {
  auto q = quantize_multiplier(0.5);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 0);
  q = quantize_multiplier(1.0);
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  q = quantize_multiplier(0.0);
  EXPECT_EQ(q.multiplier, 0);
  EXPECT_EQ(q.shift, 0);
  // Rounds up to 2^31: the fix-up halves it and bumps the shift.
  q = quantize_multiplier(std::nextafter(1.0, 0.0));
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, 1);
  // Below 2^-32 the shift would be < -31: flushed to zero.
  q = quantize_multiplier(std::ldexp(1.0, -33));
  EXPECT_EQ(q.multiplier, 0);
  EXPECT_EQ(q.shift, 0);
  q = quantize_multiplier(std::ldexp(1.0, -32));  // frexp exponent -31: kept
  EXPECT_EQ(q.multiplier, 1 << 30);
  EXPECT_EQ(q.shift, -31);
  q = quantize_multiplier(std::ldexp(1.0, 40));  // shift above 30 saturates
  EXPECT_EQ(q.multiplier, INT32_MAX);
  EXPECT_EQ(q.shift, 30);
}

TEST(QuantizeMultiplier, ReconstructsScale) {
  testing::RandomData rng(11);
  for (int i = 0; i < 10000; ++i) {
    const double scale = std::ldexp(1.0 + rng.uniform(0, 1 << 20) / double(1 << 20), rng.uniform(-30, 20));
    const auto q = quantize_multiplier(scale);
    const double back = std::ldexp(double(q.multiplier), q.shift - 31);
    ASSERT_NEAR(back / scale, 1.0, 1e-9) << scale;
    ASSERT_GE(q.multiplier, 1 << 30);
  }
}

}  // namespace
}  // namespace cortexm
