#include "cortexm/kernels/quantized_activation_s16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

// Plain loop: input x lies `position` / 128 of the way from entry `segment` to the next; the
// straight line between them at x, rounded half up (exact in double).
std::vector<int16_t> expected_outputs(const std::vector<int16_t>& table,
                                      const std::vector<int16_t>& input) {
  std::vector<int16_t> out;
  for (int16_t x : input) {
    const int segment = (x + 32768) / 128, position = (x + 32768) % 128;
    const double lo = table[size_t(segment)], hi = table[size_t(segment) + 1];
    out.push_back(static_cast<int16_t>(std::floor(lo + (hi - lo) * position / 128.0 + 0.5)));
  }
  return out;
}

std::vector<int16_t> every_input() {
  std::vector<int16_t> v;
  for (int32_t x = -32768; x <= 32767; ++x) v.push_back(static_cast<int16_t>(x));
  return v;
}

// Optimized and reference kernels against the plain loop, and nothing written past the output.
void check(const std::vector<int16_t>& table, const std::vector<int16_t>& input) {
  ASSERT_EQ(table.size(), size_t(kActivationS16TableSize));
  ActivationS16Params p;
  p.count = static_cast<int64_t>(input.size());
  p.table = table.data();
  ASSERT_TRUE(quantized_activation_s16_prepare(p).ok());
  const std::vector<int16_t> want = expected_outputs(table, input);
  std::vector<int16_t> fast(input.size() + 3, int16_t(0x5A5A)), ref(input.size());
  quantized_activation_s16(p, input.data(), fast.data());
  quantized_activation_s16_reference(p, input.data(), ref.data());
  for (size_t i = input.size(); i < fast.size(); ++i) ASSERT_EQ(fast[i], int16_t(0x5A5A));
  for (size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(ref[i], want[i]) << "reference, input " << input[i];
    ASSERT_EQ(fast[i], want[i]) << "optimized, input " << input[i];
  }
}

std::vector<int16_t> random_table(uint32_t seed, int32_t lo, int32_t hi) {
  testing::RandomData rng(seed);
  std::vector<int16_t> t(kActivationS16TableSize);
  for (auto& v : t) v = static_cast<int16_t>(rng.uniform(lo, hi));
  return t;
}

TEST(QuantizedActivationS16, EveryInputOfASmoothTable) {
  // tanh over [-4, 4) to the full output range, as a lowering builds it.
  std::vector<int16_t> t(kActivationS16TableSize);
  for (int i = 0; i < kActivationS16TableSize; ++i)
    t[size_t(i)] = static_cast<int16_t>(std::lround(32767.0 * std::tanh((i - 256) / 64.0)));
  check(t, every_input());
}

TEST(QuantizedActivationS16, EveryInputOfAwkwardTables) {
  check(random_table(1, -32768, 32767), every_input());  // neighbours up to 65535 apart
  check(random_table(2, -3, 3), every_input());           // slopes of a few LSB: rounding
  std::vector<int16_t> alternating(kActivationS16TableSize);
  for (size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 ? 32767 : -32768;
  check(alternating, every_input());
  check(std::vector<int16_t>(kActivationS16TableSize, -32768), every_input());
  std::vector<int16_t> ramp(kActivationS16TableSize);  // out = x below the last segment
  for (int i = 0; i < kActivationS16TableSize; ++i)
    ramp[size_t(i)] = static_cast<int16_t>(std::min(-32768 + 128 * i, 32767));
  check(ramp, every_input());
  ActivationS16Params p;
  p.count = 32640 + 32768;
  p.table = ramp.data();
  const std::vector<int16_t> in = every_input();
  std::vector<int16_t> out(size_t(p.count));
  quantized_activation_s16(p, in.data(), out.data());
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], in[i]);
}

TEST(QuantizedActivationS16, OddCountsAndRandomInputs) {
  testing::RandomData rng(7);
  const std::vector<int16_t> table = random_table(3, -32768, 32767);
  for (size_t count : {0, 1, 2, 3, 5, 1001}) {
    std::vector<int16_t> in(count);
    for (auto& v : in) v = static_cast<int16_t>(rng.uniform(-32768, 32767));
    check(table, in);
  }
}

TEST(QuantizedActivationS16, PrepareRejectsBadParams) {
  ActivationS16Params p;
  EXPECT_STREQ(quantized_activation_s16_prepare(p).argument, "table");
  const int16_t table[kActivationS16TableSize] = {};
  p.table = table;
  p.count = -1;
  EXPECT_STREQ(quantized_activation_s16_prepare(p).argument, "count");
}

}  // namespace
}  // namespace cortexm
