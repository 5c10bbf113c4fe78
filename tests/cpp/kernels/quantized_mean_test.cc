#include "cortexm/kernels/quantized_mean.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

// The test's own loops over [outer, reduce, inner].
void check(int32_t outer, int32_t reduce, int32_t inner, int32_t zp_in, int32_t zp_out,
           double s_in, double s_out, int32_t lo, int32_t hi, uint32_t seed) {
  testing::RandomData rng(seed);
  const auto x = rng.int8s(size_t(outer) * reduce * inner);
  const QuantizedMultiplier m = mean_multiplier(quantize_multiplier(s_in / s_out), reduce);
  MeanParams p;
  p.outer = outer;
  p.reduce = reduce;
  p.inner = inner;
  p.input_offset = -zp_in;
  p.output_offset = zp_out;
  p.multiplier = m.multiplier;
  p.shift = m.shift;
  p.activation_min = lo;
  p.activation_max = hi;
  ASSERT_TRUE(quantized_mean_prepare(p).ok());
  const size_t n = size_t(outer) * inner;
  std::vector<int8_t> want(n), fast(n), ref(n);
  size_t far = 0;
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      int32_t sum = 0;
      for (int32_t r = 0; r < reduce; ++r) sum += x[(size_t(o) * reduce + r) * inner + i] - zp_in;
      const int32_t v = requantize(sum, m.multiplier, m.shift) + zp_out;
      want[size_t(o) * inner + i] = static_cast<int8_t>(std::min(std::max(v, lo), hi));
      double real = s_in * sum / reduce / s_out + zp_out;
      real = std::min(std::max(real, double(lo)), double(hi));
      if (std::abs(real - want[size_t(o) * inner + i]) > 0.75) ++far;
    }
  std::vector<int32_t> scratch(quantized_mean_scratch_size(p, Isa::kScalar) / 4);
  quantized_mean(p, x.data(), fast.data(), scratch.data());
  quantized_mean_reference(p, x.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
  EXPECT_EQ(far, 0u);  // within 3/4 LSB of the real mean (the multiply rounds at 2^shift)
}

// quantized_mean_s16: the same arithmetic over symmetric int16 (the test's own loops, int64 sums).
void check_s16(int32_t outer, int32_t reduce, int32_t inner, double s_in, double s_out, int32_t lo,
               int32_t hi, int32_t x_lo, int32_t x_hi, uint32_t seed) {
  testing::RandomData rng(seed);
  std::vector<int16_t> x(size_t(outer) * reduce * inner);
  for (int16_t& v : x) v = static_cast<int16_t>(rng.uniform(x_lo, x_hi));
  const QuantizedMultiplier m = mean_multiplier(quantize_multiplier(s_in / s_out), reduce);
  MeanParams p;
  p.outer = outer;
  p.reduce = reduce;
  p.inner = inner;
  p.multiplier = m.multiplier;
  p.shift = m.shift;
  p.activation_min = lo;
  p.activation_max = hi;
  ASSERT_TRUE(quantized_mean_s16_prepare(p).ok());
  const size_t n = size_t(outer) * inner;
  std::vector<int16_t> want(n), fast(n), ref(n);
  for (int32_t o = 0; o < outer; ++o)
    for (int32_t i = 0; i < inner; ++i) {
      int64_t sum = 0;
      for (int32_t r = 0; r < reduce; ++r) sum += x[(size_t(o) * reduce + r) * inner + i];
      ASSERT_LE(std::abs(sum), int64_t{INT32_MAX});
      const int32_t v = requantize(static_cast<int32_t>(sum), m.multiplier, m.shift);
      want[size_t(o) * inner + i] = static_cast<int16_t>(std::min(std::max(v, lo), hi));
      const double real = std::min(std::max(s_in * double(sum) / reduce / s_out, double(lo)), double(hi));
      ASSERT_LE(std::abs(real - want[size_t(o) * inner + i]), 0.75) << o << " " << i;
    }
  std::vector<int32_t> scratch(quantized_mean_scratch_size(p, Isa::kScalar) / 4 + 1);
  quantized_mean_s16(p, x.data(), fast.data(), scratch.data());
  quantized_mean_s16_reference(p, x.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
}

TEST(QuantizedMeanS16, SpatialNchwAndChannelsLast) {
  check_s16(2 * 16, 7 * 5, 1, 3e-4, 3e-4, -32768, 32767, -32768, 32767, 1);
  check_s16(2, 7 * 5, 16, 3e-4, 1e-4, -32768, 32767, -32768, 32767, 2);
}

// The largest reduce, every value at one extreme: the sum is -2^31 + 32768, still an int32.
TEST(QuantizedMeanS16, LargestReduceAtTheExtremes) {
  check_s16(1, 65535, 1, 1e-3, 1e-3, -32768, 32767, -32768, -32768, 3);
  check_s16(1, 65535, 2, 1e-3, 2e-3, -32768, 32767, 32767, 32767, 4);
}

TEST(QuantizedMeanS16, RandomizedAwkwardCases) {
  testing::RandomData rng(6);
  for (int i = 0; i < 200; ++i) {
    const int32_t lo = rng.uniform(-32768, 30000);
    const double s_in = rng.uniform(1, 1000) / 1e6;
    const int32_t x_lo = rng.uniform(-32768, 32767);
    check_s16(rng.uniform(1, 6), rng.uniform(1, 300), rng.uniform(1, 9), s_in,
              s_in * rng.uniform(20, 400) / 100.0, lo, rng.uniform(lo, 32767), x_lo,
              rng.uniform(x_lo, 32767), uint32_t(100 + i));
  }
}

TEST(QuantizedMeanS16, PrepareRejectsBadParams) {
  MeanParams p;
  p.reduce = 4;
  p.multiplier = 1 << 30;
  p.activation_min = -32768;
  p.activation_max = 32767;
  EXPECT_TRUE(quantized_mean_s16_prepare(p).ok());
  EXPECT_STREQ(quantized_mean_prepare(p).argument, "activation_min");  // int8's range
  MeanParams bad = p;
  bad.reduce = 65536;
  EXPECT_STREQ(quantized_mean_s16_prepare(bad).argument, "reduce");
  bad = p;
  bad.input_offset = 1;
  EXPECT_STREQ(quantized_mean_s16_prepare(bad).argument, "input_offset");
  bad = p;
  bad.output_offset = -1;
  EXPECT_STREQ(quantized_mean_s16_prepare(bad).argument, "output_offset");
  bad = p;
  bad.shift = 31;
  EXPECT_STREQ(quantized_mean_s16_prepare(bad).argument, "output_shift");
  bad = p;
  bad.activation_max = 32768;
  EXPECT_STREQ(quantized_mean_s16_prepare(bad).argument, "activation_max");
}

TEST(QuantizedMean, SpatialNchwAndChannelsLast) {
  check(2 * 16, 7 * 5, 1, -3, -3, 0.05, 0.05, -128, 127, 1);  // NCHW [N*C, H*W, 1]
  check(2, 7 * 5, 16, -3, 4, 0.05, 0.02, -128, 127, 2);       // NHWC [N, H*W, C]
}

TEST(QuantizedMean, RandomizedAwkwardCases) {
  testing::RandomData rng(5);
  for (int i = 0; i < 200; ++i) {
    const int32_t lo = rng.uniform(-128, 100);
    const double s_in = rng.uniform(1, 1000) / 1e4;
    check(rng.uniform(1, 6), rng.uniform(1, 60), rng.uniform(1, 9), rng.uniform(-128, 127),
          rng.uniform(-128, 127), s_in, s_in * rng.uniform(20, 400) / 100.0, lo,
          rng.uniform(lo, 127), uint32_t(i));
  }
}

// TFLM's fold of 1/count, worked by hand: k = min(floor(log2 count), 31 + shift),
// ((multiplier << k) / count, shift - k).
TEST(QuantizedMean, MeanMultiplierFoldsTheCountLikeTflm) {
  auto fold = [](int32_t m, int32_t s, int64_t count) {
    const QuantizedMultiplier r = mean_multiplier({m, s}, count);
    return std::vector<int32_t>{r.multiplier, r.shift};
  };
  EXPECT_EQ(fold(1 << 30, 1, 1), (std::vector<int32_t>{1 << 30, 1}));            // count 1: as is
  EXPECT_EQ(fold(1 << 30, 1, 49), (std::vector<int32_t>{701219150, -4}));        // 2^35 / 49
  EXPECT_EQ(fold(1518500250, 0, 3), (std::vector<int32_t>{1012333500, -1}));     // k = 1
  EXPECT_EQ(fold(INT32_MAX, 30, 1000), (std::vector<int32_t>{1099511627, 21}));  // k = 9
  EXPECT_EQ(fold(1 << 30, -29, 1000), (std::vector<int32_t>{4294967, -31}));     // k capped at 2
  EXPECT_EQ(fold(1 << 30, -31, 1000), (std::vector<int32_t>{1073741, -31}));     // k capped at 0
  EXPECT_EQ(fold(0, 0, 96), (std::vector<int32_t>{0, -6}));
}

TEST(QuantizedMean, PrepareRejectsBadParams) {
  MeanParams p;
  MeanParams bad = p;
  bad.reduce = 0;
  Error e = quantized_mean_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "reduce");
  bad = p;
  bad.input_offset = -128;
  e = quantized_mean_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "input_offset");
  bad = p;
  bad.shift = 31;
  e = quantized_mean_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "output_shift");
}

}  // namespace
}  // namespace cortexm
