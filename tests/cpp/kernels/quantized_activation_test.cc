#include "cortexm/kernels/quantized_activation.h"

#include <gtest/gtest.h>

#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

void check(size_t count, uint32_t seed) {
  testing::RandomData rng(seed);
  const std::vector<int8_t> table = rng.int8s(256);
  const std::vector<int8_t> in = rng.int8s(count);
  std::vector<int8_t> expected(count), fast(count), ref(count);
  for (size_t i = 0; i < count; ++i) {
    const int index = static_cast<uint8_t>(in[i]) ^ 0x80;  // -128 -> 0, 127 -> 255
    expected[i] = table[static_cast<size_t>(index)];
  }
  ActivationParams p;
  p.count = static_cast<int64_t>(count);
  p.table = table.data();
  ASSERT_TRUE(quantized_activation_prepare(p).ok());
  quantized_activation(p, in.data(), fast.data());
  quantized_activation_reference(p, in.data(), ref.data());
  ASSERT_EQ(ref, expected) << count;
  ASSERT_EQ(fast, expected) << count;
}

TEST(QuantizedActivation, LooksUpEveryElement) {
  for (size_t count : {0, 1, 3, 4, 5, 7, 256, 1001}) check(count, static_cast<uint32_t>(count) + 1);
}

TEST(QuantizedActivation, EveryInputCodeHitsItsEntry) {
  std::vector<int8_t> table(256), in(256), out(256);
  for (int i = 0; i < 256; ++i) table[size_t(i)] = static_cast<int8_t>(127 - i);
  for (int i = 0; i < 256; ++i) in[size_t(i)] = static_cast<int8_t>(i - 128);
  ActivationParams p;
  p.count = 256;
  p.table = table.data();
  quantized_activation(p, in.data(), out.data());
  for (int i = 0; i < 256; ++i) EXPECT_EQ(out[size_t(i)], 127 - i);
}

TEST(QuantizedActivation, PrepareRejectsBadParams) {
  ActivationParams p;
  EXPECT_STREQ(quantized_activation_prepare(p).argument, "table");
  const int8_t table[256] = {};
  p.table = table;
  p.count = -1;
  EXPECT_STREQ(quantized_activation_prepare(p).argument, "count");
}

}  // namespace
}  // namespace cortexm
