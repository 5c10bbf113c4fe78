#include "cortexm/kernels/quantized_layer_norm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

struct Case {
  int32_t rows = 3, n = 16;
  int64_t eps_term = 0;
  int32_t product_shift = 0;
  double real_multiplier = 1.0 / 64;  // the requantize's s_acc / s_out
  int32_t zp = 0, lo = -128, hi = 127;
  bool weight = true, bias = true, constant_rows = false;
};

// The kernel and its reference agree; both are within one LSB of the real-valued layer norm
// (long double: d / sqrt(W) exactly, then weight, bias and the real multiplier) on every element.
void check(const Case& c, uint32_t seed) {
  testing::RandomData rng(seed);
  auto x = rng.int8s(size_t(c.rows) * c.n);
  if (c.constant_rows)
    for (int32_t r = 0; r < c.rows; ++r) std::fill_n(x.begin() + size_t(r) * c.n, c.n, x[size_t(r) * c.n]);
  std::vector<int16_t> w(size_t(c.n));
  for (auto& v : w) v = static_cast<int16_t>(rng.uniform(-32767, 32767));
  const auto b = rng.int32s(size_t(c.n), -(1 << 18), 1 << 18);
  const QuantizedMultiplier m = quantize_multiplier(c.real_multiplier);
  LayerNormParams p;
  p.rows = c.rows;
  p.row_size = c.n;
  p.eps_term = c.eps_term;
  p.product_shift = c.product_shift;
  p.output_offset = c.zp;
  p.multiplier = m.multiplier;
  p.shift = m.shift;
  p.activation_min = c.lo;
  p.activation_max = c.hi;
  ASSERT_TRUE(quantized_layer_norm_prepare(p).ok());
  const size_t total = size_t(c.rows) * c.n;
  std::vector<int8_t> fast(total), ref(total);
  const int16_t* wp = c.weight ? w.data() : nullptr;
  const int32_t* bp = c.bias ? b.data() : nullptr;
  quantized_layer_norm(p, x.data(), wp, bp, fast.data());
  quantized_layer_norm_reference(p, x.data(), wp, bp, ref.data());
  ASSERT_EQ(fast, ref);
  const long double real_m = static_cast<long double>(m.multiplier) * std::pow(2.0L, m.shift - 31);
  for (int32_t r = 0; r < c.rows; ++r) {
    const int8_t* q = x.data() + size_t(r) * c.n;
    long double mean = 0, var = 0;
    for (int32_t j = 0; j < c.n; ++j) mean += q[j];
    mean /= c.n;
    for (int32_t j = 0; j < c.n; ++j) var += (q[j] - mean) * (q[j] - mean);
    var /= c.n;
    // W / n^2 = var + eps_term / n^2; 1 when both are 0 (then every x - mean is 0 too).
    long double denom = var + static_cast<long double>(c.eps_term) / (static_cast<long double>(c.n) * c.n);
    if (denom == 0) denom = 1.0L / (static_cast<long double>(c.n) * c.n);
    for (int32_t j = 0; j < c.n; ++j) {
      const long double z = (q[j] - mean) / std::sqrt(denom) * 4096.0L;
      const long double acc = z * (c.weight ? w[size_t(j)] : 1) / std::pow(2.0L, c.product_shift) +
                              (c.bias ? b[size_t(j)] : 0);
      long double real = acc * real_m + c.zp;
      real = std::min(std::max(real, static_cast<long double>(c.lo)), static_cast<long double>(c.hi));
      EXPECT_LE(std::fabs(real - fast[size_t(r) * c.n + j]), 1.0L)
          << "row " << r << " element " << j << " n " << c.n;
    }
  }
}

TEST(QuantizedLayerNorm, RowLengths) {
  for (int32_t n : {1, 2, 3, 7, 16, 31, 768, 1000}) {
    Case c;
    c.n = n;
    // z * w reaches sqrt(n) * 2^27: keep the accumulator within int32 and one z step below 1 LSB.
    c.product_shift = n >= 64 ? 8 : 4;
    c.real_multiplier = std::ldexp(1.0, c.product_shift - 21);
    check(c, 10 + n);
  }
}

TEST(QuantizedLayerNorm, ConstantRowsAndTheEpsTerm) {
  Case c;
  c.constant_rows = true;
  c.product_shift = 4;
  c.real_multiplier = std::ldexp(1.0, -17);
  check(c, 1);  // variance 0, no eps: W = 1, the output is the bias
  c.eps_term = 256 * 100;
  check(c, 2);
  c.constant_rows = false;
  for (int64_t eps : {int64_t{1}, int64_t{1} << 20, int64_t{1} << 40, kLayerNormMaxEpsTerm}) {
    c.eps_term = eps;
    check(c, 3);
  }
}

TEST(QuantizedLayerNorm, WithoutWeightOrBiasAndClamped) {
  Case c;
  c.weight = false;
  c.real_multiplier = std::ldexp(1.0, -7);  // z / 2^12 * 32: about 32 LSB per standard deviation
  c.zp = -5;
  check(c, 4);
  c.bias = false;
  c.lo = -20;
  c.hi = 90;
  c.zp = 127;
  check(c, 5);
  c.weight = true;
  c.product_shift = 31;
  c.real_multiplier = 0.9;
  check(c, 6);
}

TEST(QuantizedLayerNorm, LongestRow) {
  Case c;
  c.rows = 2;
  c.n = kLayerNormMaxRowSize;
  c.product_shift = 10;
  c.real_multiplier = std::ldexp(1.0, -15);
  check(c, 7);
}

TEST(QuantizedLayerNorm, PrepareRejectsBadParams) {
  const LayerNormParams good;
  ASSERT_TRUE(quantized_layer_norm_prepare(good).ok());
  auto rejects = [&](auto edit, const char* argument) {
    LayerNormParams p = good;
    edit(p);
    const Error e = quantized_layer_norm_prepare(p);
    ASSERT_FALSE(e.ok()) << argument;
    EXPECT_STREQ(e.argument, argument);
  };
  rejects([](LayerNormParams& p) { p.rows = 0; }, "rows");
  rejects([](LayerNormParams& p) { p.row_size = 0; }, "row_size");
  rejects([](LayerNormParams& p) { p.row_size = kLayerNormMaxRowSize + 1; }, "row_size");
  rejects([](LayerNormParams& p) { p.eps_term = -1; }, "eps_term");
  rejects([](LayerNormParams& p) { p.eps_term = kLayerNormMaxEpsTerm + 1; }, "eps_term");
  rejects([](LayerNormParams& p) { p.product_shift = -1; }, "product_shift");
  rejects([](LayerNormParams& p) { p.product_shift = 32; }, "product_shift");
  rejects([](LayerNormParams& p) { p.output_offset = 128; }, "output_offset");
  rejects([](LayerNormParams& p) { p.multiplier = -1; }, "output_multiplier");
  rejects([](LayerNormParams& p) { p.shift = 31; }, "output_shift");
  rejects([](LayerNormParams& p) { p.activation_min = 10, p.activation_max = 9; }, "activation_min");
}

}  // namespace
}  // namespace cortexm
