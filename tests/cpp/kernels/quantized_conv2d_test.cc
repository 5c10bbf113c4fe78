#include "cortexm/kernels/quantized_conv2d.h"

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
constexpr uint8_t kGuardByte = 0xA5;

int32_t wrap_int32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

// Builder with awkward defaults: batch 2, odd sizes, 3 groups, asymmetric padding, dilation,
// nonzero zero points.
class Conv2dTester {
 public:
  Conv2dTester& batch(int32_t n) { n_ = n; return *this; }
  Conv2dTester& input_size(int32_t h, int32_t w) { h_ = h; w_ = w; return *this; }
  Conv2dTester& channels(int32_t in, int32_t out) { in_c_ = in; out_c_ = out; return *this; }
  Conv2dTester& groups(int32_t g) { groups_ = g; return *this; }
  Conv2dTester& kernel(int32_t kh, int32_t kw) { kh_ = kh; kw_ = kw; return *this; }
  Conv2dTester& stride(int32_t sh, int32_t sw) { sh_ = sh; sw_ = sw; return *this; }
  Conv2dTester& dilation(int32_t dh, int32_t dw) { dh_ = dh; dw_ = dw; return *this; }
  Conv2dTester& padding(int32_t top, int32_t left, int32_t bottom, int32_t right) {
    pad_ = {top, left, bottom, right};
    return *this;
  }
  Conv2dTester& zero_points(int32_t in, int32_t out) { zp_in_ = in; zp_out_ = out; return *this; }
  Conv2dTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  Conv2dTester& quant(QuantMode m) { quant_ = m; return *this; }
  Conv2dTester& bias(BiasMode m) { bias_ = m; return *this; }
  Conv2dTester& seed(uint32_t s) { seed_ = s; return *this; }

  int32_t output_h() const { return extent(h_, kh_, sh_, dh_, pad_.top, pad_.bottom); }
  int32_t output_w() const { return extent(w_, kw_, sw_, dw_, pad_.left, pad_.right); }

  void Test() const {
    SCOPED_TRACE(describe());
    testing::RandomData rng(seed_);
    const int32_t group_c = in_c_ / groups_, out_per_group = out_c_ / groups_;
    const int32_t taps = kh_ * kw_ * group_c;
    const int32_t oh = output_h(), ow = output_w();
    ASSERT_GE(oh, 1);
    ASSERT_GE(ow, 1);

    const auto input = rng.int8s(size_t(n_) * h_ * w_ * in_c_);
    const auto filter = rng.int8s(size_t(out_c_) * kh_ * kw_ * group_c);

    // Per-channel scales (realistic) or fixed-point extremes.
    const double in_scale = 0.0173;
    std::vector<double> filter_scale(out_c_);
    for (int32_t oc = 0; oc < out_c_; ++oc) filter_scale[oc] = 0.0041 * (1.0 + 0.37 * (oc % 4));
    // Output std of about 50 LSB for accumulators of std 74 * 74 * sqrt(taps).
    const double out_scale = in_scale * 0.0041 * 1.5 * 74.0 * 74.0 * std::sqrt(double(taps)) / 50.0;
    std::vector<int32_t> multipliers(out_c_), shifts(out_c_);
    for (int32_t oc = 0; oc < out_c_; ++oc) {
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
    std::vector<int32_t> bias(out_c_);
    for (int32_t oc = 0; oc < out_c_; ++oc) {
      if (bias_ == BiasMode::kNearLimits) {
        bias[oc] = (oc % 2 ? -1 : 1) * (INT32_MAX - max_sum);
      } else {
        bias[oc] = rng.uniform(-40000, 40000);
      }
    }
    const int32_t* bias_data = bias_ == BiasMode::kNone ? nullptr : bias.data();

    Conv2dParams p;
    p.input = {n_, h_, w_, in_c_};
    p.filter = {out_c_, kh_, kw_, group_c};
    p.output = {n_, oh, ow, out_c_};
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
    const Dims4 dims = quantized_conv2d_output_dims(p);
    ASSERT_EQ(dims.n, n_);
    ASSERT_EQ(dims.h, oh);
    ASSERT_EQ(dims.w, ow);
    ASSERT_EQ(dims.c, out_c_);
    ASSERT_EQ(p.groups(), groups_);
    const Error error = quantized_conv2d_prepare(p);
    ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;

    // Plain loops: 64-bit accumulators, checked to fit int32.
    const size_t out_count = size_t(n_) * oh * ow * out_c_;
    std::vector<int8_t> expected(out_count);
    std::vector<int64_t> sums(out_count);  // sum of (x - zp_in) * w, for the float check
    for (int32_t n = 0; n < n_; ++n)
      for (int32_t oy = 0; oy < oh; ++oy)
        for (int32_t ox = 0; ox < ow; ++ox)
          for (int32_t oc = 0; oc < out_c_; ++oc) {
            int64_t sum = 0;
            for (int32_t ky = 0; ky < kh_; ++ky)
              for (int32_t kx = 0; kx < kw_; ++kx) {
                const int32_t iy = oy * sh_ - pad_.top + ky * dh_;
                const int32_t ix = ox * sw_ - pad_.left + kx * dw_;
                if (iy < 0 || iy >= h_ || ix < 0 || ix >= w_) continue;
                for (int32_t ic = 0; ic < group_c; ++ic) {
                  const int32_t channel = oc / out_per_group * group_c + ic;
                  const int32_t x = input[((size_t(n) * h_ + iy) * w_ + ix) * in_c_ + channel];
                  const int32_t wt = filter[((size_t(oc) * kh_ + ky) * kw_ + kx) * group_c + ic];
                  sum += int64_t{x - zp_in_} * wt;
                }
              }
            const size_t e = ((size_t(n) * oh + oy) * ow + ox) * out_c_ + oc;
            sums[e] = sum;
            const int64_t acc = sum + (bias_data ? bias_data[oc] : 0);
            ASSERT_GE(acc, INT32_MIN);
            ASSERT_LE(acc, INT32_MAX);
            const int32_t scaled = requantize(int32_t(acc), multipliers[oc], shifts[oc]);
            const int32_t out = wrap_int32(int64_t{scaled} + zp_out_);
            expected[e] = int8_t(out < act_min_ ? act_min_ : (out > act_max_ ? act_max_ : out));
          }

    // Optimized kernel: garbage in scratch, guard bytes after scratch and output.
    const size_t scratch_size = quantized_conv2d_scratch_size(p, Isa::kScalar);
    std::vector<uint8_t> scratch(scratch_size + kGuardBytes);
    for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
    std::memset(scratch.data() + scratch_size, kGuardByte, kGuardBytes);
    std::vector<int8_t> fast(out_count + kGuardBytes, int8_t(kGuardByte));
    quantized_conv2d(p, input.data(), filter.data(), bias_data, fast.data(), scratch.data());
    for (size_t i = 0; i < kGuardBytes; ++i) {
      ASSERT_EQ(scratch[scratch_size + i], kGuardByte) << "scratch overrun at +" << i;
      ASSERT_EQ(uint8_t(fast[out_count + i]), kGuardByte) << "output overrun at +" << i;
    }
    fast.resize(out_count);
    std::vector<int8_t> ref(out_count);
    quantized_conv2d_reference(p, input.data(), filter.data(), bias_data, ref.data());
    expect_equal(expected, ref, "reference");
    expect_equal(expected, fast, "optimized");

    // The folded contract: the bias holds input_offset * (sum of the filter row) already (checked
    // against 64-bit arithmetic wrapped once), padded taps count as x = -input_offset.
    std::vector<int32_t> folded(out_c_);
    quantized_conv2d_fold_bias(p, filter.data(), bias_data, folded.data());
    for (int32_t oc = 0; oc < out_c_; ++oc) {
      int64_t weight_sum = 0;
      for (int32_t t = 0; t < taps; ++t) weight_sum += filter[size_t(oc) * taps + t];
      const int64_t want = (bias_data ? bias_data[oc] : 0) - int64_t{zp_in_} * weight_sum;
      ASSERT_EQ(folded[oc], wrap_int32(want)) << "folded bias of channel " << oc;
    }
    Conv2dParams pf = p;
    pf.bias_includes_input_offset = true;
    for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
    std::vector<int8_t> fast_folded(out_count + kGuardBytes, int8_t(kGuardByte));
    quantized_conv2d(pf, input.data(), filter.data(), folded.data(), fast_folded.data(),
                     scratch.data());
    for (size_t i = 0; i < kGuardBytes; ++i) {
      ASSERT_EQ(scratch[scratch_size + i], kGuardByte) << "scratch overrun at +" << i << " (folded)";
      ASSERT_EQ(uint8_t(fast_folded[out_count + i]), kGuardByte) << "output overrun at +" << i << " (folded)";
    }
    fast_folded.resize(out_count);
    expect_equal(expected, fast_folded, "folded");

    // In place: the output from the kernel's lag below the input in one buffer (the input dies).
    const int64_t lag = quantized_conv2d_in_place_lag(p);
    if (lag >= 0) {
      const size_t in_count = input.size();
      const size_t extent = std::max(out_count, static_cast<size_t>(lag) + in_count);
      std::vector<int8_t> shared(extent + kGuardBytes, int8_t(kGuardByte));
      std::memcpy(shared.data() + lag, input.data(), in_count);
      for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
      quantized_conv2d(p, shared.data() + lag, filter.data(), bias_data, shared.data(), scratch.data());
      for (size_t i = 0; i < kGuardBytes; ++i)
        ASSERT_EQ(uint8_t(shared[extent + i]), kGuardByte) << "in place: overrun at +" << i;
      shared.resize(out_count);
      expect_equal(expected, shared, "in place");
    }

    // Within 1 LSB of float math for nearly all elements.
    if (quant_ == QuantMode::kRealistic && bias_ != BiasMode::kNearLimits) {
      size_t far = 0;
      for (size_t e = 0; e < out_count; ++e) {
        const int32_t oc = int32_t(e % out_c_);
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
                  "n=%d hw=%dx%d c=%d->%d groups=%d k=%dx%d stride=%dx%d dilation=%dx%d "
                  "pad=(%d,%d,%d,%d) zp=(%d,%d) act=[%d,%d] quant=%d bias=%d seed=%u",
                  n_, h_, w_, in_c_, out_c_, groups_, kh_, kw_, sh_, sw_, dh_, dw_, pad_.top,
                  pad_.left, pad_.bottom, pad_.right, zp_in_, zp_out_, act_min_, act_max_,
                  int(quant_), int(bias_), seed_);
    return s;
  }

  int32_t n_ = 2, h_ = 9, w_ = 11, in_c_ = 9, out_c_ = 15, groups_ = 3;
  int32_t kh_ = 3, kw_ = 2, sh_ = 2, sw_ = 1, dh_ = 1, dw_ = 2;
  Padding2d pad_{1, 0, 2, 1};
  int32_t zp_in_ = 7, zp_out_ = -5;
  int32_t act_min_ = -128, act_max_ = 127;
  QuantMode quant_ = QuantMode::kRealistic;
  BiasMode bias_ = BiasMode::kRandom;
  uint32_t seed_ = 1;
};

TEST(QuantizedConv2d, AwkwardDefaults) { Conv2dTester().Test(); }
TEST(QuantizedConv2d, SingleGroup) { Conv2dTester().channels(7, 13).groups(1).seed(2).Test(); }
TEST(QuantizedConv2d, NoBias) { Conv2dTester().bias(BiasMode::kNone).seed(3).Test(); }
TEST(QuantizedConv2d, BiasNearInt32Limits) {
  Conv2dTester().bias(BiasMode::kNearLimits).seed(4).Test();
  Conv2dTester().bias(BiasMode::kNearLimits).quant(QuantMode::kExtreme).seed(5).Test();
}
TEST(QuantizedConv2d, ExtremeMultipliersAndShifts) {
  Conv2dTester().quant(QuantMode::kExtreme).seed(6).Test();
  Conv2dTester().quant(QuantMode::kExtreme).channels(5, 25).groups(1).seed(7).Test();
}
TEST(QuantizedConv2d, ExtremeZeroPoints) {
  Conv2dTester().zero_points(-128, 127).seed(8).Test();
  Conv2dTester().zero_points(127, -128).seed(9).Test();
}
TEST(QuantizedConv2d, FusedReluRange) {
  Conv2dTester().zero_points(3, -128).activation(-128, -20).seed(10).Test();
}
TEST(QuantizedConv2d, Pointwise) {
  Conv2dTester().kernel(1, 1).stride(1, 1).dilation(1, 1).padding(0, 0, 0, 0).groups(1)
      .channels(13, 7).seed(11).Test();
}
TEST(QuantizedConv2d, PointwiseStridedGrouped) {
  Conv2dTester().kernel(1, 1).stride(2, 3).padding(0, 0, 0, 0).seed(12).Test();
}
TEST(QuantizedConv2d, PointwisePadded) {
  Conv2dTester().kernel(1, 1).stride(1, 1).padding(1, 0, 0, 2).groups(1).seed(13).Test();
}
TEST(QuantizedConv2d, PointwiseExtremes) {
  Conv2dTester().kernel(1, 1).stride(1, 1).padding(0, 0, 0, 0).groups(1).channels(33, 9)
      .zero_points(-128, 0).quant(QuantMode::kExtreme).bias(BiasMode::kNearLimits).seed(14).Test();
}
// ds_cnn's 1x1 64 -> 64 on 25x5: the DSP's block of 2 pixels and its widened columns (4 bytes a
// tap, word-aligned) decide the lag over the blocks of 4 of scalar and MVE (256 bytes).
TEST(QuantizedConv2d, InPlaceLagOfPointwiseIsTheDspBlockAndItsColumns) {
  Conv2dParams p;
  p.input = {1, 25, 5, 64};
  p.filter = {64, 1, 1, 64};
  p.output = quantized_conv2d_output_dims(p);
  EXPECT_EQ(quantized_conv2d_in_place_lag(p), 2 * 64 + 4 * 64 + 3);
  // Narrowing 64 -> 8: still the first block's.
  p.filter = {8, 1, 1, 64};
  p.output = quantized_conv2d_output_dims(p);
  EXPECT_EQ(quantized_conv2d_in_place_lag(p), 2 * 8 + 4 * 64 + 3);
}

// Widening 2 -> 16 over 2 images of 3 pixels: the output outruns the input, the last block decides.
// Its last blocks: of 4 per image, the second image's pixels [3, 6); of 2, pixel [5, 6).
TEST(QuantizedConv2d, InPlaceLagOfWideningPointwiseIsItsLastBlock) {
  Conv2dParams p;
  p.input = {2, 1, 3, 2};
  p.filter = {16, 1, 1, 2};
  p.output = quantized_conv2d_output_dims(p);
  EXPECT_EQ(quantized_conv2d_in_place_lag(p), std::max<int64_t>(6 * 16 - 3 * 2, 6 * 16 - 5 * 2 + 4 * 2 + 3));
}

// A 3x3 window, stride 1, padding 1 over 32x32x16 (ResNet8's): pixel (y, x) from y, x >= 1 on
// reads from input pixel (y - 1, x - 1), so the output trails its input by a row and a pixel.
TEST(QuantizedConv2d, InPlaceLagOfAWindowIsARowAndAPixel) {
  Conv2dParams p;
  p.input = {1, 32, 32, 16};
  p.filter = {16, 3, 3, 16};
  p.geometry.padding = {1, 1, 1, 1};
  p.output = quantized_conv2d_output_dims(p);
  EXPECT_EQ(quantized_conv2d_in_place_lag(p), (32 + 1) * 16);
  // Stride 2 to 32 channels: output pixel (0, x), x >= 1, has 32 x bytes before it and reads
  // from input pixel (0, 2x - 1), at 32 x - 16: a lag of 16 (later rows fall further behind).
  p.filter = {32, 3, 3, 16};
  p.geometry.stride_h = p.geometry.stride_w = 2;
  p.output = quantized_conv2d_output_dims(p);
  ASSERT_EQ(p.output.h, 16);
  EXPECT_EQ(quantized_conv2d_in_place_lag(p), 16);
}

// Every window runs in place but a strided 1x1 one (its kernels read rows in place between
// stores) or one of several groups (each group rereads the whole input).
TEST(QuantizedConv2d, InPlaceLagIsMinusOneForOtherConvs) {
  Conv2dParams p;
  p.input = {1, 6, 6, 8};
  p.filter = {8, 1, 1, 8};
  p.output = quantized_conv2d_output_dims(p);
  ASSERT_GE(quantized_conv2d_in_place_lag(p), 0);
  Conv2dParams strided = p;
  strided.geometry.stride_w = 2;
  strided.output = quantized_conv2d_output_dims(strided);
  EXPECT_EQ(quantized_conv2d_in_place_lag(strided), -1);
  Conv2dParams padded = p;
  padded.geometry.padding = {0, 1, 0, 1};
  padded.output = quantized_conv2d_output_dims(padded);
  EXPECT_GE(quantized_conv2d_in_place_lag(padded), 0);  // gathered as a window
  Conv2dParams grouped = p;
  grouped.filter = {8, 1, 1, 4};
  EXPECT_EQ(quantized_conv2d_in_place_lag(grouped), -1);
  Conv2dParams window = p;
  window.filter = {8, 3, 3, 4};
  window.output = quantized_conv2d_output_dims(window);
  EXPECT_EQ(quantized_conv2d_in_place_lag(window), -1);
}

TEST(QuantizedConv2d, DepthwiseAsGroups) {
  Conv2dTester().channels(5, 10).groups(5).kernel(3, 3).stride(1, 1).dilation(1, 1)
      .padding(1, 1, 1, 1).seed(15).Test();
}
TEST(QuantizedConv2d, KernelLargerThanInput) {
  Conv2dTester().input_size(2, 3).kernel(4, 5).stride(1, 1).dilation(1, 1).padding(2, 2, 1, 3)
      .seed(16).Test();
}
TEST(QuantizedConv2d, LongColumns) {
  Conv2dTester().batch(1).input_size(7, 6).channels(67, 19).groups(1).kernel(5, 5).stride(1, 1)
      .dilation(1, 1).padding(2, 2, 2, 2).seed(17).Test();
}
TEST(QuantizedConv2d, MobileNetV2FirstConv) {
  Conv2dTester().batch(1).input_size(32, 32).channels(3, 32).groups(1).kernel(3, 3).stride(2, 2)
      .dilation(1, 1).padding(0, 0, 1, 1).zero_points(-1, -128).activation(-128, 127).seed(18)
      .Test();
}
TEST(QuantizedConv2d, DsCnnFirstConv) {
  Conv2dTester().batch(1).input_size(49, 10).channels(1, 64).groups(1).kernel(10, 4)
      .stride(2, 2).dilation(1, 1).padding(4, 1, 5, 2).zero_points(-20, -128).seed(19).Test();
}

// requantize gives 2^31 - 5 here; adding the output offset wraps as the target's 32-bit add does.
TEST(QuantizedConv2d, OutputOffsetAddWrapsLikeTheTarget) {
  const int8_t input[2] = {-7, -7};  // at the zero point: every tap contributes 0
  const int8_t filter[1] = {100};
  const int32_t bias = INT32_MAX - 3, multiplier = INT32_MAX, shift = 0;
  Conv2dParams p;
  p.input = {1, 1, 2, 1};
  p.filter = {1, 1, 1, 1};
  p.output = {1, 1, 2, 1};
  p.quant.input_offset = 7;
  p.quant.output_offset = 100;
  p.quant.multipliers = &multiplier;
  p.quant.shifts = &shift;
  ASSERT_TRUE(quantized_conv2d_prepare(p).ok());
  EXPECT_EQ(requantize(bias, multiplier, shift), INT32_MAX - 4);
  int8_t fast[2] = {0, 0}, ref[2] = {0, 0};
  std::vector<uint8_t> scratch(quantized_conv2d_scratch_size(p, Isa::kScalar));
  quantized_conv2d(p, input, filter, &bias, fast, scratch.data());
  quantized_conv2d_reference(p, input, filter, &bias, ref);
  EXPECT_EQ(fast[0], -128);
  EXPECT_EQ(fast[1], -128);
  EXPECT_EQ(ref[0], -128);
  EXPECT_EQ(ref[1], -128);
}

TEST(QuantizedConv2d, RandomizedAwkwardCases) {
  testing::RandomData rng(2024);
  for (int i = 0; i < 300; ++i) {
    const int32_t groups = rng.uniform(1, 3);
    Conv2dTester t;
    t.batch(rng.uniform(1, 2))
        .input_size(rng.uniform(1, 9), rng.uniform(1, 9))
        .groups(groups)
        .channels(groups * rng.uniform(1, 5), groups * rng.uniform(1, 5))
        .kernel(rng.uniform(1, 4), rng.uniform(1, 4))
        .stride(rng.uniform(1, 3), rng.uniform(1, 3))
        .dilation(rng.uniform(1, 3), rng.uniform(1, 3))
        .padding(rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3))
        .zero_points(rng.uniform(-128, 127), rng.uniform(-128, 127))
        .quant(rng.uniform(0, 1) ? QuantMode::kExtreme : QuantMode::kRealistic)
        .bias(BiasMode(rng.uniform(0, 2)))
        .seed(uint32_t(i));
    if (i % 4 == 0) t.kernel(1, 1).padding(0, 0, 0, 0);  // the pointwise path
    const int32_t lo = rng.uniform(-128, 60);
    t.activation(lo, rng.uniform(lo, 127));
    if (t.output_h() < 1 || t.output_w() < 1) t.padding(3, 3, 3, 3).dilation(1, 1);
    if (t.output_h() < 1 || t.output_w() < 1) t.input_size(9, 9);
    t.Test();
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Channel counts of real layers, where the MVE variant's folded-bias paths split the work: rows of
// 17-64 taps (a pixel's column in 2-4 registers, its last chunk the 16 bytes that end it, output
// channels 4 at a time and 1-3 left), longer rows (2 pixels x 3 channels, 32 taps per loop
// iteration, 1-31 taps left predicated; channel counts leaving 0, 1, 2 or 4; an odd last pixel),
// windows inside the image gathered a kernel row at a time, windows over the padding, stride 2,
// dilation. Each case runs with the bias unfolded and folded (Conv2dTester::Test).
TEST(QuantizedConv2d, RandomizedRealChannelCounts) {
  testing::RandomData rng(31);
  const int32_t pointwise_in[] = {17, 24, 31, 32, 33, 40, 47, 48, 49, 63, 64, 65, 80, 96, 127, 128, 129, 144, 161};
  const int32_t window_in[] = {1, 2, 3, 5, 7, 8, 16};
  const int32_t outs[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 13, 16, 17};
  for (int i = 0; i < 120; ++i) {
    Conv2dTester t;
    const int32_t out_c = outs[rng.uniform(0, 11)];
    t.batch(rng.uniform(1, 2)).groups(1).input_size(rng.uniform(1, 6), rng.uniform(1, 7));
    if (i % 2 == 0) {
      t.channels(pointwise_in[rng.uniform(0, 18)], out_c).kernel(1, 1).padding(0, 0, 0, 0);
      t.stride(rng.uniform(1, 2), rng.uniform(1, 2)).dilation(1, 1);
    } else {
      t.channels(window_in[rng.uniform(0, 6)], out_c).kernel(rng.uniform(1, 3), rng.uniform(2, 4));
      t.stride(rng.uniform(1, 2), rng.uniform(1, 2));
      t.dilation(i % 5 == 1 ? 2 : 1, i % 7 == 1 ? 2 : 1);
      t.padding(rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0, 1));
    }
    t.zero_points(rng.uniform(-128, 127), rng.uniform(-128, 127))
        .quant(i % 3 == 0 ? QuantMode::kExtreme : QuantMode::kRealistic)
        .bias(BiasMode(rng.uniform(0, 2)))
        .seed(uint32_t(1000 + i));
    const int32_t lo = rng.uniform(-128, 60);
    t.activation(lo, rng.uniform(lo, 127));
    if (t.output_h() < 1 || t.output_w() < 1) t.input_size(7, 7).dilation(1, 1);
    t.Test();
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Full-range biases: accumulators and folded biases wrap modulo 2^32; the folded kernel must wrap
// exactly as the reference's bias + sum (x + input_offset) * w does, with padding on all sides.
TEST(QuantizedConv2d, FoldedBiasWrapsLikeTheReference) {
  testing::RandomData rng(99);
  for (int i = 0; i < 60; ++i) {
    const int32_t offsets[] = {128, -127, 0, rng.uniform(-127, 128)};
    const int32_t groups = rng.uniform(1, 3);
    const int32_t group_c = rng.uniform(1, 17);
    const int32_t out_c = groups * rng.uniform(1, 6);
    Conv2dParams p;
    p.input = {rng.uniform(1, 2), rng.uniform(1, 8), rng.uniform(1, 8), groups * group_c};
    p.filter = {out_c, rng.uniform(1, 5), rng.uniform(1, 5), group_c};
    p.geometry.stride_h = rng.uniform(1, 2);
    p.geometry.stride_w = rng.uniform(1, 2);
    p.geometry.padding = {rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3), rng.uniform(0, 3)};
    p.output = quantized_conv2d_output_dims(p);
    if (p.output.h < 1 || p.output.w < 1) continue;
    p.quant.input_offset = offsets[i % 4];
    p.quant.output_offset = rng.uniform(-128, 127);
    std::vector<int32_t> multipliers(out_c), shifts(out_c), bias(out_c);
    for (int32_t oc = 0; oc < out_c; ++oc) {
      multipliers[oc] = rng.multiplier();
      shifts[oc] = rng.uniform(-31, 30);
      bias[oc] = static_cast<int32_t>(static_cast<uint32_t>(rng.uniform(INT32_MIN, INT32_MAX)));
    }
    p.quant.multipliers = multipliers.data();
    p.quant.shifts = shifts.data();
    ASSERT_TRUE(quantized_conv2d_prepare(p).ok());
    // Extreme weights and inputs so the sums themselves come near or past 2^31.
    const auto input = rng.int8s(size_t(p.input.elements()), -128, i % 2 ? 127 : -128);
    const auto filter = rng.int8s(size_t(p.filter.elements()), i % 3 ? -128 : 127, 127);
    std::vector<int32_t> folded(out_c);
    quantized_conv2d_fold_bias(p, filter.data(), bias.data(), folded.data());
    const size_t outputs = size_t(p.output.elements());
    std::vector<int8_t> ref(outputs), fast(outputs);
    quantized_conv2d_reference(p, input.data(), filter.data(), bias.data(), ref.data());
    Conv2dParams pf = p;
    pf.bias_includes_input_offset = true;
    std::vector<uint8_t> scratch(quantized_conv2d_scratch_size(pf, Isa::kScalar));
    quantized_conv2d(pf, input.data(), filter.data(), folded.data(), fast.data(), scratch.data());
    ASSERT_EQ(fast, ref) << "case " << i << " input_offset " << p.quant.input_offset;
  }
}

class Conv2dPrepare : public ::testing::Test {
 protected:
  void SetUp() override {
    p = Conv2dParams();
    for (int i = 0; i < 4; ++i) multipliers[i] = 1 << 30;
    shifts[2] = 2;
    p.input = {1, 5, 5, 6};
    p.filter = {4, 3, 3, 3};
    p.output = {1, 3, 3, 4};
    p.quant.multipliers = multipliers;
    p.quant.shifts = shifts;
    ASSERT_TRUE(quantized_conv2d_prepare(p).ok());
  }
  void ExpectError(const char* argument, int64_t value, int64_t index = -1) {
    const Error e = quantized_conv2d_prepare(p);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
    EXPECT_EQ(e.index, index);
  }
  Conv2dParams p;
  int32_t multipliers[4] = {};
  int32_t shifts[4] = {0, -3, 2, 30};
};

TEST_F(Conv2dPrepare, RejectsChannelsNotDividingInput) {
  p.filter.c = 4;
  ExpectError("weight.shape[3]", 4);
}
TEST_F(Conv2dPrepare, RejectsOutputChannelsNotMultipleOfGroups) {
  p.input.c = 9;  // 3 groups, 4 output channels
  ExpectError("weight.shape[0]", 4);
}
TEST_F(Conv2dPrepare, RejectsEmptyFilter) {
  p.filter.n = 0;
  ExpectError("weight.shape[0]", 0);
  SetUp();
  p.filter.c = 0;
  ExpectError("weight.shape[3]", 0);
}
TEST_F(Conv2dPrepare, RejectsBadShift) {
  shifts[2] = 31;
  ExpectError("requantize_shifts", 31, 2);
  shifts[2] = -32;
  ExpectError("requantize_shifts", -32, 2);
}
TEST_F(Conv2dPrepare, RejectsNegativeMultiplier) {
  multipliers[3] = -1;
  ExpectError("requantize_multipliers", -1, 3);
}
TEST_F(Conv2dPrepare, RejectsBadActivationAndOffsets) {
  p.quant.activation_min = 10;
  p.quant.activation_max = 9;
  ExpectError("activation_min", 10);
  SetUp();
  p.quant.input_offset = -128;
  ExpectError("input_offset", -128);
  SetUp();
  p.quant.output_offset = 128;
  ExpectError("output_offset", 128);
}
TEST_F(Conv2dPrepare, RejectsBadGeometry) {
  p.geometry.stride_w = 0;
  ExpectError("stride", 0, 1);
  SetUp();
  p.geometry.padding.bottom = -1;
  ExpectError("padding", -1, 2);
  SetUp();
  p.geometry.dilation_h = 3;  // dilated kernel 7 > 5
  ExpectError("input.shape[1]", 5);
}
TEST_F(Conv2dPrepare, RejectsPaddingBeyondInt32) {
  p.geometry.padding.bottom = INT32_MAX - 3;  // 5 + 0 + bottom >= 2^31
  ExpectError("padding", INT32_MAX - 3, 2);
  SetUp();
  p.geometry.padding = {0, INT32_MAX / 2, 0, INT32_MAX / 2 + 1};
  ExpectError("padding", INT32_MAX / 2 + 1, 3);
}
TEST_F(Conv2dPrepare, RejectsWrongOutputDims) {
  p.output.w = 4;
  ExpectError("output.shape[2]", 4);
}

TEST(QuantizedConv2d, ScratchSize) {
  Conv2dParams p;
  p.input = {1, 8, 8, 16};
  p.filter = {8, 3, 3, 16};
  EXPECT_EQ(quantized_conv2d_scratch_size(p, Isa::kScalar), 4u * 3 * 3 * 16 * sizeof(int16_t));
  p.filter = {8, 1, 1, 16};
  EXPECT_EQ(quantized_conv2d_scratch_size(p, Isa::kScalar), 0u);  // read in place
  p.geometry.padding = Padding2d{0, 0, 0, 1};
  EXPECT_EQ(quantized_conv2d_scratch_size(p, Isa::kScalar), 4u * 16 * sizeof(int16_t));
}

}  // namespace
}  // namespace cortexm
