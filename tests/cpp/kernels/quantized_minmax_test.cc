// quantized_maximum / quantized_minimum against the test's own loops, with broadcasting and
// unequal qparams.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

struct Case {
  std::vector<int64_t> a_shape, b_shape;
  int32_t zp_a, zp_b, zp_out;
  double sa, sb, so;
  int32_t lo = -128, hi = 127;
};

std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    out[i] = std::max(x, y);
  }
  return out;
}

size_t count(const std::vector<int64_t>& s) {
  size_t n = 1;
  for (auto d : s) n *= size_t(d);
  return n;
}

size_t source(size_t e, const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
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

template <bool kMax>
void check(const Case& c, uint32_t seed) {
  testing::RandomData rng(seed);
  const auto out_shape = broadcast(c.a_shape, c.b_shape);
  const auto a = rng.int8s(count(c.a_shape));
  const auto b = rng.int8s(count(c.b_shape));
  const double twice_max = 2.0 * std::max(c.sa, c.sb);
  const QuantizedMultiplier ma = quantize_multiplier(c.sa / twice_max);
  const QuantizedMultiplier mb = quantize_multiplier(c.sb / twice_max);
  const QuantizedMultiplier mo = quantize_multiplier(twice_max / ((1 << 20) * c.so));
  MinMaxParams p;
  ASSERT_TRUE(make_broadcast_shape(c.a_shape.data(), int(c.a_shape.size()), c.b_shape.data(),
                                   int(c.b_shape.size()), &p.shape).ok());
  p.lhs_offset = -c.zp_a;
  p.lhs_multiplier = ma.multiplier;
  p.lhs_shift = ma.shift;
  p.rhs_offset = -c.zp_b;
  p.rhs_multiplier = mb.multiplier;
  p.rhs_shift = mb.shift;
  p.output_offset = c.zp_out;
  p.output_multiplier = mo.multiplier;
  p.output_shift = mo.shift;
  p.activation_min = c.lo;
  p.activation_max = c.hi;
  ASSERT_TRUE(minmax_prepare(p).ok());
  const size_t n = count(out_shape);
  std::vector<int8_t> want(n), fast(n), ref(n);
  size_t far = 0;
  for (size_t e = 0; e < n; ++e) {
    const int32_t x = a[source(e, out_shape, c.a_shape)], y = b[source(e, out_shape, c.b_shape)];
    const int32_t xs = requantize((x - c.zp_a) * (1 << 20), ma.multiplier, ma.shift);
    const int32_t ys = requantize((y - c.zp_b) * (1 << 20), mb.multiplier, mb.shift);
    const int32_t pick = kMax ? std::max(xs, ys) : std::min(xs, ys);
    const int32_t o = requantize(pick, mo.multiplier, mo.shift) + c.zp_out;
    want[e] = static_cast<int8_t>(std::min(std::max(o, c.lo), c.hi));
    // Against float: the real max / min quantized to the output.
    const double rx = c.sa * (x - c.zp_a), ry = c.sb * (y - c.zp_b);
    double q = (kMax ? std::max(rx, ry) : std::min(rx, ry)) / c.so + c.zp_out;
    q = std::min(std::max(q, double(c.lo)), double(c.hi));
    if (std::abs(q - want[e]) > 0.5 + 1e-3) ++far;
  }
  if (kMax) {
    quantized_maximum(p, a.data(), b.data(), fast.data());
    quantized_maximum_reference(p, a.data(), b.data(), ref.data());
  } else {
    quantized_minimum(p, a.data(), b.data(), fast.data());
    quantized_minimum_reference(p, a.data(), b.data(), ref.data());
  }
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
  EXPECT_LE(far, n / 50 + 1);
}

TEST(QuantizedMinMax, EqualQparamsIsRawMaxAndMin) {
  testing::RandomData rng(1);
  const std::vector<int64_t> shape = {3, 5, 17};
  const auto a = rng.int8s(255), b = rng.int8s(255);
  const double s = 0.05;
  const double twice_max = 2 * s;
  const QuantizedMultiplier mi = quantize_multiplier(s / twice_max);
  const QuantizedMultiplier mo = quantize_multiplier(twice_max / ((1 << 20) * s));
  MinMaxParams p;
  ASSERT_TRUE(make_broadcast_shape(shape.data(), 3, shape.data(), 3, &p.shape).ok());
  p.lhs_offset = p.rhs_offset = 9;
  p.output_offset = -9;
  p.lhs_multiplier = p.rhs_multiplier = mi.multiplier;
  p.lhs_shift = p.rhs_shift = mi.shift;
  p.output_multiplier = mo.multiplier;
  p.output_shift = mo.shift;
  std::vector<int8_t> hi(255), lo(255);
  quantized_maximum(p, a.data(), b.data(), hi.data());
  quantized_minimum(p, a.data(), b.data(), lo.data());
  for (size_t i = 0; i < 255; ++i) {
    EXPECT_EQ(hi[i], std::max(a[i], b[i]));
    EXPECT_EQ(lo[i], std::min(a[i], b[i]));
  }
}

TEST(QuantizedMinMax, Shapes) {
  check<true>({{2, 5, 7, 13}, {2, 5, 7, 13}, 17, -9, 3, 0.031, 0.047, 0.05}, 1);
  check<false>({{2, 5, 7, 13}, {13}, 17, -9, 3, 0.031, 0.047, 0.05}, 2);
  check<true>({{3, 1, 5}, {1, 4, 1}, -128, 127, 0, 0.2, 0.01, 0.1}, 3);
  check<false>({{}, {3, 3}, 0, 0, 0, 0.1, 0.1, 0.1, -10, 20}, 4);
}

TEST(QuantizedMinMax, RandomizedAwkwardCases) {
  testing::RandomData rng(77);
  for (int i = 0; i < 200; ++i) {
    Case c;
    const int rank = rng.uniform(1, 5);
    for (int d = 0; d < rank; ++d) {
      const int64_t ext = rng.uniform(1, 7);
      c.a_shape.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
      c.b_shape.push_back(rng.uniform(0, 3) == 0 ? 1 : ext);
    }
    if (rng.uniform(0, 2) == 0) c.b_shape.erase(c.b_shape.begin());
    c.zp_a = rng.uniform(-128, 127);
    c.zp_b = rng.uniform(-128, 127);
    c.zp_out = rng.uniform(-128, 127);
    c.sa = rng.uniform(1, 1000) / 1e4;
    c.sb = rng.uniform(1, 1000) / 1e4;
    c.so = std::max(c.sa, c.sb) * rng.uniform(30, 300) / 100.0;
    c.lo = rng.uniform(-128, 100);
    c.hi = rng.uniform(c.lo, 127);
    if (i % 2) check<true>(c, uint32_t(i));
    else check<false>(c, uint32_t(i));
  }
}

TEST(QuantizedMinMax, PrepareRejectsBadParams) {
  MinMaxParams p;
  MinMaxParams bad = p;
  bad.lhs_offset = 129;
  Error e = quantized_maximum_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "self_zero_point");
  bad.lhs_offset = INT32_MIN;  // the zero point it names, 2^31, does not fit an int32
  e = quantized_minimum_prepare(bad);
  EXPECT_STREQ(e.argument, "self_zero_point");
  EXPECT_EQ(e.value, int64_t{1} << 31);
  bad = p;
  bad.rhs_shift = -32;
  e = quantized_minimum_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "other_shift");
  bad = p;
  bad.activation_min = 3;
  bad.activation_max = 2;
  e = quantized_minimum_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "activation_min");
}

}  // namespace
}  // namespace cortexm
