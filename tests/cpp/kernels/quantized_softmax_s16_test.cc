#include "cortexm/kernels/quantized_softmax_s16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

// TFLite's gen_lut (double): 513 Q15 entries of f over [lo, hi], midpoint-corrected.
template <class F>
std::vector<int16_t> gen_lut(F f, double lo, double hi) {
  std::vector<int16_t> t(kSoftmaxS16TableSize);
  const double step = (hi - lo) / 512;
  auto sat = [](double v) { return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v)); };
  for (int i = 0; i < 512; ++i) {
    const double sample = std::round(f(lo + i * step) * 32768.0);
    const double interp = std::round((f(lo + (i + 1) * step) * 32768.0 + sample) / 2.0);
    const double mid = std::round(f(lo + i * step + step / 2) * 32768.0);
    t[i] = sat(sample - std::round((interp - mid) / 2.0));
  }
  t[512] = sat(std::round(f(hi) * 32768.0));
  return t;
}

const std::vector<int16_t>& exp_lut() {
  static const std::vector<int16_t> t = gen_lut([](double v) { return std::exp(v); }, -10.0, 0.0);
  return t;
}
const std::vector<int16_t>& reciprocal_lut() {
  static const std::vector<int16_t> t = gen_lut([](double v) { return 1.0 / (1.0 + v); }, 0.0, 1.0);
  return t;
}

// TFLite's SoftmaxInt16 as its reference spells it: generic_int16_table_lookup with an int16
// slope (the tables here are smooth, so it never wraps), CountLeadingZeros, int64 rounding.
int32_t table_lookup(const std::vector<int16_t>& table, int16_t x) {
  const uint16_t index = static_cast<uint16_t>(256 + (x >> 7));
  const int16_t offset = x & 0x7f;
  const int16_t base = table[index];
  const int16_t slope = static_cast<int16_t>(table[index + 1] - table[index]);
  return base + ((slope * offset + 64) >> 7);
}

std::vector<int16_t> tflite_softmax_int16(const std::vector<int16_t>& x, int32_t rows, int32_t depth,
                                          int32_t mult, int32_t shift,
                                          const std::vector<int16_t>& exp_table,
                                          const std::vector<int16_t>& reciprocal_table) {
  std::vector<int16_t> out(x.size());
  std::vector<int32_t> exps(static_cast<size_t>(depth));
  for (int32_t i = 0; i < rows; ++i) {
    int16_t max_in_row = INT16_MIN;
    for (int32_t c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[size_t(i) * depth + c]);
    int32_t sum_of_exps = 0;
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = x[size_t(i) * depth + c] - max_in_row;
      const int32_t scaled_diff = requantize(diff, mult, shift);
      const int32_t sym = scaled_diff + 32767;
      const int16_t sat = static_cast<int16_t>(std::min<int32_t>(std::max<int32_t>(sym, -32768), 32767));
      exps[size_t(c)] = table_lookup(exp_table, sat);
      sum_of_exps += exps[size_t(c)];
    }
    const int headroom_plus_one = __builtin_clz(static_cast<uint32_t>(sum_of_exps));
    const int32_t shifted_sum =
        static_cast<int32_t>(((static_cast<int64_t>(sum_of_exps) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t sym_sum = shifted_sum + (-((1 << 15) + (1 << 16)));
    const int16_t sat_sum = static_cast<int16_t>(std::min<int32_t>(std::max<int32_t>(sym_sum, -32768), 32767));
    const int32_t reciprocal = table_lookup(reciprocal_table, sat_sum);
    const int right_shift = 31 - headroom_plus_one;
    for (int32_t c = 0; c < depth; ++c) {
      const int64_t round = right_shift > 0 ? int64_t{1} << (right_shift - 1) : 0;
      const int32_t result = static_cast<int32_t>((int64_t{exps[size_t(c)]} * reciprocal + round) >> right_shift);
      out[size_t(i) * depth + c] = static_cast<int16_t>(std::min<int32_t>(std::max<int32_t>(result, 0), 32767));
    }
  }
  return out;
}

SoftmaxS16Params params_for(double input_scale, int32_t rows, int32_t row_size) {
  SoftmaxS16Params p;
  p.rows = rows;
  p.row_size = row_size;
  const QuantizedMultiplier m = quantize_multiplier(input_scale / (10.0 / 65535.0));
  p.input_multiplier = m.multiplier;
  p.input_shift = m.shift;
  p.exp_table = exp_lut().data();
  p.reciprocal_table = reciprocal_lut().data();
  return p;
}

// kernel == reference == TFLite's arithmetic; in place too; and within `tolerance` of the real
// softmax of the dequantized inputs.
void check(const SoftmaxS16Params& p, const std::vector<int16_t>& x, double input_scale, double tolerance) {
  ASSERT_TRUE(quantized_softmax_s16_prepare(p).ok());
  const std::vector<int16_t> want = tflite_softmax_int16(
      x, p.rows, p.row_size, p.input_multiplier, p.input_shift, exp_lut(), reciprocal_lut());
  std::vector<int16_t> fast(x.size()), ref(x.size()), in_place = x;
  quantized_softmax_s16(p, x.data(), fast.data());
  quantized_softmax_s16_reference(p, x.data(), ref.data());
  quantized_softmax_s16(p, in_place.data(), in_place.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
  ASSERT_EQ(in_place, want);
  for (int32_t r = 0; r < p.rows; ++r) {
    double max = -1e300, sum = 0;
    for (int32_t c = 0; c < p.row_size; ++c) max = std::max(max, x[size_t(r) * p.row_size + c] * input_scale);
    for (int32_t c = 0; c < p.row_size; ++c) sum += std::exp(x[size_t(r) * p.row_size + c] * input_scale - max);
    for (int32_t c = 0; c < p.row_size; ++c) {
      const double real = std::exp(x[size_t(r) * p.row_size + c] * input_scale - max) / sum;
      ASSERT_NEAR(want[size_t(r) * p.row_size + c] / 32768.0, real, tolerance) << "row " << r << " col " << c;
    }
  }
}

TEST(QuantizedSoftmaxS16, AwkwardRowSizesAndScales) {
  testing::RandomData rng(5);
  for (int32_t row_size : {1, 2, 3, 7, 10, 33, 100, 257}) {
    for (double scale : {1.0 / 32768, 2.5e-4, 6.1e-4, 0.003, 0.02, 0.3}) {
      const int32_t rows = rng.uniform(1, 5);
      std::vector<int16_t> x(size_t(rows) * row_size);
      const int32_t span = rng.uniform(1, 32767);
      for (int16_t& v : x) v = static_cast<int16_t>(rng.uniform(-span - 1, span));
      // Diffs of -10 and below all read exp_table[0] (2 / 32768): the error grows with the row.
      check(params_for(scale, rows, row_size), x, scale, 2e-3 + row_size * (exp_lut()[0] + 0.1) / 32768);
    }
  }
}

TEST(QuantizedSoftmaxS16, ExtremeInputsAndEqualRows) {
  const double scale = 0.004;
  std::vector<int16_t> x = {-32768, 32767, 32767, -32768, 0, 0, 0, 0, 5, -5, 1000, -1000};
  check(params_for(scale, 3, 4), x, scale, 2e-3);
  std::vector<int16_t> equal(65536, 1234);  // the largest row: a sum just below 2^31
  check(params_for(scale, 1, 65536), equal, scale, 1e-4);
}

// Exps summing to 2^18 - 1: the recentred sum is 32768, which TFLite saturates to 32767 (1/2 of
// the sum's top bit) where CMSIS-NN's int16 wraps it to -32768 (1 / 1: the output doubled).
TEST(QuantizedSoftmaxS16, TheRecentredSumSaturatesAsTFLite) {
  std::vector<int16_t> flat_exp = exp_lut();
  flat_exp[511] = flat_exp[512] = 29127;  // 9 * 29127 = 262143
  SoftmaxS16Params p = params_for(0.001, 1, 9);
  p.exp_table = flat_exp.data();
  const std::vector<int16_t> x(9, 77);
  std::vector<int16_t> fast(9), ref(9);
  ASSERT_TRUE(quantized_softmax_s16_prepare(p).ok());
  quantized_softmax_s16(p, x.data(), fast.data());
  quantized_softmax_s16_reference(p, x.data(), ref.data());
  const int32_t reciprocal = table_lookup(reciprocal_lut(), 32767);
  const int16_t want = static_cast<int16_t>((int64_t{29127} * reciprocal + (1 << 16)) >> 17);
  EXPECT_NEAR(want, 32768 / 9, 2);
  EXPECT_EQ(fast, std::vector<int16_t>(9, want));
  EXPECT_EQ(ref, fast);
  EXPECT_EQ(fast, tflite_softmax_int16(x, 1, 9, p.input_multiplier, p.input_shift, flat_exp, reciprocal_lut()));
}

TEST(QuantizedSoftmaxS16, PrepareRejectsBadParams) {
  const SoftmaxS16Params good = params_for(0.01, 2, 5);
  EXPECT_TRUE(quantized_softmax_s16_prepare(good).ok());
  SoftmaxS16Params p = good;
  p.row_size = 0;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "row_size");
  p = good;
  p.row_size = 65537;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "row_size");
  p = good;
  p.input_shift = 16;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "input_shift");
  p = good;
  p.input_multiplier = -1;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "input_multiplier");
  p = good;
  p.exp_table = nullptr;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "exp_table");
  p = good;
  p.reciprocal_table = nullptr;
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "reciprocal_table");
  std::vector<int16_t> bad = exp_lut();
  bad[100] = -1;
  p = good;
  p.exp_table = bad.data();
  Error e = quantized_softmax_s16_prepare(p);
  EXPECT_STREQ(e.argument, "exp_table");
  EXPECT_EQ(e.index, 100);
  bad = exp_lut();
  bad[512] = 0;  // exp(0) = 0: a row's sum could be 0
  p.exp_table = bad.data();
  EXPECT_STREQ(quantized_softmax_s16_prepare(p).argument, "exp_table");
}

}  // namespace
}  // namespace cortexm
