#include "cortexm/kernels/quantized_add.h"

#include <gtest/gtest.h>

#include <vector>

#include "cortexm/kernels/requantize.h"
#include "gemmlowp_reference.h"
#include "random_data.h"

namespace cortexm {
namespace {

// Builder with awkward defaults: broadcast shapes, nonzero zero points, unequal scales. subtract()
// tests quantized_sub, its expected values from gemmlowp's functions as TFLite's SUB calls them.
class AddTester {
 public:
  AddTester& subtract() { subtract_ = true; return *this; }
  AddTester& lhs_shape(std::vector<int64_t> s) { lhs_shape_ = std::move(s); return *this; }
  AddTester& rhs_shape(std::vector<int64_t> s) { rhs_shape_ = std::move(s); return *this; }
  AddTester& zero_points(int32_t a, int32_t b, int32_t out) { zp_a_ = a; zp_b_ = b; zp_out_ = out; return *this; }
  AddTester& scales(double a, double b, double out) { sa_ = a; sb_ = b; so_ = out; return *this; }
  AddTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  AddTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    std::vector<int64_t> out_shape = broadcast(lhs_shape_, rhs_shape_);
    const auto a = rng.int8s(count(lhs_shape_));
    const auto b = rng.int8s(count(rhs_shape_));

    // TFLite's parameter derivation for add.
    const double twice_max = 2.0 * (sa_ > sb_ ? sa_ : sb_);
    const auto ma = quantize_multiplier(sa_ / twice_max);
    const auto mb = quantize_multiplier(sb_ / twice_max);
    const auto mo = quantize_multiplier(twice_max / ((1 << kAddLeftShift) * so_));

    RescaledBinaryParams p;
    ASSERT_TRUE(make_broadcast_shape(lhs_shape_.data(), int(lhs_shape_.size()), rhs_shape_.data(),
                                     int(rhs_shape_.size()), &p.shape).ok());
    p.lhs_offset = -zp_a_; p.lhs_multiplier = ma.multiplier; p.lhs_shift = ma.shift;
    p.rhs_offset = -zp_b_; p.rhs_multiplier = mb.multiplier; p.rhs_shift = mb.shift;
    p.output_offset = zp_out_; p.output_multiplier = mo.multiplier; p.output_shift = mo.shift;
    p.activation_min = act_min_; p.activation_max = act_max_;
    const AddParams add{p};
    const SubParams sub{p};
    ASSERT_TRUE(subtract_ ? quantized_sub_prepare(sub).ok() : quantized_add_prepare(add).ok());

    const size_t n = count(out_shape);
    std::vector<int8_t> expected(n), fast(n), ref(n);
    // Plain loops over the broadcast output index.
    for (size_t e = 0; e < n; ++e) {
      const int32_t x = a[source_index(e, out_shape, lhs_shape_)] - zp_a_;
      const int32_t y = b[source_index(e, out_shape, rhs_shape_)] - zp_b_;
      int32_t o;
#if !(defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING)
      const bool gemmlowp = subtract_;
#else
      const bool gemmlowp = false;  // single rounding: requantize is the definition
#endif
      if (gemmlowp) {  // MultiplyByQuantizedMultiplierSmallerThanOneExp: every shift here is <= 0
        using testing::gemmlowp_ref::rounding_divide;
        using testing::gemmlowp_ref::srdhm;
        const int32_t xs = rounding_divide(srdhm(x * (1 << 20), ma.multiplier), -ma.shift);
        const int32_t ys = rounding_divide(srdhm(y * (1 << 20), mb.multiplier), -mb.shift);
        o = wrapping_add(rounding_divide(srdhm(xs - ys, mo.multiplier), -mo.shift), zp_out_);
      } else {
        const int32_t xs = requantize(x * (1 << 20), ma.multiplier, ma.shift);
        const int32_t ys = requantize(y * (1 << 20), mb.multiplier, mb.shift);
        const int32_t combined = subtract_ ? xs - ys : xs + ys;
        o = wrapping_add(requantize(combined, mo.multiplier, mo.shift), zp_out_);
      }
      expected[e] = static_cast<int8_t>(o < act_min_ ? act_min_ : (o > act_max_ ? act_max_ : o));
    }
    if (subtract_) {
      quantized_sub(sub, a.data(), b.data(), fast.data());
      quantized_sub_reference(sub, a.data(), b.data(), ref.data());
    } else {
      quantized_add(add, a.data(), b.data(), fast.data());
      quantized_add_reference(add, a.data(), b.data(), ref.data());
    }
    ASSERT_EQ(ref, expected);
    ASSERT_EQ(fast, expected);

    // Within 1 LSB of float math for nearly all elements.
    size_t far = 0;
    for (size_t e = 0; e < n; ++e) {
      const double real = sa_ * (a[source_index(e, out_shape, lhs_shape_)] - zp_a_) +
                          (subtract_ ? -sb_ : sb_) * (b[source_index(e, out_shape, rhs_shape_)] - zp_b_);
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
  static std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    const size_t r = a.size() > b.size() ? a.size() : b.size();
    std::vector<int64_t> out(r);
    for (size_t i = 0; i < r; ++i) {
      const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
      const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
      out[i] = x > y ? x : y;
    }
    return out;
  }
  static size_t source_index(size_t e, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
    size_t index = 0, stride = 1;
    for (size_t k = 0; k < in.size(); ++k) {
      const size_t d = in.size() - 1 - k, od = out.size() - 1 - k;
      size_t rem = e;
      for (size_t j = out.size() - 1; j > od; --j) rem /= size_t(out[j]);
      const size_t coord = rem % size_t(out[od]);
      index += (in[d] == 1 ? 0 : coord) * stride;
      stride *= size_t(in[d]);
    }
    return index;
  }

  std::vector<int64_t> lhs_shape_{2, 5, 7, 13};
  std::vector<int64_t> rhs_shape_{2, 5, 7, 13};
  int32_t zp_a_ = 17, zp_b_ = -9, zp_out_ = 3;
  double sa_ = 0.031, sb_ = 0.047, so_ = 0.061;
  int32_t act_min_ = -128, act_max_ = 127;
  uint32_t seed_ = 1;
  bool subtract_ = false;
};

TEST(QuantizedAdd, SameShape) { AddTester().Test(); }
TEST(QuantizedAdd, OddLength) { AddTester().lhs_shape({1001}).rhs_shape({1001}).Test(); }
TEST(QuantizedAdd, BroadcastChannel) { AddTester().rhs_shape({13}).seed(2).Test(); }
TEST(QuantizedAdd, BroadcastSqueezeExcite) {
  AddTester().lhs_shape({2, 5, 7, 13}).rhs_shape({2, 1, 1, 13}).seed(3).Test();
}
TEST(QuantizedAdd, BroadcastBothWays) { AddTester().lhs_shape({3, 1, 5}).rhs_shape({1, 4, 1}).Test(); }
TEST(QuantizedAdd, ScalarOperand) { AddTester().lhs_shape({}).rhs_shape({3, 3}).Test(); }
TEST(QuantizedAdd, ExtremeZeroPoints) { AddTester().zero_points(-128, 127, -128).seed(4).Test(); }
TEST(QuantizedAdd, FusedRelu6Range) {
  AddTester().zero_points(-5, 11, -128).activation(-128, -30).seed(5).Test();
}
TEST(QuantizedAdd, VeryDifferentScales) { AddTester().scales(0.9, 0.0007, 0.45).seed(6).Test(); }

TEST(QuantizedSub, SameShape) { AddTester().subtract().Test(); }
TEST(QuantizedSub, OddLength) { AddTester().subtract().lhs_shape({1001}).rhs_shape({1001}).Test(); }
TEST(QuantizedSub, BroadcastBothWays) {
  AddTester().subtract().lhs_shape({3, 1, 5}).rhs_shape({1, 4, 1}).Test();
}
TEST(QuantizedSub, OneMinusX) {  // a scalar constant minus a tensor
  AddTester().subtract().lhs_shape({}).rhs_shape({2, 9}).zero_points(-128, 5, 127).Test();
}
TEST(QuantizedSub, ExtremeZeroPoints) { AddTester().subtract().zero_points(127, -128, 127).seed(4).Test(); }
TEST(QuantizedSub, VeryDifferentScales) { AddTester().subtract().scales(0.0007, 0.9, 0.45).seed(6).Test(); }

// Random awkward cases for add (subtract = false) and sub.
void run_randomized_awkward_cases(bool subtract) {
  testing::RandomData rng(subtract ? 98 : 99);
  for (int i = 0; i < 200; ++i) {
    std::vector<int64_t> a, b;
    const int rank = rng.uniform(1, 5);
    for (int d = 0; d < rank; ++d) {
      const int64_t ext = rng.uniform(1, 6);
      a.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
      b.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
    }
    if (rng.uniform(0, 2) == 0) b.erase(b.begin());
    const int32_t lo = rng.uniform(-128, 100);
    AddTester tester;
    if (subtract) tester.subtract();
    tester
        .lhs_shape(a).rhs_shape(b).seed(uint32_t(i))
        .zero_points(rng.uniform(-128, 127), rng.uniform(-128, 127), rng.uniform(-128, 127))
        .scales(rng.uniform(1, 1000) / 1e4, rng.uniform(1, 1000) / 1e4, rng.uniform(1, 1000) / 1e4)
        .activation(lo, rng.uniform(lo, 127))
        .Test();
  }
}

TEST(QuantizedAdd, RandomizedAwkwardCases) { run_randomized_awkward_cases(false); }
TEST(QuantizedSub, RandomizedAwkwardCases) { run_randomized_awkward_cases(true); }

TEST(QuantizedAdd, PrepareRejectsBadParams) {
  AddParams p;
  p.lhs_multiplier = p.rhs_multiplier = p.output_multiplier = 1 << 30;
  EXPECT_TRUE(quantized_add_prepare(p).ok());
  p.output_shift = 31;
  Error e = quantized_add_prepare(p);
  EXPECT_STREQ(e.argument, "output_shift");
  EXPECT_EQ(e.value, 31);
  p.output_shift = 0;
  p.activation_min = 10;
  p.activation_max = 5;
  EXPECT_STREQ(quantized_add_prepare(p).argument, "activation_min");
  p.activation_min = -128;
  p.activation_max = 127;
  p.lhs_offset = INT32_MIN;  // the zero point it names, 2^31, does not fit an int32
  e = quantized_add_prepare(p);
  EXPECT_STREQ(e.argument, "self_zero_point");
  EXPECT_EQ(e.value, int64_t{1} << 31);
  p.lhs_offset = 0;
  p.rhs_offset = INT32_MIN;
  e = quantized_sub_prepare(SubParams{p});
  EXPECT_STREQ(e.argument, "other_zero_point");
  EXPECT_EQ(e.value, int64_t{1} << 31);
}

TEST(Broadcast, RejectsIncompatibleShapes) {
  BroadcastShape s;
  const int64_t a[] = {2, 3}, b[] = {4};
  EXPECT_FALSE(make_broadcast_shape(a, 2, b, 1, &s).ok());
}

TEST(Broadcast, CollapsesContiguousDims) {
  BroadcastShape s;
  const int64_t a[] = {2, 3, 4, 5}, b[] = {2, 3, 4, 5};
  ASSERT_TRUE(make_broadcast_shape(a, 4, b, 4, &s).ok());
  EXPECT_EQ(s.rank, 1);
  EXPECT_EQ(s.dims[0], 120);
  const int64_t c[] = {2, 1, 1, 5};
  ASSERT_TRUE(make_broadcast_shape(a, 4, c, 4, &s).ok());
  EXPECT_EQ(s.rank, 3);  // (2), (3*4), (5)
}

}  // namespace
}  // namespace cortexm
