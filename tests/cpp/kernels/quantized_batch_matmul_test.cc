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

namespace cortexm {
namespace {

// quantized_batch_matmul_s16 against the test's own arithmetic: exact int64 dots, CMSIS-NN's
// reduced multiplier (multiplier / 2^16 rounded, capped at 2^15 - 1) and (dot * reduced) >> (14 -
// shift) rounded half up; and within one LSB of the real product at the output scale.
void check_s16(int32_t batch, int32_t m_rows, int32_t n_rows, int32_t k, double scale, int32_t lo,
               int32_t hi, int32_t x_lo, int32_t x_hi, uint32_t seed) {
  testing::RandomData rng(seed);
  std::vector<int16_t> lhs(size_t(batch) * m_rows * k), rhs(size_t(batch) * n_rows * k);
  for (int16_t& v : lhs) v = static_cast<int16_t>(rng.uniform(x_lo, x_hi));
  for (int16_t& v : rhs) v = static_cast<int16_t>(rng.uniform(x_lo, x_hi));
  const QuantizedMultiplier q = quantize_multiplier(scale);
  BatchMatmulParams p;
  p.batch = batch;
  p.lhs_rows = m_rows;
  p.rhs_rows = n_rows;
  p.cols = k;
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  p.activation_min = lo;
  p.activation_max = hi;
  ASSERT_TRUE(quantized_batch_matmul_s16_prepare(p).ok());
  const int64_t reduced = q.multiplier < 0x7FFF0000 ? (int64_t{q.multiplier} + 32768) / 65536 : 32767;
  std::vector<int16_t> want(size_t(batch) * m_rows * n_rows), fast(want.size()), ref(want.size());
  for (int32_t b = 0; b < batch; ++b)
    for (int32_t m = 0; m < m_rows; ++m)
      for (int32_t n = 0; n < n_rows; ++n) {
        int64_t dot = 0;
        for (int32_t i = 0; i < k; ++i)
          dot += int64_t{lhs[(size_t(b) * m_rows + m) * k + i]} * rhs[(size_t(b) * n_rows + n) * k + i];
        const int64_t scaled = (dot * reduced) >> (14 - q.shift);
        const int64_t v = (static_cast<int32_t>(scaled) + int64_t{1}) >> 1;
        const size_t e = (size_t(b) * m_rows + m) * n_rows + n;
        want[e] = static_cast<int16_t>(std::min<int64_t>(std::max<int64_t>(v, lo), hi));
        const double real = std::min(std::max(double(dot) * scale, double(lo)), double(hi));
        // A floor, a half-up rounding and the 16-bit multiplier's relative error (<= 2^-15).
        ASSERT_LE(std::abs(real - want[e]), 1.0 + std::abs(real) * 3.1e-5) << e;
      }
  quantized_batch_matmul_s16(p, lhs.data(), rhs.data(), fast.data());
  quantized_batch_matmul_s16_reference(p, lhs.data(), rhs.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
}

TEST(QuantizedBatchMatmulS16, AwkwardShapes) {
  check_s16(1, 1, 1, 1, 0.5, -32768, 32767, -32768, 32767, 1);
  check_s16(3, 5, 7, 13, 3e-6, -32768, 32767, -32768, 32767, 2);
  check_s16(2, 17, 3, 64, 1e-7, -100, 20000, -32768, 32767, 3);
}

// The widest dot at the extremes: 2^17 products of 2^30 reach 2^47 exactly.
TEST(QuantizedBatchMatmulS16, LargestDotAtTheExtremes) {
  check_s16(1, 1, 2, 1 << 17, 1.0 / (1 << 30), -32768, 32767, -32768, -32768, 4);
}

TEST(QuantizedBatchMatmulS16, RandomizedAwkwardCases) {
  testing::RandomData rng(9);
  for (int i = 0; i < 150; ++i) {
    const int32_t k = rng.uniform(1, 70);
    const int32_t lo = rng.uniform(-32768, 30000);
    const int32_t x_lo = rng.uniform(-32768, 32767);
    const double scale = std::ldexp(rng.uniform(1 << 20, (1 << 21) - 1) / double(1 << 21),
                                    rng.uniform(-30, -8));
    check_s16(rng.uniform(1, 3), rng.uniform(1, 9), rng.uniform(1, 9), k, scale, lo,
              rng.uniform(lo, 32767), x_lo, rng.uniform(x_lo, 32767), uint32_t(300 + i));
  }
}

TEST(QuantizedBatchMatmulS16, PrepareRejectsBadParams) {
  BatchMatmulParams p;
  p.multiplier = 1 << 30;
  p.activation_min = -32768;
  p.activation_max = 32767;
  EXPECT_TRUE(quantized_batch_matmul_s16_prepare(p).ok());
  BatchMatmulParams bad = p;
  bad.cols = (1 << 17) + 1;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "lhs.shape[2]");
  bad = p;
  bad.shift = 8;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "output_shift");
  bad = p;
  bad.lhs_offset = 1;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "lhs_offset");
  bad = p;
  bad.rhs_offset = -1;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "rhs_offset");
  bad = p;
  bad.output_offset = 3;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "output_offset");
  bad = p;
  bad.activation_min = -32769;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "activation_min");
  bad = p;
  bad.rhs_rows = 0;
  EXPECT_STREQ(quantized_batch_matmul_s16_prepare(bad).argument, "rhs.shape[1]");
}

}  // namespace
}  // namespace cortexm
