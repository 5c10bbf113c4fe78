#include "cortexm/kernels/quantized_mul_s16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "binary_s16_testing.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {
namespace {

using testing::broadcast_shape;
using testing::element_count;
using testing::source_index;

// Builder with awkward defaults: odd shapes with batch 2, unequal scales, inputs at the extremes.
class MulS16Tester {
 public:
  MulS16Tester& lhs_shape(std::vector<int64_t> s) { lhs_shape_ = std::move(s); return *this; }
  MulS16Tester& rhs_shape(std::vector<int64_t> s) { rhs_shape_ = std::move(s); return *this; }
  MulS16Tester& scales(double a, double b, double out) { sa_ = a; sb_ = b; so_ = out; return *this; }
  MulS16Tester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  // Fixed requantization instead of one derived from scales; turns the float check off.
  MulS16Tester& requantize_with(int32_t multiplier, int32_t shift) {
    fixed_ = true; fixed_multiplier_ = multiplier; fixed_shift_ = shift; return *this;
  }
  MulS16Tester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    const std::vector<int64_t> out_shape = broadcast_shape(lhs_shape_, rhs_shape_);
    const auto a = testing::int16s_with_extremes(rng, element_count(lhs_shape_));
    const auto b = testing::int16s_with_extremes(rng, element_count(rhs_shape_));
    QuantizedMultiplier m = quantize_multiplier(sa_ * sb_ / so_);
    if (fixed_) m = {fixed_multiplier_, fixed_shift_};

    MulS16Params p;
    ASSERT_TRUE(make_broadcast_shape(lhs_shape_.data(), int(lhs_shape_.size()), rhs_shape_.data(),
                                     int(rhs_shape_.size()), &p.shape).ok());
    p.output_multiplier = m.multiplier;
    p.output_shift = m.shift;
    p.activation_min = act_min_;
    p.activation_max = act_max_;
    ASSERT_TRUE(quantized_mul_s16_prepare(p).ok());

    const size_t n = element_count(out_shape);
    std::vector<int16_t> expected(n), fast(n + 8, int16_t(0x5A5A)), ref(n);
    for (size_t e = 0; e < n; ++e) {
      const int32_t x = a[source_index(e, out_shape, lhs_shape_)];
      const int32_t y = b[source_index(e, out_shape, rhs_shape_)];
      const int32_t o = requantize(x * y, m.multiplier, m.shift);
      expected[e] = static_cast<int16_t>(o < act_min_ ? act_min_ : (o > act_max_ ? act_max_ : o));
    }
    quantized_mul_s16(p, a.data(), b.data(), fast.data());
    quantized_mul_s16_reference(p, a.data(), b.data(), ref.data());
    ASSERT_EQ(ref, expected);
    for (size_t e = n; e < fast.size(); ++e) ASSERT_EQ(fast[e], int16_t(0x5A5A)) << "wrote past the output";
    fast.resize(n);
    ASSERT_EQ(fast, expected);

    if (fixed_) return;
    // Within 0.5 LSB of float math, + the high multiply's rounding (0.5 * 2^shift, double rounding)
    // and the multiplier's relative error.
    for (size_t e = 0; e < n; ++e) {
      const double real = sa_ * a[source_index(e, out_shape, lhs_shape_)] * sb_ *
                          b[source_index(e, out_shape, rhs_shape_)];
      double q = real / so_;
      const double slack = 0.5 + 0.5 * std::ldexp(1.0, m.shift < 0 ? m.shift : 0) + std::abs(q) * 1e-9;
      q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
      ASSERT_LE(std::abs(q - expected[e]), slack) << "element " << e << " float " << q;
    }
  }

 private:
  std::vector<int64_t> lhs_shape_{2, 5, 7, 13};
  std::vector<int64_t> rhs_shape_{2, 5, 7, 13};
  double sa_ = 3.1e-4, sb_ = 4.7e-4, so_ = 2.9e-4;
  int32_t act_min_ = -32768, act_max_ = 32767;
  bool fixed_ = false;
  int32_t fixed_multiplier_ = 0, fixed_shift_ = 0;
  uint32_t seed_ = 1;
};

TEST(QuantizedMulS16, SameShape) { MulS16Tester().Test(); }
TEST(QuantizedMulS16, OddLength) { MulS16Tester().lhs_shape({1001}).rhs_shape({1001}).Test(); }
TEST(QuantizedMulS16, BroadcastChannel) { MulS16Tester().rhs_shape({13}).seed(2).Test(); }
TEST(QuantizedMulS16, BroadcastSqueezeExcite) {
  MulS16Tester().lhs_shape({2, 5, 7, 13}).rhs_shape({2, 1, 1, 13}).seed(3).Test();
}
TEST(QuantizedMulS16, BroadcastLhsRow) {
  MulS16Tester().lhs_shape({2, 1, 13}).rhs_shape({2, 9, 13}).seed(4).Test();
}
TEST(QuantizedMulS16, BroadcastBothWays) {
  MulS16Tester().lhs_shape({3, 1, 5}).rhs_shape({1, 4, 1}).seed(5).Test();
}
TEST(QuantizedMulS16, ScalarOperand) {
  MulS16Tester().lhs_shape({}).rhs_shape({3, 3}).seed(6).Test();
  MulS16Tester().lhs_shape({7, 11}).rhs_shape({1}).seed(7).Test();
}
TEST(QuantizedMulS16, TinyAndLargeScaleRatios) {
  MulS16Tester().scales(1e-3, 1e-3, 1.01e-6).seed(8).Test();  // saturates nearly everywhere
  MulS16Tester().scales(1e-3, 1e-3, 10.0).seed(9).Test();   // only the largest products survive
  MulS16Tester().scales(0.9, 3e-7, 1e-3).seed(10).Test();
}
TEST(QuantizedMulS16, FusedActivationRange) {
  MulS16Tester().activation(0, 32767).seed(11).Test();
  MulS16Tester().activation(-1000, 250).seed(12).Test();
}
TEST(QuantizedMulS16, ExtremeRequantization) {
  MulS16Tester().requantize_with(INT32_MAX, 30).seed(13).Test();  // left shift wraps, as on target
  MulS16Tester().requantize_with(INT32_MAX, -31).seed(14).Test();
  MulS16Tester().requantize_with(1, 30).seed(15).Test();
  MulS16Tester().requantize_with(0, 0).seed(16).Test();
  MulS16Tester().requantize_with(1 << 30, 2).seed(17).Test();
}
TEST(QuantizedMulS16, MostNegativeSquared) {  // -32768 * -32768 = 2^30 fits the int32 product
  MulS16Params p;
  const int64_t one = 1;
  ASSERT_TRUE(make_broadcast_shape(&one, 1, &one, 1, &p.shape).ok());
  p.output_multiplier = 1 << 30;  // 2^30 * 0.5 * 2^-14 = 2^15, clamps to 32767
  p.output_shift = -14;
  const int16_t x = -32768;
  int16_t out = 0, ref = 0;
  quantized_mul_s16(p, &x, &x, &out);
  quantized_mul_s16_reference(p, &x, &x, &ref);
  EXPECT_EQ(out, 32767);
  EXPECT_EQ(ref, 32767);
}

TEST(QuantizedMulS16, RandomizedAwkwardCases) {
  testing::RandomData rng(123);
  for (int i = 0; i < 300; ++i) {
    std::vector<int64_t> a, b;
    const int rank = rng.uniform(1, 5);
    for (int d = 0; d < rank; ++d) {
      const int64_t ext = rng.uniform(1, 7);
      a.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
      b.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
    }
    if (rng.uniform(0, 2) == 0) b.erase(b.begin());
    if (rng.uniform(0, 4) == 0) std::swap(a, b);
    const int32_t lo = rng.uniform(-32768, 30000);
    const double sa = std::pow(10.0, rng.uniform(-700, 0) / 100.0);
    const double sb = std::pow(10.0, rng.uniform(-700, 0) / 100.0);
    MulS16Tester()
        .lhs_shape(a).rhs_shape(b).seed(uint32_t(i))
        .scales(sa, sb, sa * sb * std::pow(10.0, rng.uniform(1, 600) / 100.0))
        .activation(lo, rng.uniform(lo, 32767))
        .Test();
  }
}

TEST(QuantizedMulS16, PrepareRejectsBadParams) {
  MulS16Params p;
  p.output_multiplier = 1 << 30;
  EXPECT_TRUE(quantized_mul_s16_prepare(p).ok());
  auto expect_rejects = [](const MulS16Params& bad, const char* argument, int64_t value) {
    const Error e = quantized_mul_s16_prepare(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
  };
  MulS16Params bad = p;
  bad.output_multiplier = -5;
  expect_rejects(bad, "output_multiplier", -5);
  bad = p;
  bad.output_shift = 31;
  expect_rejects(bad, "output_shift", 31);
  bad = p;
  bad.activation_min = -32769;
  expect_rejects(bad, "activation_min", -32769);
  bad = p;
  bad.activation_max = 32768;
  expect_rejects(bad, "activation_max", 32768);
  bad = p;
  bad.activation_min = 1;
  bad.activation_max = 0;
  expect_rejects(bad, "activation_min", 1);
}

}  // namespace
}  // namespace cortexm
