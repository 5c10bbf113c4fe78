#include "cortexm/kernels/quantized_depthwise_conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

enum class QuantMode { kRealistic, kExtreme };
enum class BiasMode { kRandom, kNone, kNearLimits };

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0x5A;

int32_t wrap_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// Builder with awkward defaults: batch 2, odd sizes and channels, depth multiplier 2, asymmetric
// padding, dilation, nonzero zero points.
class DepthwiseTester {
 public:
  DepthwiseTester& batch(int32_t n) { n_ = n; return *this; }
  DepthwiseTester& input_size(int32_t h, int32_t w) { h_ = h; w_ = w; return *this; }
  DepthwiseTester& channels(int32_t c) { in_c_ = c; return *this; }
  DepthwiseTester& depth_multiplier(int32_t m) { m_ = m; return *this; }
  DepthwiseTester& kernel(int32_t kh, int32_t kw) { kh_ = kh; kw_ = kw; return *this; }
  DepthwiseTester& stride(int32_t sh, int32_t sw) { sh_ = sh; sw_ = sw; return *this; }
  DepthwiseTester& dilation(int32_t dh, int32_t dw) { dh_ = dh; dw_ = dw; return *this; }
  DepthwiseTester& padding(int32_t top, int32_t left, int32_t bottom, int32_t right) {
    pad_ = {top, left, bottom, right};
    return *this;
  }
  DepthwiseTester& zero_points(int32_t in, int32_t out) {
    zp_in_ = in;
    zp_out_ = out;
    return *this;
  }
  DepthwiseTester& activation(int32_t lo, int32_t hi) {
    act_min_ = lo;
    act_max_ = hi;
    return *this;
  }
  DepthwiseTester& quant(QuantMode m) { quant_ = m; return *this; }
  DepthwiseTester& bias(BiasMode m) { bias_ = m; return *this; }
  DepthwiseTester& seed(uint32_t s) { seed_ = s; return *this; }

  int32_t output_h() const { return extent(h_, kh_, sh_, dh_, pad_.top, pad_.bottom); }
  int32_t output_w() const { return extent(w_, kw_, sw_, dw_, pad_.left, pad_.right); }

  void Test() const {
    SCOPED_TRACE(describe());
    testing::RandomData rng(seed_);
    const int32_t out_c = in_c_ * m_;
    const int32_t taps = kh_ * kw_;
    const int32_t oh = output_h(), ow = output_w();
    ASSERT_GE(oh, 1);
    ASSERT_GE(ow, 1);

    const auto input = rng.int8s(size_t(n_) * h_ * w_ * in_c_);
    const auto filter = rng.int8s(size_t(kh_) * kw_ * out_c);

    const double in_scale = 0.0219;
    std::vector<double> filter_scale(out_c);
    for (int32_t oc = 0; oc < out_c; ++oc) filter_scale[oc] = 0.0063 * (1.0 + 0.29 * (oc % 5));
    // Output std of about 50 LSB for accumulators of std 74 * 74 * sqrt(taps).
    const double out_scale = in_scale * 0.0063 * 1.6 * 74.0 * 74.0 * std::sqrt(double(taps)) / 50.0;
    std::vector<int32_t> multipliers(out_c), shifts(out_c);
    for (int32_t oc = 0; oc < out_c; ++oc) {
      if (quant_ == QuantMode::kRealistic) {
        const auto q = quantize_multiplier(in_scale * filter_scale[oc] / out_scale);
        multipliers[oc] = q.multiplier;
        shifts[oc] = q.shift;
      } else {
        switch (oc % 5) {
          case 0: multipliers[oc] = rng.uniform(1, 64); shifts[oc] = 30; break;
          case 1: multipliers[oc] = rng.multiplier(); shifts[oc] = -31; break;
          case 2: multipliers[oc] = INT32_MAX; shifts[oc] = rng.uniform(-31, 30); break;
          case 3: multipliers[oc] = 0; shifts[oc] = rng.uniform(-31, 30); break;
          default: multipliers[oc] = rng.uniform(0, INT32_MAX); shifts[oc] = rng.uniform(-31, 30);
        }
      }
    }

    // Bias within the range where bias + any sum of taps still fits int32.
    const int32_t max_sum = taps * 255 * 128;
    std::vector<int32_t> bias(out_c);
    for (int32_t oc = 0; oc < out_c; ++oc) {
      if (bias_ == BiasMode::kNearLimits) {
        bias[oc] = (oc % 3 ? -1 : 1) * (INT32_MAX - max_sum);
      } else {
        bias[oc] = rng.uniform(-9000, 9000);
      }
    }
    const int32_t* bias_data = bias_ == BiasMode::kNone ? nullptr : bias.data();

    DepthwiseConv2dParams p;
    p.input = {n_, h_, w_, in_c_};
    p.filter = {1, kh_, kw_, out_c};
    p.output = {n_, oh, ow, out_c};
    p.depth_multiplier = m_;
    p.geometry.stride_h = sh_;
    p.geometry.stride_w = sw_;
    p.geometry.dilation_h = dh_;
    p.geometry.dilation_w = dw_;
    p.geometry.padding = pad_;
    p.quant.input_offset = -zp_in_;
    p.quant.output_offset = zp_out_;
    p.quant.activation_min = act_min_;
    p.quant.activation_max = act_max_;
    p.quant.multipliers = multipliers.data();
    p.quant.shifts = shifts.data();
    const Dims4 dims = quantized_depthwise_conv2d_output_dims(p);
    ASSERT_EQ(dims.n, n_);
    ASSERT_EQ(dims.h, oh);
    ASSERT_EQ(dims.w, ow);
    ASSERT_EQ(dims.c, out_c);
    const Error error = quantized_depthwise_conv2d_prepare(p);
    ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;

    // Plain loops: 64-bit accumulators, checked to fit int32.
    const size_t out_count = size_t(n_) * oh * ow * out_c;
    std::vector<int8_t> expected(out_count);
    std::vector<int64_t> sums(out_count);  // sum of (x - zp_in) * w, for the float check
    for (int32_t n = 0; n < n_; ++n)
      for (int32_t oy = 0; oy < oh; ++oy)
        for (int32_t ox = 0; ox < ow; ++ox)
          for (int32_t oc = 0; oc < out_c; ++oc) {
            const int32_t ic = oc / m_;
            int64_t sum = 0;
            for (int32_t ky = 0; ky < kh_; ++ky)
              for (int32_t kx = 0; kx < kw_; ++kx) {
                const int32_t iy = oy * sh_ - pad_.top + ky * dh_;
                const int32_t ix = ox * sw_ - pad_.left + kx * dw_;
                if (iy < 0 || iy >= h_ || ix < 0 || ix >= w_) continue;
                const int32_t x = input[((size_t(n) * h_ + iy) * w_ + ix) * in_c_ + ic];
                const int32_t wt = filter[(size_t(ky) * kw_ + kx) * out_c + oc];
                sum += int64_t{x - zp_in_} * wt;
              }
            const size_t e = ((size_t(n) * oh + oy) * ow + ox) * out_c + oc;
            sums[e] = sum;
            const int64_t acc = sum + (bias_data ? bias_data[oc] : 0);
            ASSERT_GE(acc, INT32_MIN);
            ASSERT_LE(acc, INT32_MAX);
            const int32_t scaled = requantize(int32_t(acc), multipliers[oc], shifts[oc]);
            const int32_t out = wrap_int32(int64_t{scaled} + zp_out_);
            expected[e] = int8_t(out < act_min_ ? act_min_ : (out > act_max_ ? act_max_ : out));
          }

    // Optimized kernel: garbage in scratch, guard bytes after scratch and output.
    const size_t scratch_size = quantized_depthwise_conv2d_scratch_size(p, Isa::kScalar);
    std::vector<uint8_t> scratch(scratch_size + kGuardBytes);
    for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
    std::memset(scratch.data() + scratch_size, kGuardByte, kGuardBytes);
    std::vector<int8_t> fast(out_count + kGuardBytes, int8_t(kGuardByte));
    quantized_depthwise_conv2d(p, input.data(), filter.data(), bias_data, fast.data(),
                               scratch.data());
    for (size_t i = 0; i < kGuardBytes; ++i) {
      ASSERT_EQ(scratch[scratch_size + i], kGuardByte) << "scratch overrun at +" << i;
      ASSERT_EQ(uint8_t(fast[out_count + i]), kGuardByte) << "output overrun at +" << i;
    }
    fast.resize(out_count);
    std::vector<int8_t> ref(out_count);
    quantized_depthwise_conv2d_reference(p, input.data(), filter.data(), bias_data, ref.data());
    expect_equal(expected, ref, "reference");
    expect_equal(expected, fast, "optimized");

    // In place: the input at the kernel's lag into one buffer, the output from its start, over
    // the input; guard bytes after both.
    const int64_t lag = quantized_depthwise_conv2d_in_place_lag(p);
    ASSERT_GE(lag, out_c);  // the first output pixel reads input pixel 0
    const size_t in_bytes = input.size();
    const size_t shared_size = std::max(size_t(lag) + in_bytes, out_count);
    std::vector<int8_t> shared(shared_size + kGuardBytes, int8_t(kGuardByte));
    std::memcpy(shared.data() + lag, input.data(), in_bytes);
    quantized_depthwise_conv2d(p, shared.data() + lag, filter.data(), bias_data, shared.data(),
                               scratch.data());
    for (size_t i = 0; i < kGuardBytes; ++i)
      ASSERT_EQ(uint8_t(shared[shared_size + i]), kGuardByte) << "in-place overrun at +" << i;
    shared.resize(out_count);
    expect_equal(expected, shared, "in place");

    // Within 1 LSB of float math for nearly all elements.
    if (quant_ == QuantMode::kRealistic && bias_ != BiasMode::kNearLimits) {
      size_t far = 0;
      for (size_t e = 0; e < out_count; ++e) {
        const int32_t oc = int32_t(e % out_c);
        const double acc = double(sums[e]) + (bias_data ? bias_data[oc] : 0);
        double q = acc * in_scale * filter_scale[oc] / out_scale + zp_out_;
        q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
        if (std::abs(q - expected[e]) > 1.0) ++far;
      }
      EXPECT_LE(far, out_count / 100);
    }
  }

 private:
  static int32_t extent(int32_t in, int32_t k, int32_t s, int32_t d, int32_t before,
                        int32_t after) {
    const int32_t span = in + before + after - d * (k - 1);
    return span < 1 ? 0 : (span - 1) / s + 1;
  }

  static void expect_equal(const std::vector<int8_t>& expected, const std::vector<int8_t>& got,
                           const char* what) {
    for (size_t e = 0; e < expected.size(); ++e)
      ASSERT_EQ(int(got[e]), int(expected[e])) << what << " differs at element " << e;
  }

  std::string describe() const {
    char s[320];
    std::snprintf(s, sizeof s,
                  "n=%d hw=%dx%d c=%d m=%d k=%dx%d stride=%dx%d dilation=%dx%d "
                  "pad=(%d,%d,%d,%d) zp=(%d,%d) act=[%d,%d] quant=%d bias=%d seed=%u",
                  n_, h_, w_, in_c_, m_, kh_, kw_, sh_, sw_, dh_, dw_, pad_.top, pad_.left,
                  pad_.bottom, pad_.right, zp_in_, zp_out_, act_min_, act_max_, int(quant_),
                  int(bias_), seed_);
    return s;
  }

  int32_t n_ = 2, h_ = 9, w_ = 11, in_c_ = 7, m_ = 2;
  int32_t kh_ = 3, kw_ = 3, sh_ = 2, sw_ = 1, dh_ = 1, dw_ = 2;
  Padding2d pad_{1, 0, 2, 1};
  int32_t zp_in_ = -11, zp_out_ = 6;
  int32_t act_min_ = -128, act_max_ = 127;
  QuantMode quant_ = QuantMode::kRealistic;
  BiasMode bias_ = BiasMode::kRandom;
  uint32_t seed_ = 1;
};

TEST(QuantizedDepthwiseConv2d, AwkwardDefaults) { DepthwiseTester().Test(); }
TEST(QuantizedDepthwiseConv2d, NoBias) { DepthwiseTester().bias(BiasMode::kNone).seed(2).Test(); }
TEST(QuantizedDepthwiseConv2d, BiasNearInt32Limits) {
  DepthwiseTester().bias(BiasMode::kNearLimits).seed(3).Test();
  DepthwiseTester().bias(BiasMode::kNearLimits).quant(QuantMode::kExtreme).seed(4).Test();
  DepthwiseTester().bias(BiasMode::kNearLimits).depth_multiplier(1).stride(1, 1)
      .dilation(1, 1).padding(1, 1, 1, 1).seed(5).Test();
}
TEST(QuantizedDepthwiseConv2d, ExtremeMultipliersAndShifts) {
  DepthwiseTester().quant(QuantMode::kExtreme).seed(6).Test();
  DepthwiseTester().quant(QuantMode::kExtreme).depth_multiplier(1).channels(25).stride(1, 1)
      .dilation(1, 1).seed(7).Test();
}
TEST(QuantizedDepthwiseConv2d, ExtremeZeroPoints) {
  DepthwiseTester().zero_points(-128, 127).seed(8).Test();
  DepthwiseTester().zero_points(127, -128).depth_multiplier(1).stride(1, 1).dilation(1, 1)
      .seed(9).Test();
}
TEST(QuantizedDepthwiseConv2d, FusedReluRange) {
  DepthwiseTester().zero_points(-3, -128).activation(-128, -20).seed(10).Test();
}
TEST(QuantizedDepthwiseConv2d, ThreeByThreeSamePadding) {
  DepthwiseTester().depth_multiplier(1).channels(19).stride(1, 1).dilation(1, 1)
      .padding(1, 1, 1, 1).seed(11).Test();
}
TEST(QuantizedDepthwiseConv2d, ThreeByThreeStridedDilated) {
  DepthwiseTester().depth_multiplier(1).channels(37).input_size(13, 12).stride(2, 3)
      .dilation(2, 3).padding(0, 2, 1, 0).seed(12).Test();
}
TEST(QuantizedDepthwiseConv2d, DepthMultiplierThree) {
  DepthwiseTester().depth_multiplier(3).channels(5).kernel(2, 4).seed(13).Test();
}
TEST(QuantizedDepthwiseConv2d, FiveByFive) {
  DepthwiseTester().depth_multiplier(1).channels(21).kernel(5, 5).stride(1, 1).dilation(1, 1)
      .padding(2, 2, 2, 2).seed(14).Test();
}
TEST(QuantizedDepthwiseConv2d, OneByOne) {
  DepthwiseTester().kernel(1, 1).padding(0, 0, 0, 0).seed(15).Test();
}
TEST(QuantizedDepthwiseConv2d, KernelLargerThanInput) {
  DepthwiseTester().input_size(2, 3).kernel(4, 5).stride(1, 1).dilation(1, 1)
      .padding(2, 2, 1, 3).seed(16).Test();
}
TEST(QuantizedDepthwiseConv2d, MobileNetV2Strided) {
  DepthwiseTester().batch(1).input_size(16, 16).channels(32).depth_multiplier(1).stride(2, 2)
      .dilation(1, 1).padding(0, 0, 1, 1).zero_points(-128, 3).activation(3, 127).seed(17).Test();
}
TEST(QuantizedDepthwiseConv2d, DsCnnDepthwise) {
  DepthwiseTester().batch(1).input_size(25, 5).channels(64).depth_multiplier(1).stride(1, 1)
      .dilation(1, 1).padding(1, 1, 1, 1).zero_points(-128, -128).activation(-128, 127)
      .seed(18).Test();
}

// requantize gives 2^31 - 5 here; adding the output offset wraps as the target's 32-bit add does.
// Writes of pixel (y, x) wait only for the windows from (y - 1, x) on (MVE runs a pixel and the
// one below it together): a 3x3 same window then needs two rows and two pixels of lag.
TEST(QuantizedDepthwiseConv2d, InPlaceLagOfSame3x3IsTwoRowsAndTwoPixels) {
  DepthwiseConv2dParams p;
  p.input = {1, 6, 7, 5};
  p.filter = {1, 3, 3, 5};
  p.geometry.padding = {1, 1, 1, 1};
  p.output = quantized_depthwise_conv2d_output_dims(p);
  EXPECT_EQ(quantized_depthwise_conv2d_in_place_lag(p), (2 * 7 + 2) * 5);
}

// Stride 2, TensorFlow's same padding of an even input (bottom and right only): output row 1's
// first pixel is written while output row 0's first window (from input pixel 0) may still be read.
TEST(QuantizedDepthwiseConv2d, InPlaceLagOfStride2IsOneOutputRowAndOnePixel) {
  DepthwiseConv2dParams p;
  p.input = {1, 8, 8, 3};
  p.filter = {1, 3, 3, 3};
  p.geometry.stride_h = p.geometry.stride_w = 2;
  p.geometry.padding = {0, 0, 1, 1};
  p.output = quantized_depthwise_conv2d_output_dims(p);
  ASSERT_EQ(p.output.w, 4);
  EXPECT_EQ(quantized_depthwise_conv2d_in_place_lag(p), (4 + 1) * 3);
}

TEST(QuantizedDepthwiseConv2d, OutputOffsetAddWrapsLikeTheTarget) {
  const int8_t input[2] = {-7, -7};  // at the zero point: every tap contributes 0
  const int8_t filter[2] = {100, -100};
  const int32_t bias[2] = {INT32_MAX - 3, INT32_MAX - 3};
  const int32_t multipliers[2] = {INT32_MAX, INT32_MAX}, shifts[2] = {0, 0};
  DepthwiseConv2dParams p;
  p.input = {1, 1, 1, 2};
  p.filter = {1, 1, 1, 2};
  p.output = {1, 1, 1, 2};
  p.quant.input_offset = 7;
  p.quant.output_offset = 100;
  p.quant.multipliers = multipliers;
  p.quant.shifts = shifts;
  ASSERT_TRUE(quantized_depthwise_conv2d_prepare(p).ok());
  int8_t fast[2] = {0, 0}, ref[2] = {0, 0};
  std::vector<uint8_t> scratch(quantized_depthwise_conv2d_scratch_size(p, Isa::kScalar));
  quantized_depthwise_conv2d(p, input, filter, bias, fast, scratch.data());
  quantized_depthwise_conv2d_reference(p, input, filter, bias, ref);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(fast[i], -128);
    EXPECT_EQ(ref[i], -128);
  }
}

TEST(QuantizedDepthwiseConv2d, RandomizedAwkwardCases) {
  testing::RandomData rng(4048);
  for (int i = 0; i < 300; ++i) {
    DepthwiseTester t;
    const bool three_by_three = i % 3 == 0;  // the 3x3 path
    t.batch(rng.uniform(1, 2))
        .input_size(rng.uniform(1, 9), rng.uniform(1, 9))
        .channels(rng.uniform(1, 21))
        .depth_multiplier(three_by_three ? 1 : rng.uniform(1, 3))
        .kernel(three_by_three ? 3 : rng.uniform(1, 4), three_by_three ? 3 : rng.uniform(1, 4))
        .stride(rng.uniform(1, 3), rng.uniform(1, 3))
        .dilation(rng.uniform(1, 3), rng.uniform(1, 3))
        .padding(rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3))
        .zero_points(rng.uniform(-128, 127), rng.uniform(-128, 127))
        .quant(rng.uniform(0, 1) ? QuantMode::kExtreme : QuantMode::kRealistic)
        .bias(BiasMode(rng.uniform(0, 2)))
        .seed(uint32_t(i));
    const int32_t lo = rng.uniform(-128, 60);
    t.activation(lo, rng.uniform(lo, 127));
    if (t.output_h() < 1 || t.output_w() < 1) t.padding(3, 3, 3, 3).dilation(1, 1);
    if (t.output_h() < 1 || t.output_w() < 1) t.input_size(9, 9);
    t.Test();
    if (::testing::Test::HasFatalFailure()) return;
  }
}

class DepthwisePrepare : public ::testing::Test {
 protected:
  void SetUp() override {
    p = DepthwiseConv2dParams();
    for (int i = 0; i < 6; ++i) multipliers[i] = 1 << 30;
    shifts[4] = -1;
    p.input = {1, 5, 5, 3};
    p.filter = {1, 3, 3, 6};
    p.output = {1, 3, 3, 6};
    p.depth_multiplier = 2;
    p.quant.multipliers = multipliers;
    p.quant.shifts = shifts;
    ASSERT_TRUE(quantized_depthwise_conv2d_prepare(p).ok());
  }
  void ExpectError(const char* argument, int64_t value, int64_t index = -1) {
    const Error e = quantized_depthwise_conv2d_prepare(p);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
    EXPECT_EQ(e.index, index);
  }
  DepthwiseConv2dParams p;
  int32_t multipliers[6] = {};
  int32_t shifts[6] = {0, -31, 30, 1, -1, 0};
};

TEST_F(DepthwisePrepare, RejectsFilterBatchOtherThanOne) {
  p.filter.n = 2;
  ExpectError("weight.shape[0]", 2);
}
TEST_F(DepthwisePrepare, RejectsChannelMismatch) {
  p.depth_multiplier = 3;
  ExpectError("weight.shape[3]", 6);
}
TEST_F(DepthwisePrepare, RejectsDepthMultiplierBelowOne) {
  p.depth_multiplier = 0;
  ExpectError("depth_multiplier", 0);
}
TEST_F(DepthwisePrepare, RejectsBadQuantParams) {
  shifts[4] = 31;
  ExpectError("requantize_shifts", 31, 4);
  SetUp();
  multipliers[5] = -5;
  ExpectError("requantize_multipliers", -5, 5);
  SetUp();
  p.quant.activation_min = 0;
  p.quant.activation_max = -1;
  ExpectError("activation_min", 0);
}
TEST_F(DepthwisePrepare, RejectsPaddingBeyondInt32) {
  p.geometry.padding.top = INT32_MAX;
  ExpectError("padding", INT32_MAX, 0);
}
TEST_F(DepthwisePrepare, RejectsBadGeometry) {
  p.geometry.dilation_w = 0;
  ExpectError("dilation", 0, 1);
  SetUp();
  p.output.h = 2;
  ExpectError("output.shape[1]", 2);
}

TEST(QuantizedDepthwiseConv2d, ScratchSizeIsOneAccumulatorPerChannel) {
  DepthwiseConv2dParams p;
  p.input = {1, 8, 8, 16};
  p.filter = {1, 3, 3, 32};
  p.depth_multiplier = 2;
  EXPECT_EQ(quantized_depthwise_conv2d_scratch_size(p, Isa::kScalar), 32u * sizeof(int32_t));
}

}  // namespace
}  // namespace cortexm
