#include "cortexm/kernels/quantized_mul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

// Builder with awkward defaults: odd shapes with batch 2, nonzero zero points on all three
// tensors, unequal scales.
class MulTester {
 public:
  MulTester& lhs_shape(std::vector<int64_t> s) { lhs_shape_ = std::move(s); return *this; }
  MulTester& rhs_shape(std::vector<int64_t> s) { rhs_shape_ = std::move(s); return *this; }
  MulTester& zero_points(int32_t a, int32_t b, int32_t out) {
    zp_a_ = a; zp_b_ = b; zp_out_ = out; return *this;
  }
  MulTester& scales(double a, double b, double out) { sa_ = a; sb_ = b; so_ = out; return *this; }
  MulTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  // Fixed requantization instead of one derived from scales; turns the float check off.
  MulTester& requantize_with(int32_t multiplier, int32_t shift) {
    fixed_multiplier_ = multiplier; fixed_shift_ = shift; fixed_requantize_ = true; return *this;
  }
  MulTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    const std::vector<int64_t> out_shape = broadcast(lhs_shape_, rhs_shape_);
    const auto a = rng.int8s(count(lhs_shape_));
    const auto b = rng.int8s(count(rhs_shape_));
    QuantizedMultiplier m = quantize_multiplier(sa_ * sb_ / so_);
    if (fixed_requantize_) m = {fixed_multiplier_, fixed_shift_};

    MulParams p;
    ASSERT_TRUE(make_broadcast_shape(lhs_shape_.data(), int(lhs_shape_.size()), rhs_shape_.data(),
                                     int(rhs_shape_.size()), &p.shape).ok());
    p.lhs_offset = -zp_a_;
    p.rhs_offset = -zp_b_;
    p.output_offset = zp_out_;
    p.output_multiplier = m.multiplier;
    p.output_shift = m.shift;
    p.activation_min = act_min_;
    p.activation_max = act_max_;
    ASSERT_TRUE(quantized_mul_prepare(p).ok());

    const size_t n = count(out_shape);
    std::vector<int8_t> expected(n), fast(n), ref(n);
    for (size_t e = 0; e < n; ++e) {
      const int32_t x = a[source_index(e, out_shape, lhs_shape_)] - zp_a_;
      const int32_t y = b[source_index(e, out_shape, rhs_shape_)] - zp_b_;
      // The target's 32-bit add wraps (ADD, VADD).
      int32_t o = wrapping_add(requantize(x * y, m.multiplier, m.shift), zp_out_);
      expected[e] = static_cast<int8_t>(o < act_min_ ? act_min_ : (o > act_max_ ? act_max_ : o));
    }
    quantized_mul(p, a.data(), b.data(), fast.data());
    quantized_mul_reference(p, a.data(), b.data(), ref.data());
    ASSERT_EQ(ref, expected);
    ASSERT_EQ(fast, expected);

    if (fixed_requantize_) return;
    // Within 1 LSB of float math for nearly all elements.
    size_t far = 0;
    for (size_t e = 0; e < n; ++e) {
      const double real = sa_ * (a[source_index(e, out_shape, lhs_shape_)] - zp_a_) * sb_ *
                          (b[source_index(e, out_shape, rhs_shape_)] - zp_b_);
      double q = real / so_ + zp_out_;
      q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
      if (std::abs(q - expected[e]) > 1.0) ++far;
    }
    EXPECT_LE(far, n / 100);
  }

 private:
  static size_t count(const std::vector<int64_t>& s) {
    size_t n = 1;
    for (auto d : s) n *= size_t(d);
    return n;
  }
  static std::vector<int64_t> broadcast(const std::vector<int64_t>& a,
                                        const std::vector<int64_t>& b) {
    const size_t r = a.size() > b.size() ? a.size() : b.size();
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
      const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
      out[i] = x > y ? x : y;
    }
    return out;
  }
  // Flat index into an operand of shape `in` for flat output index e (numpy broadcasting).
  static size_t source_index(size_t e, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& in) {
    std::vector<size_t> coord(out.size());
    for (size_t d = out.size(); d-- > 0;) {
      coord[d] = e % size_t(out[d]);
      e /= size_t(out[d]);
    }
    size_t index = 0;
    const size_t lead = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d)
      index = index * size_t(in[d]) + (in[d] == 1 ? 0 : coord[lead + d]);
    return index;
  }

  std::vector<int64_t> lhs_shape_{2, 5, 7, 13};
  std::vector<int64_t> rhs_shape_{2, 5, 7, 13};
  int32_t zp_a_ = 17, zp_b_ = -9, zp_out_ = 3;
  double sa_ = 0.031, sb_ = 0.047, so_ = 0.19;
  int32_t act_min_ = -128, act_max_ = 127;
  bool fixed_requantize_ = false;
  int32_t fixed_multiplier_ = 0, fixed_shift_ = 0;
  uint32_t seed_ = 1;
};

TEST(QuantizedMul, SameShape) { MulTester().Test(); }
TEST(QuantizedMul, OddLength) { MulTester().lhs_shape({1001}).rhs_shape({1001}).Test(); }
TEST(QuantizedMul, BroadcastChannel) { MulTester().rhs_shape({13}).seed(2).Test(); }
TEST(QuantizedMul, BroadcastSqueezeExcite) {
  MulTester().lhs_shape({2, 5, 7, 13}).rhs_shape({2, 1, 1, 13}).seed(3).Test();
}
TEST(QuantizedMul, BroadcastLhsRow) {
  MulTester().lhs_shape({2, 1, 13}).rhs_shape({2, 9, 13}).seed(4).Test();
}
TEST(QuantizedMul, BroadcastBothWays) {
  MulTester().lhs_shape({3, 1, 5}).rhs_shape({1, 4, 1}).seed(5).Test();
}
TEST(QuantizedMul, ScalarOperand) {
  MulTester().lhs_shape({}).rhs_shape({3, 3}).seed(6).Test();
  MulTester().lhs_shape({7, 11}).rhs_shape({1}).seed(7).Test();
}
TEST(QuantizedMul, ExtremeZeroPoints) {
  MulTester().zero_points(-128, 127, -128).scales(0.02, 0.03, 2.0).seed(8).Test();
  MulTester().zero_points(127, -128, 127).scales(0.02, 0.03, 2.0).seed(9).Test();
}
TEST(QuantizedMul, FusedActivationRange) { MulTester().activation(-10, 20).seed(10).Test(); }
TEST(QuantizedMul, ExtremeRequantization) {
  MulTester().requantize_with(INT32_MAX, 30).seed(11).Test();  // left shift wraps, as on target
  MulTester().requantize_with(INT32_MAX, -31).seed(12).Test();
  MulTester().requantize_with(1, 30).seed(13).Test();
  MulTester().requantize_with(0, 0).seed(14).Test();
  MulTester().zero_points(-128, -128, 0).requantize_with(1 << 30, 16).seed(15).Test();
  // Products of 2 mod 4 requantize to -(2^31 - 1); + output_offset -128 wraps to a large positive.
  MulTester().zero_points(0, 0, -128).requantize_with(INT32_MAX, 30).seed(16).Test();
}

TEST(QuantizedMul, RandomizedAwkwardCases) {
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
    const int32_t lo = rng.uniform(-128, 100);
    const double sa = rng.uniform(1, 1000) / 1e4, sb = rng.uniform(1, 1000) / 1e4;
    MulTester()
        .lhs_shape(a).rhs_shape(b).seed(uint32_t(i))
        .zero_points(rng.uniform(-128, 127), rng.uniform(-128, 127), rng.uniform(-128, 127))
        .scales(sa, sb, sa * sb * rng.uniform(100, 20000) / 100.0)
        .activation(lo, rng.uniform(lo, 127))
        .Test();
  }
}

TEST(QuantizedMul, PrepareRejectsBadParams) {
  MulParams p;
  p.output_multiplier = 1 << 30;
  EXPECT_TRUE(quantized_mul_prepare(p).ok());
  auto expect_rejects = [](const MulParams& bad, const char* argument, int64_t value) {
    const Error e = quantized_mul_prepare(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
  };
  MulParams bad = p;
  bad.lhs_offset = 129;  // self zero point -129
  expect_rejects(bad, "self_zero_point", -129);
  bad = p;
  bad.rhs_offset = -128;  // other zero point 128
  expect_rejects(bad, "other_zero_point", 128);
  bad.rhs_offset = INT32_MIN;  // the zero point it names, 2^31, does not fit an int32
  expect_rejects(bad, "other_zero_point", int64_t{1} << 31);
  bad = p;
  bad.lhs_offset = INT32_MIN;
  expect_rejects(bad, "self_zero_point", int64_t{1} << 31);
  bad = p;
  bad.output_offset = 128;
  expect_rejects(bad, "output_zero_point", 128);
  bad = p;
  bad.output_multiplier = -5;
  expect_rejects(bad, "output_multiplier", -5);
  bad = p;
  bad.output_shift = 31;
  expect_rejects(bad, "output_shift", 31);
  bad = p;
  bad.output_shift = -32;
  expect_rejects(bad, "output_shift", -32);
  bad = p;
  bad.activation_min = -129;
  expect_rejects(bad, "activation_min", -129);
  bad = p;
  bad.activation_max = 200;
  expect_rejects(bad, "activation_max", 200);
  bad = p;
  bad.activation_min = 3;
  bad.activation_max = 2;
  expect_rejects(bad, "activation_min", 3);
}

}  // namespace
}  // namespace cortexm
