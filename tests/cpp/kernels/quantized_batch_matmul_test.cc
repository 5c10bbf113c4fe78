#include "cortexm/kernels/quantized_batch_matmul.h"

#include <gtest/gtest.h>

#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

void check(int32_t batch, int32_t m, int32_t n, int32_t k, int32_t zp_l, int32_t zp_r,
           int32_t zp_o, QuantizedMultiplier q, int32_t lo, int32_t hi, uint32_t seed) {
  testing::RandomData rng(seed);
  const auto lhs = rng.int8s(size_t(batch) * m * k);
  const auto rhs = rng.int8s(size_t(batch) * n * k);
  BatchMatmulParams p;
  p.batch = batch;
  p.lhs_rows = m;
  p.rhs_rows = n;
  p.cols = k;
  p.lhs_offset = -zp_l;
  p.rhs_offset = -zp_r;
  p.output_offset = zp_o;
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  p.activation_min = lo;
  p.activation_max = hi;
  ASSERT_TRUE(quantized_batch_matmul_prepare(p).ok());
  const size_t total = size_t(batch) * m * n;
  std::vector<int8_t> want(total), fast(total), ref(total);
  // The test's own loops: an int64 sum of centered products, then TFLite's requantize.
  for (int32_t b = 0; b < batch; ++b)
    for (int32_t i = 0; i < m; ++i)
      for (int32_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (int32_t t = 0; t < k; ++t)
          acc += int64_t(lhs[(size_t(b) * m + i) * k + t] - zp_l) *
                 (rhs[(size_t(b) * n + j) * k + t] - zp_r);
        const int32_t o = requantize(static_cast<int32_t>(acc), q.multiplier, q.shift) + zp_o;
        want[(size_t(b) * m + i) * n + j] = static_cast<int8_t>(std::min(std::max(o, lo), hi));
      }
  std::vector<int32_t> scratch(quantized_batch_matmul_scratch_size(p, Isa::kScalar) / 4);
  quantized_batch_matmul(p, lhs.data(), rhs.data(), fast.data(), scratch.data());
  quantized_batch_matmul_reference(p, lhs.data(), rhs.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
}

TEST(QuantizedBatchMatmul, AttentionShapes) {
  // q @ k^T: [B*H, T, d] x [B*H, T, d]; scores @ v^T-packed.
  check(4, 9, 9, 16, -3, 5, 2, quantize_multiplier(0.02 * 0.03 / 0.4), -128, 127, 1);
  check(4, 9, 16, 9, -128, 7, -50, quantize_multiplier(1.0 / 256 * 0.03 / 0.05), -128, 127, 2);
}

TEST(QuantizedBatchMatmul, OneByOne) {
  check(1, 1, 1, 1, 0, 0, 0, quantize_multiplier(0.5), -128, 127, 3);
  check(3, 1, 7, 1, 127, -128, 0, quantize_multiplier(0.001), -128, 127, 4);
}

TEST(QuantizedBatchMatmul, RandomizedAwkwardCases) {
  testing::RandomData rng(21);
  for (int i = 0; i < 150; ++i) {
    const int32_t k = rng.uniform(1, 70);
    const int32_t lo = rng.uniform(-128, 100);
    const double scale = rng.uniform(1, 5000) / 1e6;
    check(rng.uniform(1, 4), rng.uniform(1, 13), rng.uniform(1, 13), k, rng.uniform(-128, 127),
          rng.uniform(-128, 127), rng.uniform(-128, 127), quantize_multiplier(scale), lo,
          rng.uniform(lo, 127), uint32_t(i));
  }
}

TEST(QuantizedBatchMatmul, PrepareRejectsBadParams) {
  BatchMatmulParams p;
  EXPECT_TRUE(quantized_batch_matmul_prepare(p).ok());
  auto rejects = [](const BatchMatmulParams& bad, const char* argument, int64_t value) {
    const Error e = quantized_batch_matmul_prepare(bad);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    EXPECT_EQ(e.value, value);
  };
  BatchMatmulParams bad = p;
  bad.batch = 0;
  rejects(bad, "lhs.shape[0]", 0);
  bad = p;
  bad.cols = 65537;
  rejects(bad, "lhs.shape[2]", 65537);
  bad = p;
  bad.lhs_offset = -128;
  rejects(bad, "lhs_offset", -128);
  bad = p;
  bad.rhs_offset = 129;
  rejects(bad, "rhs_offset", 129);
  bad = p;
  bad.shift = -32;
  rejects(bad, "output_shift", -32);
}

}  // namespace
}  // namespace cortexm
