#include "cortexm/kernels/quantized_conv2d_s16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0xA5;

// round(acc * reduced * 2^(shift - 15)), halves up: arm_nn_requantize_s64 written as one rounding
// (floor((floor(x / 2^k) + 1) / 2) == floor((x + 2^k) / 2^(k + 1))). |acc| < 2^47 keeps the
// product within int64 (no 128-bit type on 32-bit targets). Returns int64: it may leave int32.
int64_t requantize_s64_exact(int64_t acc, int32_t multiplier, int32_t shift) {
  const int64_t reduced =
      multiplier >= 0x7FFF0000 ? 0x7FFF : (int64_t{multiplier} + 32768) / 65536;
  const int64_t product = acc * reduced;
  const int32_t k = 14 - shift;
  return (product + (int64_t{1} << k)) >> (k + 1);
}

// The same with the target's truncation of (acc * reduced) >> (14 - shift) to 32 bits, for sums
// whose doubled result leaves int32.
int32_t requantize_s64_wrapped(int64_t acc, int32_t multiplier, int32_t shift) {
  const int64_t reduced =
      multiplier >= 0x7FFF0000 ? 0x7FFF : (int64_t{multiplier} + 32768) / 65536;
  const int64_t product = acc * reduced;
  const auto doubled = static_cast<int32_t>(static_cast<uint32_t>(product >> (14 - shift)));
  const int64_t exact = requantize_s64_exact(acc, multiplier, shift);
  if (exact >= INT32_MIN / 2 && exact <= INT32_MAX / 2) return static_cast<int32_t>(exact);
  return static_cast<int32_t>((int64_t{doubled} + 1) >> 1);
}

enum class Quant { kRealistic, kExtreme };

struct Case {
  int32_t n = 2, h = 7, w = 9, in_c = 6, out_c = 9, groups = 3;
  int32_t kh = 3, kw = 2, sh = 2, sw = 1, dh = 1, dw = 2;
  Padding2d pad{1, 0, 2, 1};
  int32_t act_min = -32768, act_max = 32767;
  Quant quant = Quant::kRealistic;
  bool bias = true;
  bool extreme_data = false;  // every input -32768 or 32767, every weight -128 or 127
  uint32_t seed = 1;
};

std::string describe(const Case& c) {
  char s[320];
  std::snprintf(s, sizeof s,
                "n=%d hw=%dx%d c=%d->%d groups=%d k=%dx%d stride=%dx%d dilation=%dx%d "
                "pad=(%d,%d,%d,%d) act=[%d,%d] quant=%d bias=%d extreme=%d seed=%u",
                c.n, c.h, c.w, c.in_c, c.out_c, c.groups, c.kh, c.kw, c.sh, c.sw, c.dh, c.dw,
                c.pad.top, c.pad.left, c.pad.bottom, c.pad.right, c.act_min, c.act_max,
                int(c.quant), int(c.bias), int(c.extreme_data), c.seed);
  return s;
}

void run(const Case& c) {
  SCOPED_TRACE(describe(c));
  testing::RandomData rng(c.seed);
  const int32_t group_c = c.in_c / c.groups, out_per_group = c.out_c / c.groups;
  const int32_t taps = c.kh * c.kw * group_c;
  Conv2dS16Params p;
  p.input = {c.n, c.h, c.w, c.in_c};
  p.filter = {c.out_c, c.kh, c.kw, group_c};
  p.geometry.stride_h = c.sh;
  p.geometry.stride_w = c.sw;
  p.geometry.dilation_h = c.dh;
  p.geometry.dilation_w = c.dw;
  p.geometry.padding = c.pad;
  p.output = quantized_conv2d_s16_output_dims(p);
  const int32_t oh = p.output.h, ow = p.output.w;
  ASSERT_GE(oh, 1);
  ASSERT_GE(ow, 1);

  std::vector<int16_t> input(size_t(c.n) * c.h * c.w * c.in_c);
  std::vector<int8_t> filter(size_t(c.out_c) * taps);
  for (auto& x : input)
    x = int16_t(c.extreme_data ? (rng.uniform(0, 1) ? 32767 : -32768) : rng.uniform(-32768, 32767));
  for (auto& x : filter)
    x = int8_t(c.extreme_data ? (rng.uniform(0, 1) ? 127 : -128) : rng.uniform(-128, 127));

  std::vector<int32_t> multipliers(c.out_c), shifts(c.out_c);
  std::vector<int64_t> bias(c.out_c);
  for (int32_t oc = 0; oc < c.out_c; ++oc) {
    if (c.quant == Quant::kRealistic) {
      // Outputs of a few thousand LSB for sums of std 2^14 * 74 * sqrt(taps).
      const double scale = 3000.0 / (16384.0 * 74.0 * std::sqrt(double(taps))) * (1 + 0.3 * (oc % 3));
      const auto q = quantize_multiplier(scale);
      multipliers[oc] = q.multiplier;
      shifts[oc] = q.shift;
    } else {
      switch (oc % 6) {
        case 0: multipliers[oc] = rng.multiplier(); shifts[oc] = 7; break;
        case 1: multipliers[oc] = rng.multiplier(); shifts[oc] = -31; break;
        case 2: multipliers[oc] = INT32_MAX; shifts[oc] = rng.uniform(-31, 7); break;
        case 3: multipliers[oc] = rng.uniform(0, 1 << 15); shifts[oc] = rng.uniform(-31, 7); break;
        case 4: multipliers[oc] = 0x7FFF0000 - rng.uniform(0, 1); shifts[oc] = rng.uniform(-20, 0); break;
        default: multipliers[oc] = rng.uniform(0, INT32_MAX); shifts[oc] = rng.uniform(-31, 7);
      }
    }
    // About the sums' std (realistic) or 2^36 (extreme), inside arm_nn_requantize_s64's +-2^47.
    bias[oc] = int64_t{rng.uniform(-(1 << 26), 1 << 26)} * (c.quant == Quant::kExtreme ? 1024 : 1);
  }
  p.multipliers = multipliers.data();
  p.shifts = shifts.data();
  p.activation_min = c.act_min;
  p.activation_max = c.act_max;
  const Error error = quantized_conv2d_s16_prepare(p);
  ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;
  const int64_t* bias_data = c.bias ? bias.data() : nullptr;

  const size_t out_count = size_t(c.n) * oh * ow * c.out_c;
  std::vector<int16_t> expected(out_count);
  size_t inside = 0;
  for (int32_t n = 0; n < c.n; ++n)
    for (int32_t oy = 0; oy < oh; ++oy)
      for (int32_t ox = 0; ox < ow; ++ox)
        for (int32_t oc = 0; oc < c.out_c; ++oc) {
          int64_t sum = bias_data ? bias_data[oc] : 0;
          for (int32_t ky = 0; ky < c.kh; ++ky)
            for (int32_t kx = 0; kx < c.kw; ++kx) {
              const int32_t iy = oy * c.sh - c.pad.top + ky * c.dh;
              const int32_t ix = ox * c.sw - c.pad.left + kx * c.dw;
              if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
              for (int32_t ic = 0; ic < group_c; ++ic) {
                const int32_t channel = oc / out_per_group * group_c + ic;
                sum += int64_t{input[((size_t(n) * c.h + iy) * c.w + ix) * c.in_c + channel]} *
                       filter[((size_t(oc) * c.kh + ky) * c.kw + kx) * group_c + ic];
              }
            }
          ASSERT_LT(sum < 0 ? -sum : sum, int64_t{1} << 47);
          int64_t out = requantize_s64_wrapped(sum, multipliers[oc], shifts[oc]);
          if (out > c.act_min && out < c.act_max) ++inside;
          out = out < c.act_min ? c.act_min : (out > c.act_max ? c.act_max : out);
          expected[((size_t(n) * oh + oy) * ow + ox) * c.out_c + oc] = int16_t(out);
        }
  EXPECT_GT(inside, out_count / 10) << "the clamp decides nearly everything";

  const size_t scratch_size = quantized_conv2d_s16_scratch_size(p, kKernelIsa);
  std::vector<uint8_t> scratch(scratch_size + kGuardBytes);
  for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
  std::memset(scratch.data() + scratch_size, kGuardByte, kGuardBytes);
  std::vector<int16_t> fast(out_count + kGuardBytes / 2, int16_t(0x5A5A));
  quantized_conv2d_s16(p, input.data(), filter.data(), bias_data, fast.data(), scratch.data());
  for (size_t i = 0; i < kGuardBytes; ++i)
    ASSERT_EQ(scratch[scratch_size + i], kGuardByte) << "scratch overrun at +" << i;
  for (size_t i = out_count; i < fast.size(); ++i)
    ASSERT_EQ(fast[i], int16_t(0x5A5A)) << "output overrun at " << i;
  std::vector<int16_t> ref(out_count);
  quantized_conv2d_s16_reference(p, input.data(), filter.data(), bias_data, ref.data());
  for (size_t e = 0; e < out_count; ++e) {
    ASSERT_EQ(ref[e], expected[e]) << "reference differs at element " << e;
    ASSERT_EQ(fast[e], expected[e]) << "optimized differs at element " << e;
  }
}

TEST(QuantizedConv2dS16, AwkwardGroupedDilatedPadded) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    Case c;
    c.seed = seed;
    run(c);
  }
}

TEST(QuantizedConv2dS16, SileroStft) {
  // Conv1d(1, 258, 256, stride 128) on 640 samples, as H = 1.
  Case c;
  c.n = 1; c.h = 1; c.w = 640; c.in_c = 1; c.out_c = 258; c.groups = 1;
  c.kh = 1; c.kw = 256; c.sh = 1; c.sw = 128; c.dh = 1; c.dw = 1; c.pad = {};
  c.bias = false;
  run(c);
}

TEST(QuantizedConv2dS16, SileroFirstEncoderConv) {
  Case c;
  c.n = 1; c.h = 1; c.w = 4; c.in_c = 129; c.out_c = 128; c.groups = 1;
  c.kh = 1; c.kw = 3; c.sh = 1; c.sw = 1; c.dh = 1; c.dw = 1; c.pad = {0, 1, 0, 1};
  run(c);
}

TEST(QuantizedConv2dS16, WindowsThatAreOneRunOfTheInput) {
  // 1-D windows and 1x1 filters (read in place where no padding touches them), with the padded
  // edge pixels gathered, channel counts that leave 1-3 rows after the passes of 4, and runs of
  // extreme values longer than one int32 block.
  Case one_d;
  one_d.n = 2; one_d.h = 1; one_d.w = 11; one_d.in_c = 100; one_d.out_c = 7; one_d.groups = 1;
  one_d.kh = 1; one_d.kw = 3; one_d.sh = 1; one_d.sw = 2; one_d.dh = 1; one_d.dw = 1;
  one_d.pad = {0, 1, 0, 2};
  one_d.extreme_data = true;
  run(one_d);
  Case pointwise = one_d;
  pointwise.h = 3; pointwise.w = 4; pointwise.in_c = 300; pointwise.out_c = 6;
  pointwise.kh = 1; pointwise.kw = 1; pointwise.sh = 2; pointwise.sw = 1;
  pointwise.pad = {1, 0, 0, 1};
  run(pointwise);
  Case grouped = pointwise;
  grouped.in_c = 12; grouped.out_c = 15; grouped.groups = 3; grouped.dh = 2; grouped.dw = 3;
  grouped.extreme_data = false;
  run(grouped);
}

TEST(QuantizedConv2dS16, LongColumnsOfExtremeValuesStayExact) {
  // 5 * 5 * 67 = 1675 taps of +-2^15 * +-2^7: several int32 blocks of the optimized kernel.
  Case c;
  c.n = 1; c.h = 6; c.w = 7; c.in_c = 67; c.out_c = 7; c.groups = 1;
  c.kh = 5; c.kw = 5; c.sh = 1; c.sw = 1; c.dh = 1; c.dw = 1; c.pad = {2, 2, 2, 2};
  c.extreme_data = true;
  c.quant = Quant::kExtreme;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    c.seed = seed;
    run(c);
  }
}

TEST(QuantizedConv2dS16, ExtremeQuantParamsNoBiasNarrowClamp) {
  Case c;
  c.quant = Quant::kExtreme;
  c.bias = false;
  c.act_min = -1000;
  c.act_max = 20000;
  c.out_c = 12;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    c.seed = seed;
    run(c);
  }
}

TEST(QuantizedConv2dS16, KernelBiggerThanInputAndDepthwiseGroups) {
  Case big;
  big.n = 1; big.h = 2; big.w = 3; big.in_c = 5; big.out_c = 7; big.groups = 1;
  big.kh = 4; big.kw = 5; big.sh = 1; big.sw = 1; big.dh = 1; big.dw = 1; big.pad = {2, 2, 1, 3};
  run(big);
  Case depthwise;
  depthwise.in_c = 5; depthwise.out_c = 10; depthwise.groups = 5;
  run(depthwise);
}

TEST(QuantizedConv2dS16, RequantizeS64MatchesCmsisFormula) {
  // Ties round up; the reduced multiplier rounds half up and saturates at 2^15 - 1.
  EXPECT_EQ(reduce_multiplier(0x7FFF0000 - 1), 0x7FFF);
  EXPECT_EQ(reduce_multiplier(0x7FFF0000), 0x7FFF);
  EXPECT_EQ(reduce_multiplier(INT32_MAX), 0x7FFF);
  EXPECT_EQ(reduce_multiplier((3 << 16) + (1 << 15)), 4);
  EXPECT_EQ(reduce_multiplier((3 << 16) + (1 << 15) - 1), 3);
  EXPECT_EQ(requantize_s64(3, 1 << 14, 0), 2);    // 1.5 -> 2
  EXPECT_EQ(requantize_s64(-3, 1 << 14, 0), -1);  // -1.5 -> -1
  EXPECT_EQ(requantize_s64(-5, 1 << 14, 0), -2);  // -2.5 -> -2
  testing::RandomData rng(7);
  for (int i = 0; i < 100000; ++i) {
    // A multiply by 2^k, not a left shift: shifting a negative value is undefined.
    const int64_t high = rng.uniform(INT32_MIN, INT32_MAX);
    const int32_t k = rng.uniform(0, 15);
    const int64_t acc = high * (int64_t{1} << k) + rng.uniform(-5, 5);
    const int32_t multiplier = rng.uniform(0, INT32_MAX);
    const int32_t shift = rng.uniform(-31, 7);
    const int64_t want = requantize_s64_exact(acc, multiplier, shift);
    if (want < INT32_MIN / 2 || want > INT32_MAX / 2) continue;  // the doubled value wraps
    ASSERT_EQ(requantize_s64(acc, reduce_multiplier(multiplier), shift), want)
        << acc << " " << multiplier << " " << shift;
  }
}

TEST(QuantizedConv2dS16, PrepareNamesTheBadArgument) {
  std::vector<int32_t> multipliers(4, 1 << 30), shifts(4, 0);
  Conv2dS16Params p;
  p.input = {1, 5, 5, 2};
  p.filter = {4, 3, 3, 2};
  p.multipliers = multipliers.data();
  p.shifts = shifts.data();
  p.output = quantized_conv2d_s16_output_dims(p);
  ASSERT_TRUE(quantized_conv2d_s16_prepare(p).ok());
  shifts[2] = 8;
  Error e = quantized_conv2d_s16_prepare(p);
  EXPECT_STREQ(e.argument, "requantize_shifts");
  EXPECT_EQ(e.index, 2);
  shifts[2] = 0;
  p.activation_min = -40000;
  EXPECT_STREQ(quantized_conv2d_s16_prepare(p).argument, "activation_min");
  p.activation_min = 100;
  p.activation_max = 99;
  EXPECT_STREQ(quantized_conv2d_s16_prepare(p).argument, "activation_min");
  p.activation_min = -32768;
  p.activation_max = 32767;
  p.filter.c = 3;
  EXPECT_STREQ(quantized_conv2d_s16_prepare(p).argument, "weight.shape[3]");
  p.filter.c = 2;
  p.output.w = 4;
  EXPECT_STREQ(quantized_conv2d_s16_prepare(p).argument, "output.shape[2]");
  p.output.w = 3;
  multipliers[1] = -1;
  EXPECT_STREQ(quantized_conv2d_s16_prepare(p).argument, "requantize_multipliers");
}

}  // namespace
}  // namespace cortexm
