#include "cortexm/kernels/quantized_linear_s16.h"

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

// CMSIS-NN's REDUCE_MULTIPLIER written out: round(multiplier / 2^16) halves up, at most 2^15 - 1.
int64_t reduced(int32_t multiplier) {
  return multiplier >= 0x7FFF0000 ? 0x7FFF : (int64_t{multiplier} + 32768) / 65536;
}

// acc * reduced * 2^(shift - 15) rounded half up as one rounding; when the doubled value leaves
// int32, the target's truncation of (acc * reduced) >> (14 - shift) to 32 bits and its 32-bit
// (+1) >> 1. |acc| < 2^47 keeps the product within int64.
int32_t expected_requantize(int64_t acc, int32_t multiplier, int32_t shift) {
  const int64_t product = acc * reduced(multiplier);
  const int32_t k = 14 - shift;
  const int64_t exact = (product + (int64_t{1} << k)) >> (k + 1);
  if (exact >= INT32_MIN / 2 && exact <= INT32_MAX / 2) return static_cast<int32_t>(exact);
  const uint32_t doubled = static_cast<uint32_t>(static_cast<uint64_t>(product >> k));
  return static_cast<int32_t>(doubled + 1u) >> 1;
}

enum class Quant { kRealistic, kExtreme };

struct Case {
  int32_t batches = 3, depth = 37, rows = 13;
  bool per_channel = true;
  Quant quant = Quant::kRealistic;
  bool bias = true;
  bool extreme_data = false;  // every input -32768 or 32767, every weight -128 or 127
  int32_t act_min = -32768, act_max = 32767;
  uint32_t seed = 1;
};

std::string describe(const Case& c) {
  char s[256];
  std::snprintf(s, sizeof s,
                "batches=%d depth=%d rows=%d per_channel=%d quant=%d bias=%d extreme=%d act=[%d,%d] "
                "seed=%u",
                c.batches, c.depth, c.rows, int(c.per_channel), int(c.quant), int(c.bias),
                int(c.extreme_data), c.act_min, c.act_max, c.seed);
  return s;
}

void run(const Case& c) {
  SCOPED_TRACE(describe(c));
  testing::RandomData rng(c.seed);
  std::vector<int16_t> input(size_t(c.batches) * c.depth);
  std::vector<int8_t> weights(size_t(c.rows) * c.depth);
  for (auto& x : input)
    x = int16_t(c.extreme_data ? (rng.uniform(0, 1) ? 32767 : -32768) : rng.uniform(-32768, 32767));
  for (auto& w : weights)
    w = int8_t(c.extreme_data ? (rng.uniform(0, 1) ? 127 : -128) : rng.uniform(-128, 127));

  const int32_t count = c.per_channel ? c.rows : 1;
  std::vector<int32_t> multipliers(count), shifts(count);
  for (int32_t i = 0; i < count; ++i) {
    if (c.quant == Quant::kRealistic) {
      // Outputs of a few thousand LSB for sums of std 2^14 * 74 * sqrt(depth).
      const double scale =
          3000.0 / (16384.0 * 74.0 * std::sqrt(double(c.depth))) * (1 + 0.3 * (i % 3));
      const QuantizedMultiplier q = quantize_multiplier(scale);
      multipliers[i] = q.multiplier;
      shifts[i] = q.shift;
    } else {
      switch ((i + c.seed) % 6) {
        case 0: multipliers[i] = rng.multiplier(); shifts[i] = 7; break;
        case 1: multipliers[i] = rng.multiplier(); shifts[i] = -31; break;
        case 2: multipliers[i] = INT32_MAX; shifts[i] = rng.uniform(-31, 7); break;
        case 3: multipliers[i] = rng.uniform(0, 1 << 15); shifts[i] = rng.uniform(-31, 7); break;
        case 4: multipliers[i] = 0x7FFF0000 - rng.uniform(0, 1); shifts[i] = rng.uniform(-20, 0); break;
        default: multipliers[i] = rng.uniform(0, INT32_MAX); shifts[i] = rng.uniform(-31, 7);
      }
    }
  }
  std::vector<int64_t> bias(c.rows);
  // About the sums' std (2^20 * sqrt(depth)), or up to 2^36 with extreme qparams (inside
  // arm_nn_requantize_s64's +-2^47).
  const int64_t bias_scale = c.quant == Quant::kExtreme
                                 ? int64_t{1} << 16
                                 : 1 + static_cast<int64_t>(std::sqrt(double(c.depth)));
  for (auto& b : bias) b = int64_t{rng.uniform(-(1 << 20), 1 << 20)} * bias_scale;

  LinearS16Params p;
  p.batches = c.batches;
  p.input_features = c.depth;
  p.output_features = c.rows;
  p.activation_min = c.act_min;
  p.activation_max = c.act_max;
  p.multipliers = multipliers.data();
  p.shifts = shifts.data();
  p.num_multipliers = count;
  const Error error = quantized_linear_s16_prepare(p);
  ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;
  const int64_t* bias_data = c.bias ? bias.data() : nullptr;

  const size_t out_count = size_t(c.batches) * c.rows;
  std::vector<int16_t> expected(out_count);
  size_t inside = 0;
  for (int32_t b = 0; b < c.batches; ++b)
    for (int32_t oc = 0; oc < c.rows; ++oc) {
      int64_t sum = bias_data ? bias_data[oc] : 0;
      for (int32_t k = 0; k < c.depth; ++k)
        sum += int64_t{input[size_t(b) * c.depth + k]} * weights[size_t(oc) * c.depth + k];
      ASSERT_LT(sum < 0 ? -sum : sum, int64_t{1} << 47);
      const int32_t m = c.per_channel ? oc : 0;
      int32_t out = expected_requantize(sum, multipliers[m], shifts[m]);
      if (out > c.act_min && out < c.act_max) ++inside;
      out = out < c.act_min ? c.act_min : (out > c.act_max ? c.act_max : out);
      expected[size_t(b) * c.rows + oc] = int16_t(out);
    }
  // Extreme qparams saturate most outputs by design; realistic ones must not.
  if (c.quant == Quant::kRealistic && out_count >= 10)
    EXPECT_GT(inside, out_count / 10) << "the clamp decides nearly everything";

  // Only the DSP variant copies the row; scalar and MVE read it in place.
  ASSERT_EQ(quantized_linear_s16_scratch_size(p, Isa::kScalar), 0u);
  ASSERT_EQ(quantized_linear_s16_scratch_size(p, Isa::kDsp), (size_t(c.depth) * 2 + 3) / 4 * 4);
  ASSERT_EQ(quantized_linear_s16_scratch_size(p, Isa::kMve), 0u);
  const size_t scratch_size = quantized_linear_s16_scratch_size(p, kKernelIsa);
  std::vector<uint8_t> scratch(scratch_size + kGuardBytes);
  for (size_t i = 0; i < scratch_size; ++i) scratch[i] = uint8_t(rng.uniform(0, 255));
  std::memset(scratch.data() + scratch_size, kGuardByte, kGuardBytes);
  std::vector<int16_t> fast(out_count + kGuardBytes / 2, int16_t(0x5A5A));
  quantized_linear_s16(p, input.data(), weights.data(), bias_data, fast.data(), scratch.data());
  for (size_t i = 0; i < kGuardBytes; ++i)
    ASSERT_EQ(scratch[scratch_size + i], kGuardByte) << "scratch overrun at +" << i;
  for (size_t i = out_count; i < fast.size(); ++i)
    ASSERT_EQ(fast[i], int16_t(0x5A5A)) << "output overrun at " << i;
  std::vector<int16_t> ref(out_count);
  quantized_linear_s16_reference(p, input.data(), weights.data(), bias_data, ref.data());
  for (size_t e = 0; e < out_count; ++e) {
    ASSERT_EQ(ref[e], expected[e]) << "reference differs at element " << e;
    ASSERT_EQ(fast[e], expected[e]) << "optimized differs at element " << e;
  }
}

TEST(QuantizedLinearS16, AwkwardRowsAndDepths) {
  uint32_t seed = 1;
  for (int32_t rows : {1, 3, 127})
    for (int32_t depth : {1, 5, 129, 512}) {
      Case c;
      c.rows = rows;
      c.depth = depth;
      c.batches = rows == 3 ? 1 : 3;
      c.per_channel = depth != 5;
      c.bias = depth != 129;
      c.seed = seed++;
      run(c);
    }
}

TEST(QuantizedLinearS16, SileroLstmShapes) {
  // The LSTM's input and hidden projections: [1, 128] x [512, 128]^T.
  Case c;
  c.batches = 1;
  c.depth = 128;
  c.rows = 512;
  run(c);
}

TEST(QuantizedLinearS16, ExtremeInputsAndWeightsStayExact) {
  // Up to 1031 products of +-2^15 * +-2^7: several int32 blocks of the optimized kernel.
  for (int32_t depth : {1, 5, 129, 512, 1031})
    for (uint32_t seed = 1; seed <= 2; ++seed) {
      Case c;
      c.depth = depth;
      c.rows = 7;
      c.extreme_data = true;
      c.seed = seed;
      run(c);
    }
}

TEST(QuantizedLinearS16, AllProductsAtTheLargestMagnitude) {
  // x = -32768, w = -128 everywhere: 512 products of 2^22 sum to 2^31, past int32.
  const int32_t depth = 512, rows = 3;
  std::vector<int16_t> input(depth, -32768);
  std::vector<int8_t> weights(size_t(rows) * depth, -128);
  std::vector<int32_t> multipliers = {1 << 30, 1 << 30, 1 << 30}, shifts = {-17, -16, -1};
  std::vector<int64_t> bias = {0, -(int64_t{1} << 31), 5};
  LinearS16Params p;
  p.input_features = depth;
  p.output_features = rows;
  p.multipliers = multipliers.data();
  p.shifts = shifts.data();
  p.num_multipliers = rows;
  ASSERT_TRUE(quantized_linear_s16_prepare(p).ok());
  std::vector<uint8_t> scratch(quantized_linear_s16_scratch_size(p, kKernelIsa));
  std::vector<int16_t> out(rows), ref(rows);
  quantized_linear_s16(p, input.data(), weights.data(), bias.data(), out.data(), scratch.data());
  quantized_linear_s16_reference(p, input.data(), weights.data(), bias.data(), ref.data());
  // 2^31 * 2^14 * 2^(-17 - 15) = 2^13; the bias cancels the sum; 2^29 clamps to 32767.
  EXPECT_EQ(out[0], 8192);
  EXPECT_EQ(out[1], 0);
  EXPECT_EQ(out[2], 32767);
  EXPECT_EQ(ref, out);
}

TEST(QuantizedLinearS16, ExtremeQuantParamsPerTensorAndPerChannel) {
  for (bool per_channel : {true, false})
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      Case c;
      c.quant = Quant::kExtreme;
      c.per_channel = per_channel;
      c.rows = 12;
      c.depth = 33;
      c.bias = seed % 2 == 0;
      c.seed = seed;
      run(c);
    }
}

TEST(QuantizedLinearS16, NarrowActivationRange) {
  Case c;
  c.act_min = 0;
  c.act_max = 20000;
  c.rows = 40;
  c.depth = 64;
  run(c);
  c.act_min = -1000;
  c.act_max = -1000;
  c.rows = 9;
  c.batches = 1;  // a single-value range clamps everything; 9 outputs skip the "inside" check
  run(c);
}

TEST(QuantizedLinearS16, PrepareNamesTheBadArgument) {
  std::vector<int32_t> multipliers(4, 1 << 30), shifts(4, 0);
  LinearS16Params p;
  p.input_features = 8;
  p.output_features = 4;
  p.multipliers = multipliers.data();
  p.shifts = shifts.data();
  p.num_multipliers = 4;
  ASSERT_TRUE(quantized_linear_s16_prepare(p).ok());
  shifts[2] = 8;
  Error e = quantized_linear_s16_prepare(p);
  EXPECT_STREQ(e.argument, "requantize_shifts");
  EXPECT_EQ(e.index, 2);
  EXPECT_EQ(e.value, 8);
  shifts[2] = -32;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "requantize_shifts");
  shifts[2] = 0;
  multipliers[1] = -1;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "requantize_multipliers");
  multipliers[1] = 1;
  p.num_multipliers = 3;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "requantize_multipliers");
  p.num_multipliers = 1;
  ASSERT_TRUE(quantized_linear_s16_prepare(p).ok());
  p.activation_min = -40000;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "activation_min");
  p.activation_min = 100;
  p.activation_max = 99;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "activation_min");
  p.activation_min = -32768;
  p.activation_max = 32768;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "activation_max");
  p.activation_max = 32767;
  p.input_features = 0;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "input_features");
  p.input_features = 8;
  p.batches = 0;
  EXPECT_STREQ(quantized_linear_s16_prepare(p).argument, "batches");
}

}  // namespace
}  // namespace cortexm
