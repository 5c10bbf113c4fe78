#include "cortexm/kernels/quantized_linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0xA5;

// Builder with awkward defaults: batch > 1, odd K and C_out (not a multiple of the kernel's
// 4-row blocks), nonzero input, weight and output zero points, per-channel scales, bias.
class LinearTester {
 public:
  LinearTester& batches(int32_t n) { batches_ = n; return *this; }
  LinearTester& input_features(int32_t k) { k_ = k; return *this; }
  LinearTester& output_features(int32_t c) { c_ = c; return *this; }
  LinearTester& zero_points(int32_t input, int32_t weight, int32_t output) {
    zp_in_ = input; zp_w_ = weight; zp_out_ = output; return *this;
  }
  LinearTester& per_channel(bool on) { per_channel_ = on; return *this; }
  LinearTester& with_bias(bool on) { with_bias_ = on; return *this; }
  LinearTester& bias_range(int32_t lo, int32_t hi) { bias_lo_ = lo; bias_hi_ = hi; return *this; }
  LinearTester& input_range(int32_t lo, int32_t hi) { in_lo_ = lo; in_hi_ = hi; return *this; }
  LinearTester& weight_range(int32_t lo, int32_t hi) { w_lo_ = lo; w_hi_ = hi; return *this; }
  LinearTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  // Fixed requantization instead of one derived from scales; turns the float check off.
  LinearTester& requantize_with(int32_t multiplier, int32_t shift) {
    fixed_multiplier_ = multiplier; fixed_shift_ = shift; fixed_requantize_ = true; return *this;
  }
  LinearTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    const auto input = rng.int8s(size_t(batches_) * k_, in_lo_, in_hi_);
    const auto weights = rng.int8s(size_t(c_) * k_, w_lo_, w_hi_);
    const auto bias = rng.int32s(size_t(c_), bias_lo_, bias_hi_);

    // Scales: the output scale maps about +-3 standard deviations of the accumulator onto int8.
    const double input_scale = 0.0213;
    std::vector<double> weight_scales(size_t(c_), 0.0071);
    if (per_channel_)
      for (auto& s : weight_scales) s = rng.uniform(1000, 20000) * 1e-6;
    const double spread = std::sqrt(double(k_)) * 74.0 * 74.0 * 3.0 / 128.0;
    const double output_scale = input_scale * 0.0071 * (spread > 1.0 ? spread : 1.0);

    const int32_t num = per_channel_ ? c_ : 1;
    std::vector<int32_t> multipliers(static_cast<size_t>(num)), shifts(static_cast<size_t>(num));
    for (int32_t i = 0; i < num; ++i) {
      const auto q = quantize_multiplier(input_scale * weight_scales[size_t(i)] / output_scale);
      multipliers[size_t(i)] = fixed_requantize_ ? fixed_multiplier_ : q.multiplier;
      shifts[size_t(i)] = fixed_requantize_ ? fixed_shift_ : q.shift;
    }

    LinearParams p;
    p.batches = batches_;
    p.input_features = k_;
    p.output_features = c_;
    p.input_offset = -zp_in_;
    p.filter_offset = -zp_w_;
    p.output_offset = zp_out_;
    p.activation_min = act_min_;
    p.activation_max = act_max_;
    p.multipliers = multipliers.data();
    p.shifts = shifts.data();
    p.num_multipliers = num;
    ASSERT_TRUE(quantized_linear_prepare(p).ok());
    const int32_t* bias_data = with_bias_ ? bias.data() : nullptr;

    // Plain loops: a 64-bit sum wrapped to 32 bits at the end, as the target's accumulator wraps.
    const size_t n = size_t(batches_) * c_;
    std::vector<int8_t> expected(n);
    for (int32_t b = 0; b < batches_; ++b) {
      for (int32_t oc = 0; oc < c_; ++oc) {
        int64_t acc = with_bias_ ? bias[size_t(oc)] : 0;
        for (int32_t k = 0; k < k_; ++k) {
          acc += int64_t{input[size_t(b) * k_ + k] - zp_in_} *
                 (weights[size_t(oc) * k_ + k] - zp_w_);
        }
        const int32_t wrapped = static_cast<int32_t>(static_cast<uint32_t>(acc));
        const size_t m = per_channel_ ? size_t(oc) : 0;
        // requantize reaches -(2^31 - 1): the output offset wraps as the target's 32-bit add.
        int32_t o = wrapping_add(requantize(wrapped, multipliers[m], shifts[m]), zp_out_);
        o = o < act_min_ ? act_min_ : (o > act_max_ ? act_max_ : o);
        expected[size_t(b) * c_ + oc] = static_cast<int8_t>(o);
      }
    }

    const size_t scratch_size = quantized_linear_scratch_size(p, Isa::kScalar);
    std::vector<uint8_t> scratch(scratch_size + kGuardBytes, kGuardByte);
    std::vector<int8_t> fast(n), ref(n);
    quantized_linear(p, input.data(), weights.data(), bias_data, fast.data(), scratch.data());
    quantized_linear_reference(p, input.data(), weights.data(), bias_data, ref.data());
    ASSERT_EQ(ref, expected);
    ASSERT_EQ(fast, expected);
    for (size_t i = scratch_size; i < scratch.size(); ++i)
      ASSERT_EQ(scratch[i], kGuardByte) << "scratch overrun at byte " << i;

    // The folded contract: the bias holds input_offset * (sum w + K * filter_offset) already,
    // checked against 64-bit arithmetic wrapped once; the kernel's result must not change.
    std::vector<int32_t> folded(static_cast<size_t>(c_));
    quantized_linear_fold_bias(p, weights.data(), bias_data, folded.data());
    for (int32_t oc = 0; oc < c_; ++oc) {
      int64_t weight_sum = 0;
      for (int32_t k = 0; k < k_; ++k) weight_sum += weights[size_t(oc) * k_ + k];
      const int64_t want = (with_bias_ ? bias[size_t(oc)] : 0) - int64_t{zp_in_} * weight_sum +
                           int64_t{k_} * zp_in_ * zp_w_;
      ASSERT_EQ(folded[size_t(oc)], static_cast<int32_t>(static_cast<uint32_t>(want))) << "channel " << oc;
    }
    LinearParams pf = p;
    pf.bias_includes_input_offset = true;
    std::vector<int8_t> fast_folded(n);
    std::fill(scratch.begin(), scratch.end(), kGuardByte);
    quantized_linear(pf, input.data(), weights.data(), folded.data(), fast_folded.data(), scratch.data());
    ASSERT_EQ(fast_folded, expected) << "folded bias";
    for (size_t i = scratch_size; i < scratch.size(); ++i)
      ASSERT_EQ(scratch[i], kGuardByte) << "scratch overrun at byte " << i << " (folded)";

    if (fixed_requantize_) return;
    // Within 1 LSB of float math for nearly all elements.
    size_t far = 0;
    for (int32_t b = 0; b < batches_; ++b) {
      for (int32_t oc = 0; oc < c_; ++oc) {
        const double sw = weight_scales[per_channel_ ? size_t(oc) : 0];
        double real = with_bias_ ? bias[size_t(oc)] * input_scale * sw : 0.0;
        for (int32_t k = 0; k < k_; ++k) {
          real += input_scale * (input[size_t(b) * k_ + k] - zp_in_) * sw *
                  (weights[size_t(oc) * k_ + k] - zp_w_);
        }
        double q = real / output_scale + zp_out_;
        q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
        if (std::abs(q - expected[size_t(b) * c_ + oc]) > 1.0) ++far;
      }
    }
    EXPECT_LE(far, n / 100) << "of " << n;
  }

 private:
  int32_t batches_ = 3, k_ = 37, c_ = 13;
  int32_t zp_in_ = -7, zp_w_ = 3, zp_out_ = 5;
  bool per_channel_ = true, with_bias_ = true;
  int32_t bias_lo_ = -20000, bias_hi_ = 20000;
  int32_t in_lo_ = -128, in_hi_ = 127, w_lo_ = -128, w_hi_ = 127;
  int32_t act_min_ = -128, act_max_ = 127;
  bool fixed_requantize_ = false;
  int32_t fixed_multiplier_ = 0, fixed_shift_ = 0;
  uint32_t seed_ = 1;
};

TEST(QuantizedLinear, AwkwardDefaults) { LinearTester().Test(); }
TEST(QuantizedLinear, PerTensor) { LinearTester().per_channel(false).seed(2).Test(); }
TEST(QuantizedLinear, SymmetricWeights) { LinearTester().zero_points(-7, 0, 5).seed(3).Test(); }
TEST(QuantizedLinear, NoBias) { LinearTester().with_bias(false).seed(4).Test(); }
TEST(QuantizedLinear, SingleFeature) {
  LinearTester().input_features(1).output_features(1).batches(5).seed(5).Test();
}
TEST(QuantizedLinear, OutputFeaturesAroundBlockSize) {
  for (int32_t c = 1; c <= 9; ++c) LinearTester().output_features(c).seed(uint32_t(c)).Test();
}
TEST(QuantizedLinear, ExtremeZeroPoints) {
  LinearTester().zero_points(-128, 127, -128).seed(6).Test();
  LinearTester().zero_points(127, -128, 127).seed(7).Test();
}
TEST(QuantizedLinear, FusedReluRange) { LinearTester().activation(-20, 127).seed(8).Test(); }
TEST(QuantizedLinear, MobileNetV2Classifier) {
  LinearTester().batches(1).input_features(1280).output_features(1000).zero_points(-128, 0, -9)
      .seed(9).Test();
}
TEST(QuantizedLinear, DsCnnFinal) {
  LinearTester().batches(2).input_features(64).output_features(12).zero_points(-128, 0, 11)
      .seed(10).Test();
}

// Bias within (K * 255^2) of the int32 limits: the accumulator gets close to them but never over.
TEST(QuantizedLinear, BiasNearInt32Limits) {
  const int32_t k = 37, headroom = k * 255 * 255;
  LinearTester().input_features(k).bias_range(INT32_MAX - headroom, INT32_MAX - headroom)
      .requantize_with(1 << 30, -20).seed(11).Test();
  LinearTester().input_features(k).bias_range(INT32_MIN + headroom, INT32_MIN + headroom)
      .requantize_with(1 << 30, -20).seed(12).Test();
  LinearTester().input_features(k).bias_range(INT32_MIN + headroom, INT32_MAX - headroom)
      .requantize_with(1 << 30, -24).seed(13).Test();
}

// 40000 * 255 * 255 exceeds 2^31: the sum wraps mod 2^32 on the target and must wrap the same way
// here, across the kernel's 32768-feature chunks.
TEST(QuantizedLinear, AccumulatorWrapsAsOnTarget) {
  LinearTester().batches(2).input_features(40000).output_features(6).zero_points(-128, -128, 0)
      .input_range(127, 127).weight_range(127, 127).requantize_with(1 << 30, -16).seed(14).Test();
  LinearTester().batches(1).input_features(40000).output_features(5).zero_points(127, -128, 3)
      .input_range(-128, -128).weight_range(127, 127).requantize_with(INT32_MAX, -31).seed(15)
      .Test();
}

TEST(QuantizedLinear, ExtremeRequantization) {
  LinearTester().requantize_with(INT32_MAX, 30).seed(16).Test();
  LinearTester().requantize_with(INT32_MAX, -31).seed(17).Test();
  LinearTester().requantize_with(1, 30).seed(18).Test();
  LinearTester().requantize_with(0, 0).seed(19).Test();
  LinearTester().per_channel(false).requantize_with(1 << 30, 5).seed(20).Test();
  // acc = 2 (mod 4) requantizes to -(2^31 - 1) with these: a negative output offset wraps it
  // (to a positive value that clamps to activation_max) as the target's 32-bit add does.
  LinearTester().zero_points(-7, 3, -82).requantize_with(INT32_MAX, 30).seed(21).Test();
  LinearTester().zero_points(-128, -128, -128).requantize_with(INT32_MAX, 30).seed(22).Test();
}

TEST(QuantizedLinear, RandomizedAwkwardCases) {
  testing::RandomData rng(77);
  for (int i = 0; i < 300; ++i) {
    const int32_t lo = rng.uniform(-128, 100);
    LinearTester()
        .batches(rng.uniform(1, 4))
        .input_features(rng.uniform(1, 90))
        .output_features(rng.uniform(1, 21))
        .zero_points(rng.uniform(-128, 127), rng.uniform(0, 2) == 0 ? 0 : rng.uniform(-128, 127),
                     rng.uniform(-128, 127))
        .per_channel(rng.uniform(0, 1) == 1)
        .with_bias(rng.uniform(0, 3) != 0)
        .activation(lo, rng.uniform(lo, 127))
        .seed(uint32_t(1000 + i))
        .Test();
  }
}

LinearParams valid_params(const int32_t* multipliers, const int32_t* shifts) {
  LinearParams p;
  p.batches = 2;
  p.input_features = 8;
  p.output_features = 3;
  p.multipliers = multipliers;
  p.shifts = shifts;
  p.num_multipliers = 3;
  return p;
}

void expect_rejects(const LinearParams& p, const char* argument, int64_t value,
                    int64_t index = -1) {
  const Error e = quantized_linear_prepare(p);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, argument);
  EXPECT_EQ(e.value, value);
  EXPECT_EQ(e.index, index);
}

TEST(QuantizedLinear, PrepareRejectsBadParams) {
  const int32_t multipliers[] = {1 << 30, 1 << 30, 1 << 30};
  const int32_t shifts[] = {0, -3, 2};
  EXPECT_TRUE(quantized_linear_prepare(valid_params(multipliers, shifts)).ok());
  LinearParams p = valid_params(multipliers, shifts);
  p.num_multipliers = 1;
  EXPECT_TRUE(quantized_linear_prepare(p).ok());

  p = valid_params(multipliers, shifts); p.batches = 0; expect_rejects(p, "batches", 0);
  p = valid_params(multipliers, shifts); p.input_features = 0;
  expect_rejects(p, "input_features", 0);
  p = valid_params(multipliers, shifts); p.output_features = -1;
  expect_rejects(p, "output_features", -1);
  p = valid_params(multipliers, shifts); p.input_offset = -128;
  expect_rejects(p, "input_offset", -128);
  p = valid_params(multipliers, shifts); p.input_offset = 129;
  expect_rejects(p, "input_offset", 129);
  p = valid_params(multipliers, shifts); p.filter_offset = 129;
  expect_rejects(p, "filter_offset", 129);
  p = valid_params(multipliers, shifts); p.output_offset = 128;
  expect_rejects(p, "output_offset", 128);
  p = valid_params(multipliers, shifts); p.activation_min = -129;
  expect_rejects(p, "activation_min", -129);
  p = valid_params(multipliers, shifts); p.activation_max = 128;
  expect_rejects(p, "activation_max", 128);
  p = valid_params(multipliers, shifts); p.activation_min = 6; p.activation_max = 5;
  expect_rejects(p, "activation_min", 6);
  p = valid_params(multipliers, shifts); p.num_multipliers = 2;
  expect_rejects(p, "requantize_multipliers", 2);

  const int32_t negative[] = {1 << 30, -1, 1 << 30};
  p = valid_params(negative, shifts);
  expect_rejects(p, "requantize_multipliers", -1, 1);
  const int32_t big_shift[] = {0, 0, 31};
  p = valid_params(multipliers, big_shift);
  expect_rejects(p, "requantize_shifts", 31, 2);
  const int32_t small_shift[] = {-32, 0, 0};
  p = valid_params(multipliers, small_shift);
  expect_rejects(p, "requantize_shifts", -32, 0);
  p = valid_params(nullptr, shifts);
  EXPECT_FALSE(quantized_linear_prepare(p).ok());
}

TEST(QuantizedLinear, NeedsNoScratch) {  // every variant reads the int8 row in place
  const int32_t multipliers[] = {1 << 30, 1 << 30, 1 << 30};
  const int32_t shifts[] = {0, 0, 0};
  LinearParams p = valid_params(multipliers, shifts);
  p.input_features = 1280;
  for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve}) EXPECT_EQ(quantized_linear_scratch_size(p, isa), 0u);
}

}  // namespace
}  // namespace cortexm
