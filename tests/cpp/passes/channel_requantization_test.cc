// convert::channel_requantization: the per-channel multipliers and bias that the conv, transposed
// conv, linear, 16x8 linear and 16x8 conv rewrites share.
#include "convert_test_util.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::testing {
namespace {

using convert::Accumulator;
using convert::channel_requantization;

ValueId float_bias(Graph& g, const std::vector<float>& values) {
  Tensor t(float_info({static_cast<int64_t>(values.size())}));
  std::copy(values.begin(), values.end(), t.data<float>());
  return g.add_constant("bias", t);
}

TEST(ChannelRequantization, Int32BiasAndOneMultiplierPerChannel) {
  Graph g;
  const ValueId b = float_bias(g, {1.0f, -2.0f});
  const convert::OutputTarget target;
  const auto r = channel_requantization(g, b, 0.1, {0.5, 0.25}, 0.2, 1.0, target, Accumulator::kInt32);
  ASSERT_EQ(r.multipliers.size(), 2u);
  for (size_t c = 0; c < 2; ++c) {
    const QuantizedMultiplier m = quantize_multiplier(0.1 * (c == 0 ? 0.5 : 0.25) * 1.0 / 0.2);
    EXPECT_EQ(r.multipliers[c], m.multiplier);
    EXPECT_EQ(r.shifts[c], m.shift);
  }
  ASSERT_EQ(r.bias.dtype(), DType::kInt32);
  EXPECT_EQ(r.bias.data<int32_t>()[0], 20);   // 1 / (0.1 * 0.5)
  EXPECT_EQ(r.bias.data<int32_t>()[1], -80);  // -2 / (0.1 * 0.25)
  ASSERT_TRUE(r.bias.info().qparams);
  EXPECT_EQ(r.bias.info().qparams->scales, (std::vector<double>{0.1 * 0.5, 0.1 * 0.25}));
}

// A fused hardsigmoid's scale goes into the multipliers (unless the output scale has it) and its
// offset into the bias, in accumulator units.
TEST(ChannelRequantization, TailScaleAndOffset) {
  Graph g;
  convert::OutputTarget target;
  target.scale = 1.0 / 6.0;
  target.offset = 0.5;
  const auto r = channel_requantization(g, kNoValue, 0.1, {0.5}, 0.2, target.scale, target,
                                        Accumulator::kInt32);
  EXPECT_EQ(r.multipliers[0], quantize_multiplier(0.1 * 0.5 * (1.0 / 6.0) / 0.2).multiplier);
  EXPECT_EQ(r.bias.data<int32_t>()[0], 60);  // 0.5 / (1/6 * 0.05)
  const auto wide = channel_requantization(g, kNoValue, 0.1, {0.5}, 0.2, 1.0, target, Accumulator::kInt64);
  EXPECT_EQ(wide.multipliers[0], quantize_multiplier(0.1 * 0.5 / 0.2).multiplier);
  ASSERT_EQ(wide.bias.dtype(), DType::kInt64);
  EXPECT_EQ(wide.bias.data<int64_t>()[0], 60);
}

TEST(ChannelRequantization, OneMultiplierForPerTensorWeights) {
  Graph g;
  const convert::OutputTarget target;
  const auto r = channel_requantization(g, kNoValue, 0.1, {0.5, 0.5, 0.5}, 0.2, 1.0, target,
                                        Accumulator::kInt64, /*one_multiplier=*/true);
  EXPECT_EQ(r.multipliers.size(), 1u);
  EXPECT_EQ(r.shifts.size(), 1u);
  EXPECT_EQ(r.bias.numel(), 3);
}

// The 16-bit kernels' bias limits: +-2^40 for 16x8, +-2^46 for 16x16.
TEST(ChannelRequantization, WideBiasLimits) {
  Graph g;
  const ValueId b = float_bias(g, {std::ldexp(1.0f, 42)});
  const convert::OutputTarget target;
  EXPECT_THROW(channel_requantization(g, b, 1.0, {1.0}, 1.0, 1.0, target, Accumulator::kInt64),
               convert::NotLowered);
  const auto r = channel_requantization(g, b, 1.0, {1.0}, 1.0, 1.0, target, Accumulator::kInt64W16);
  EXPECT_EQ(r.bias.data<int64_t>()[0], int64_t{1} << 42);
  EXPECT_THROW(channel_requantization(g, b, 1.0, {1.0}, 1.0, 1.0, target, Accumulator::kInt32),
               convert::NotLowered);
}

}  // namespace
}  // namespace cortexm::testing
