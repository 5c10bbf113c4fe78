#include "cortexm/kernels/quantized_softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "gemmlowp_reference.h"
#include "random_data.h"

namespace cortexm {
namespace {

using namespace testing::gemmlowp_ref;

// TFLite's reference_ops::Softmax for int8 in and out, row by row (TFLite's names), with the
// parameters from PreprocessSoftmaxScaling / CalculateInputRadius computed here from the scale.
std::vector<int8_t> tflite_softmax(const std::vector<int8_t>& in, int rows, int depth,
                                   double input_scale, SoftmaxScaling* derived) {
  const double real = std::min(input_scale * double(1 << 26), double((int64_t(1) << 31) - 1));
  int shift = 0;
  const double fraction = std::frexp(real, &shift);
  int64_t multiplier = std::llround(fraction * double(int64_t(1) << 31));
  if (multiplier == int64_t(1) << 31) multiplier /= 2, ++shift;
  const int diff_min =
      -static_cast<int>(std::floor(31.0 * double(int64_t(1) << 26) / double(int64_t(1) << shift)));
  *derived = {static_cast<int32_t>(multiplier), shift, diff_min};

  std::vector<int8_t> out(in.size());
  for (int i = 0; i < rows; ++i) {
    const int8_t* x = &in[size_t(i) * depth];
    int8_t max_in_row = -128;
    for (int c = 0; c < depth; ++c) max_in_row = std::max(max_in_row, x[c]);
    auto scaled = [&](int c) {
      const int32_t diff = x[c] - max_in_row;
      return Fx<5>{srdhm(wrap(int64_t(diff) * (int64_t(1) << shift)), int32_t(multiplier))};
    };
    Fx<12> sum{0};
    for (int c = 0; c < depth; ++c)
      if (x[c] - max_in_row >= diff_min) sum = sum + rescale<12>(exp_on_negative_values(scaled(c)));
    const int headroom_plus_one = clz(static_cast<uint32_t>(sum.raw));
    const int num_bits_over_unit = 12 - headroom_plus_one;
    const Fx<0> shifted_scale = one_over_one_plus_x_for_x_in_0_1(Fx<0>{wrap(
        int64_t(static_cast<uint32_t>(sum.raw) << headroom_plus_one) - (int64_t(1) << 31))});
    for (int c = 0; c < depth; ++c) {
      int32_t v = -128;
      if (x[c] - max_in_row >= diff_min) {
        const Fx<0> e = exp_on_negative_values(scaled(c));
        v = rounding_divide((shifted_scale * e).raw, num_bits_over_unit + 31 - 8) - 128;
        v = std::clamp<int32_t>(v, -128, 127);
      }
      out[size_t(i) * depth + c] = static_cast<int8_t>(v);
    }
  }
  return out;
}

void check(int rows, int depth, double scale, uint32_t seed, int lo = -128, int hi = 127) {
  testing::RandomData rng(seed);
  const std::vector<int8_t> in = rng.int8s(size_t(rows) * depth, lo, hi);
  SoftmaxScaling want;
  const std::vector<int8_t> expected = tflite_softmax(in, rows, depth, scale, &want);
  SoftmaxParams p;
  p.rows = rows;
  p.row_size = depth;
  ASSERT_TRUE(softmax_scaling(scale, &p.scaling).ok());
  EXPECT_EQ(p.scaling.input_multiplier, want.input_multiplier);
  EXPECT_EQ(p.scaling.input_left_shift, want.input_left_shift);
  EXPECT_EQ(p.scaling.diff_min, want.diff_min);
  ASSERT_TRUE(quantized_softmax_prepare(p).ok());
  std::vector<int8_t> fast(in.size()), ref(in.size());
  quantized_softmax(p, in.data(), fast.data());
  quantized_softmax_reference(p, in.data(), ref.data());
  ASSERT_EQ(ref, expected) << "rows " << rows << " depth " << depth << " scale " << scale;
  ASSERT_EQ(fast, expected) << "rows " << rows << " depth " << depth << " scale " << scale;
  // Close to float softmax: within 1 LSB of 1/256 (the fixed-point exp and reciprocal are exact
  // to ~2^-20).
  for (int i = 0; i < rows; ++i) {
    double max = -1e9, sum = 0;
    for (int c = 0; c < depth; ++c) max = std::max(max, scale * in[size_t(i) * depth + c]);
    for (int c = 0; c < depth; ++c) sum += std::exp(scale * in[size_t(i) * depth + c] - max);
    for (int c = 0; c < depth; ++c) {
      const double want_q = std::exp(scale * in[size_t(i) * depth + c] - max) / sum * 256 - 128;
      EXPECT_LE(std::abs(std::min(want_q, 127.0) - expected[size_t(i) * depth + c]), 1.0);
    }
  }
}

TEST(QuantizedSoftmax, MatchesTfliteReference) {
  check(1, 12, 0.1, 1);
  check(7, 13, 0.0371, 2);
  check(3, 1, 0.05, 3);
  check(5, 255, 0.011, 4);
  check(2, 1000, 0.25, 5);
}

TEST(QuantizedSoftmax, RandomizedAwkwardScalesAndShapes) {
  testing::RandomData rng(99);
  for (int t = 0; t < 300; ++t) {
    const double scale = std::pow(10.0, rng.uniform(-700, 150) / 100.0);  // 1e-7 .. 31
    const int lo = rng.uniform(-128, 127);
    check(rng.uniform(1, 6), rng.uniform(1, 70), scale, 1000 + t, lo, rng.uniform(lo, 127));
  }
}

TEST(QuantizedSoftmax, LargeScalesKeepOnlyTheMaximum) {
  check(4, 9, 20.0, 7);   // real multiplier capped at 2^31 - 1: left shift 31, diff_min 0
  check(4, 9, 100.0, 8);
}

TEST(QuantizedSoftmax, FullRowOfEqualValues) {
  // 4096 exps of 1.0 fill the Q12.19 sum to 2^31: every output is 1/4096, which rounds to -128.
  for (int depth : {4095, 4096}) {
    std::vector<int8_t> in(size_t(depth), 17), out(in.size()), ref(in.size());
    SoftmaxParams p;
    p.row_size = depth;
    ASSERT_TRUE(softmax_scaling(0.02, &p.scaling).ok());
    ASSERT_TRUE(quantized_softmax_prepare(p).ok());
    quantized_softmax(p, in.data(), out.data());
    quantized_softmax_reference(p, in.data(), ref.data());
    EXPECT_EQ(out, ref);
    EXPECT_EQ(out, std::vector<int8_t>(in.size(), -128));
  }
  std::vector<int8_t> in(64, 5), out(in.size());
  SoftmaxParams p;
  p.row_size = 64;
  ASSERT_TRUE(softmax_scaling(0.02, &p.scaling).ok());
  quantized_softmax(p, in.data(), out.data());
  EXPECT_EQ(out, std::vector<int8_t>(in.size(), -124));  // 256 / 64 - 128
}

TEST(QuantizedSoftmax, PrepareRejectsBadParams) {
  SoftmaxParams p;
  ASSERT_TRUE(softmax_scaling(0.1, &p.scaling).ok());
  p.row_size = 4097;
  EXPECT_STREQ(quantized_softmax_prepare(p).argument, "row_size");
  p.row_size = 8;
  p.rows = 0;
  EXPECT_STREQ(quantized_softmax_prepare(p).argument, "rows");
  p.rows = 1;
  p.scaling.input_left_shift = 32;
  EXPECT_STREQ(quantized_softmax_prepare(p).argument, "input_shift");
  p.scaling.input_left_shift = 24;
  p.scaling.diff_min = -200;  // -200 * 2^24 leaves int32
  EXPECT_STREQ(quantized_softmax_prepare(p).argument, "diff_min");
  p.scaling.diff_min = 1;
  EXPECT_STREQ(quantized_softmax_prepare(p).argument, "diff_min");
  SoftmaxScaling s;
  EXPECT_STREQ(softmax_scaling(1e-9, &s).argument, "input_scale");
  EXPECT_STREQ(softmax_scaling(std::nan(""), &s).argument, "input_scale");
  EXPECT_STREQ(softmax_scaling(INFINITY, &s).argument, "input_scale");
}

}  // namespace
}  // namespace cortexm
