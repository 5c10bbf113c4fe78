#include "cortexm/kernels/requantize_tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

// The test's own arithmetic: the centered input times 2^20, one double-rounding requantize.
int8_t expected_one(int32_t x, int32_t zp_in, int32_t zp_out, QuantizedMultiplier m, int32_t lo,
                    int32_t hi) {
  int64_t v = requantize((x - zp_in) * (1 << 20), m.multiplier, m.shift) + int64_t{zp_out};
  return static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
}

void check(int64_t size, int32_t zp_in, int32_t zp_out, QuantizedMultiplier m, int32_t lo,
           int32_t hi, uint32_t seed) {
  testing::RandomData rng(seed);
  const auto x = rng.int8s(static_cast<size_t>(size));
  RequantizeParams p;
  p.size = size;
  p.input_offset = -zp_in;
  p.output_offset = zp_out;
  p.multiplier = m.multiplier;
  p.shift = m.shift;
  p.activation_min = lo;
  p.activation_max = hi;
  ASSERT_TRUE(requantize_tensor_prepare(p).ok());
  std::vector<int8_t> fast(x.size()), ref(x.size()), want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = expected_one(x[i], zp_in, zp_out, m, lo, hi);
  requantize_tensor(p, x.data(), fast.data());
  requantize_tensor_reference(p, x.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
}

TEST(Requantize, SmallAndLarge) {
  check(7, 3, -5, quantize_multiplier(0.37 / (1 << 20)), -128, 127, 1);    // below the table size
  check(1000, -20, 9, quantize_multiplier(2.6 / (1 << 20)), -128, 127, 2);  // table path
}

TEST(Requantize, IdentityKeepsValues) {
  const int64_t n = 300;
  testing::RandomData rng(3);
  const auto x = rng.int8s(n);
  RequantizeParams p;
  p.size = n;
  const QuantizedMultiplier one = quantize_multiplier(1.0 / (1 << 20));
  p.multiplier = one.multiplier;
  p.shift = one.shift;
  std::vector<int8_t> out(n);
  requantize_tensor(p, x.data(), out.data());
  EXPECT_EQ(out, x);
}

TEST(Requantize, WithinHalfLsbOfFloat) {
  testing::RandomData rng(4);
  const double s_in = 0.0417, s_out = 0.0933;
  const int32_t zp_in = 11, zp_out = -7;
  const QuantizedMultiplier m = quantize_multiplier(s_in / s_out / (1 << 20));
  for (int32_t x = -128; x < 128; ++x) {
    const double real = (x - zp_in) * s_in / s_out + zp_out;
    const double clamped = real < -128 ? -128 : (real > 127 ? 127 : real);
    EXPECT_LE(std::abs(expected_one(x, zp_in, zp_out, m, -128, 127) - clamped), 0.5 + 1e-4);
  }
}

TEST(Requantize, RandomizedAwkwardCases) {
  testing::RandomData rng(99);
  for (int i = 0; i < 200; ++i) {
    const int32_t lo = rng.uniform(-128, 100);
    const double scale = rng.uniform(1, 100000) / 1e4;
    check(rng.uniform(1, 700), rng.uniform(-128, 127), rng.uniform(-128, 127),
          quantize_multiplier(scale / (1 << 20)), lo, rng.uniform(lo, 127), uint32_t(i));
  }
  check(600, -128, 127, QuantizedMultiplier{INT32_MAX, 30}, -128, 127, 5);  // wraps as on target
  check(600, 127, -128, QuantizedMultiplier{1, -31}, -128, 127, 6);
}

TEST(Requantize, PrepareRejectsBadParams) {
  RequantizeParams p;
  auto rejects = [](const RequantizeParams& bad, const char* argument, int64_t value) {
    const Error e = requantize_tensor_prepare(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
  };
  RequantizeParams bad = p;
  bad.input_offset = 129;
  rejects(bad, "input_zero_point", -129);
  bad.input_offset = INT32_MIN;  // the zero point it names, 2^31, does not fit an int32
  rejects(bad, "input_zero_point", int64_t{1} << 31);
  bad = p;
  bad.output_offset = 128;
  rejects(bad, "output_zero_point", 128);
  bad = p;
  bad.multiplier = -1;
  rejects(bad, "output_multiplier", -1);
  bad = p;
  bad.shift = 31;
  rejects(bad, "output_shift", 31);
  bad = p;
  bad.activation_min = 5;
  bad.activation_max = 4;
  rejects(bad, "activation_min", 5);
}

}  // namespace
}  // namespace cortexm
