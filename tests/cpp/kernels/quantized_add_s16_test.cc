#include "cortexm/kernels/quantized_add_s16.h"

#include <gtest/gtest.h>

#include <algorithm>
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
class AddS16Tester {
 public:
  AddS16Tester& lhs_shape(std::vector<int64_t> s) { lhs_shape_ = std::move(s); return *this; }
  AddS16Tester& rhs_shape(std::vector<int64_t> s) { rhs_shape_ = std::move(s); return *this; }
  AddS16Tester& scales(double a, double b, double out) { sa_ = a; sb_ = b; so_ = out; return *this; }
  AddS16Tester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  // Fixed multipliers instead of ones derived from scales; turns the float check off.
  AddS16Tester& requantize_with(QuantizedMultiplier a, QuantizedMultiplier b, QuantizedMultiplier out) {
    fixed_ = true; ma_ = a; mb_ = b; mo_ = out; return *this;
  }
  AddS16Tester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    const std::vector<int64_t> out_shape = broadcast_shape(lhs_shape_, rhs_shape_);
    const auto a = testing::int16s_with_extremes(rng, element_count(lhs_shape_));
    const auto b = testing::int16s_with_extremes(rng, element_count(rhs_shape_));
    // TFLite's 16x8 derivation: each input to twice the larger input scale, << 15.
    const double twice_max = 2.0 * std::max(sa_, sb_);
    QuantizedMultiplier ma = quantize_multiplier(sa_ / twice_max);
    QuantizedMultiplier mb = quantize_multiplier(sb_ / twice_max);
    QuantizedMultiplier mo = quantize_multiplier(twice_max / (32768.0 * so_));
    if (fixed_) { ma = ma_; mb = mb_; mo = mo_; }

    AddS16Params p;
    ASSERT_TRUE(make_broadcast_shape(lhs_shape_.data(), int(lhs_shape_.size()), rhs_shape_.data(),
                                     int(rhs_shape_.size()), &p.shape).ok());
    p.lhs_multiplier = ma.multiplier;
    p.lhs_shift = ma.shift;
    p.rhs_multiplier = mb.multiplier;
    p.rhs_shift = mb.shift;
    p.output_multiplier = mo.multiplier;
    p.output_shift = mo.shift;
    p.activation_min = act_min_;
    p.activation_max = act_max_;
    ASSERT_TRUE(quantized_add_s16_prepare(p).ok());

    const size_t n = element_count(out_shape);
    std::vector<int16_t> expected(n), fast(n + 8, int16_t(0x5A5A)), ref(n);
    for (size_t e = 0; e < n; ++e) {
      const int32_t x = a[source_index(e, out_shape, lhs_shape_)];
      const int32_t y = b[source_index(e, out_shape, rhs_shape_)];
      const int64_t sum = int64_t{requantize(x * 32768, ma.multiplier, ma.shift)} +
                          requantize(y * 32768, mb.multiplier, mb.shift);
      const int32_t o = requantize(static_cast<int32_t>(static_cast<uint32_t>(sum)), mo.multiplier, mo.shift);
      expected[e] = static_cast<int16_t>(o < act_min_ ? act_min_ : (o > act_max_ ? act_max_ : o));
    }
    quantized_add_s16(p, a.data(), b.data(), fast.data());
    quantized_add_s16_reference(p, a.data(), b.data(), ref.data());
    ASSERT_EQ(ref, expected);
    for (size_t e = n; e < fast.size(); ++e) ASSERT_EQ(fast[e], int16_t(0x5A5A)) << "wrote past the output";
    fast.resize(n);
    ASSERT_EQ(fast, expected);

    if (fixed_) return;
    // Within 1 LSB of float math (each input rounded once, the sum once).
    for (size_t e = 0; e < n; ++e) {
      const double real = sa_ * a[source_index(e, out_shape, lhs_shape_)] +
                          sb_ * b[source_index(e, out_shape, rhs_shape_)];
      double q = real / so_;
      q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
      ASSERT_LE(std::abs(q - expected[e]), 1.0) << "element " << e << " float " << q;
    }
  }

 private:
  std::vector<int64_t> lhs_shape_{2, 5, 7, 13};
  std::vector<int64_t> rhs_shape_{2, 5, 7, 13};
  double sa_ = 3.1e-4, sb_ = 4.7e-4, so_ = 9.0e-4;
  int32_t act_min_ = -32768, act_max_ = 32767;
  bool fixed_ = false;
  QuantizedMultiplier ma_, mb_, mo_;
  uint32_t seed_ = 1;
};

TEST(QuantizedAddS16, SameShape) { AddS16Tester().Test(); }
TEST(QuantizedAddS16, OddLength) { AddS16Tester().lhs_shape({1001}).rhs_shape({1001}).Test(); }
TEST(QuantizedAddS16, BroadcastChannel) { AddS16Tester().rhs_shape({13}).seed(2).Test(); }
TEST(QuantizedAddS16, BroadcastSqueezeExcite) {
  AddS16Tester().lhs_shape({2, 5, 7, 13}).rhs_shape({2, 1, 1, 13}).seed(3).Test();
  AddS16Tester().lhs_shape({2, 1, 1, 13}).rhs_shape({2, 5, 7, 13}).seed(4).Test();
}
TEST(QuantizedAddS16, BroadcastBothWays) {
  AddS16Tester().lhs_shape({3, 1, 5}).rhs_shape({1, 4, 1}).seed(5).Test();
}
TEST(QuantizedAddS16, ScalarOperand) {
  AddS16Tester().lhs_shape({}).rhs_shape({3, 3}).seed(6).Test();
  AddS16Tester().lhs_shape({7, 11}).rhs_shape({1}).seed(7).Test();
}
TEST(QuantizedAddS16, SameInputTwice) {  // x + x with one scale
  AddS16Tester().scales(1e-3, 1e-3, 2e-3).seed(8).Test();
}
TEST(QuantizedAddS16, VeryDifferentScales) {
  AddS16Tester().scales(0.9, 7e-7, 0.45).seed(9).Test();
  AddS16Tester().scales(7e-7, 0.9, 1.8).seed(10).Test();
}
TEST(QuantizedAddS16, TinyAndLargeOutputScale) {
  AddS16Tester().scales(1e-3, 2e-3, 1e-6).seed(11).Test();  // saturates nearly everywhere
  AddS16Tester().scales(1e-3, 2e-3, 50.0).seed(12).Test();  // nearly everything rounds to 0
}
TEST(QuantizedAddS16, FusedActivationRange) {
  AddS16Tester().activation(0, 32767).seed(13).Test();
  AddS16Tester().activation(-300, 4000).seed(14).Test();
}
TEST(QuantizedAddS16, ExtremeRequantization) {
  const QuantizedMultiplier half{1 << 30, 0}, max_left{INT32_MAX, 30}, max_right{INT32_MAX, -31};
  AddS16Tester().requantize_with(max_left, half, half).seed(15).Test();  // wraps, as on target
  AddS16Tester().requantize_with(half, half, max_left).seed(16).Test();
  AddS16Tester().requantize_with(max_right, max_right, max_right).seed(17).Test();
  AddS16Tester().requantize_with({INT32_MAX, 0}, {INT32_MAX, 0}, {1, 30}).seed(18).Test();
  AddS16Tester().requantize_with({0, 0}, half, {INT32_MAX, 1}).seed(19).Test();
}

TEST(QuantizedAddS16, RandomizedAwkwardCases) {
  testing::RandomData rng(321);
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
    AddS16Tester()
        .lhs_shape(a).rhs_shape(b).seed(uint32_t(i))
        .scales(sa, sb, std::max(sa, sb) * rng.uniform(10, 1000) / 100.0)
        .activation(lo, rng.uniform(lo, 32767))
        .Test();
  }
}

TEST(QuantizedAddS16, PrepareRejectsBadParams) {
  AddS16Params p;
  p.lhs_multiplier = p.rhs_multiplier = p.output_multiplier = 1 << 30;
  EXPECT_TRUE(quantized_add_s16_prepare(p).ok());
  auto expect_rejects = [](const AddS16Params& bad, const char* argument, int64_t value) {
    const Error e = quantized_add_s16_prepare(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
  };
  AddS16Params bad = p;
  bad.lhs_multiplier = -1;
  expect_rejects(bad, "self_multiplier", -1);
  bad = p;
  bad.rhs_shift = 31;
  expect_rejects(bad, "other_shift", 31);
  bad = p;
  bad.output_shift = -32;
  expect_rejects(bad, "output_shift", -32);
  bad = p;
  bad.activation_min = -32769;
  expect_rejects(bad, "activation_min", -32769);
  bad = p;
  bad.activation_max = 32768;
  expect_rejects(bad, "activation_max", 32768);
  bad = p;
  bad.activation_min = 5;
  bad.activation_max = 4;
  expect_rejects(bad, "activation_min", 5);
}

}  // namespace
}  // namespace cortexm
