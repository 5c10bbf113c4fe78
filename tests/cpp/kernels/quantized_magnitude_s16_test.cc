#include "cortexm/kernels/quantized_magnitude_s16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

// r == round(sqrt(n)) exactly: (r - 1/2)^2 < n < (r + 1/2)^2, i.e. 4r^2 - 4r + 1 <= 4n <= 4r^2 + 4r.
// n <= 2^61 and r < 2^31: every term fits uint64.
bool is_rounded_sqrt(uint64_t n, uint64_t r) {
  const uint64_t four_n = n * 4;
  const uint64_t r2 = r * r * 4;
  return (r == 0 || four_n >= r2 - 4 * r + 1) && four_n <= r2 + 4 * r;
}

TEST(RoundedSqrt, ExactOnEdgesAndRandomValues) {
  const uint64_t max_input = uint64_t{1} << 61;  // (2 * 2^30) << 30
  std::vector<uint64_t> values = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, max_input, max_input - 1};
  for (uint64_t r = 1; r < 70000; r += 997) {
    for (int64_t d = -2; d <= 2; ++d) {
      values.push_back(r * r + d);
      values.push_back(r * r + r + d);  // around (r + 1/2)^2
    }
  }
  for (uint64_t r : {uint64_t{1} << 30, (uint64_t{1} << 30) + 12345, uint64_t{1518500249}}) {
    for (int64_t d = -2; d <= 2; ++d) {
      values.push_back(r * r + d);
      values.push_back(r * r + r + d);
    }
  }
  testing::RandomData rng(3);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = (uint64_t(uint32_t(rng.uniform(INT32_MIN, INT32_MAX))) << 32) |
                       uint32_t(rng.uniform(INT32_MIN, INT32_MAX));
    values.push_back(v >> rng.uniform(3, 63));
  }
  for (uint64_t n : values) {
    if (n > max_input) continue;
    ASSERT_TRUE(is_rounded_sqrt(n, rounded_sqrt(n))) << n << " -> " << rounded_sqrt(n);
  }
}

struct MagnitudeCase {
  double in_scale, out_scale;
  int32_t zero_point, act_min, act_max;
  bool int8_output;
};

template <typename Out>
void check(const MagnitudeCase& c, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "scales " << c.in_scale << " -> " << c.out_scale << " zp "
                                    << c.zero_point << " act [" << c.act_min << ", " << c.act_max
                                    << "] int8 " << c.int8_output << " seed " << seed);
  testing::RandomData rng(seed);
  const int64_t size = 4099;  // odd, and more than a few blocks of anything
  std::vector<int16_t> real(size), imag(size);
  for (int64_t i = 0; i < size; ++i) {
    // Every fourth element at the extremes, some near zero, the rest anywhere.
    const int32_t kind = i % 4;
    real[i] = int16_t(kind == 0 ? (rng.uniform(0, 1) ? -32768 : 32767)
                                : kind == 1 ? rng.uniform(-40, 40) : rng.uniform(-32768, 32767));
    imag[i] = int16_t(kind == 0 ? (rng.uniform(0, 1) ? -32768 : 32767)
                                : kind == 1 ? rng.uniform(-40, 40) : rng.uniform(-32768, 32767));
  }
  real[0] = imag[0] = 0;
  real[1] = imag[1] = -32768;
  const auto q = quantize_multiplier(c.in_scale / (c.out_scale * (1 << kMagnitudeFractionBits)));
  MagnitudeParams p;
  p.size = size;
  p.int8_output = c.int8_output;
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  p.output_offset = c.zero_point;
  p.activation_min = c.act_min;
  p.activation_max = c.act_max;
  const Error error = quantized_magnitude_s16_prepare(p);
  ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;

  std::vector<Out> fast(size + 8, Out(0x5A)), ref(size);
  quantized_magnitude_s16(p, real.data(), imag.data(), fast.data());
  quantized_magnitude_s16_reference(p, real.data(), imag.data(), ref.data());
  for (int64_t i = size; i < size + 8; ++i) ASSERT_EQ(fast[i], Out(0x5A)) << "output overrun";
  int64_t inside = 0;
  for (int64_t i = 0; i < size; ++i) {
    ASSERT_EQ(fast[i], ref[i]) << "element " << i;
    // Plain float: |z| * s_in / s_out + zp, clamped; the kernel is within 0.5 LSB plus the
    // root's 2^-16 * s_in / s_out and the multiplier's relative 2^-31.
    const double magnitude = std::sqrt(double(real[i]) * real[i] + double(imag[i]) * imag[i]);
    const double exact = magnitude * c.in_scale / c.out_scale + c.zero_point;
    const double want = exact < c.act_min ? c.act_min : (exact > c.act_max ? c.act_max : exact);
    ASSERT_LE(std::abs(want - ref[i]), 0.5 + c.in_scale / c.out_scale / 65536.0 + 1e-6)
        << "element " << i << ": " << real[i] << ", " << imag[i];
    if (exact > c.act_min && exact < c.act_max) ++inside;
  }
  EXPECT_GT(inside, size / 4);
}

TEST(QuantizedMagnitudeS16, Int16OutputAtSeveralScales) {
  // The quantizer's symmetric int16 magnitude: |z| <= sqrt(2) * 32768 * s_in.
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    check<int16_t>({1.0 / 32768, std::sqrt(2.0) / 32767, 0, -32768, 32767, false}, seed);
    check<int16_t>({0.0173, 0.0173 * 0.61, 0, -32768, 32767, false}, seed);  // clamps the top
    check<int16_t>({3e-5, 7e-4, -1234, -30000, 20000, false}, seed);
  }
}

TEST(QuantizedMagnitudeS16, Int8Output) {
  for (uint32_t seed = 1; seed <= 2; ++seed) {
    check<int8_t>({1.0 / 32768, std::sqrt(2.0) / 255, -128, -128, 127, true}, seed);
    check<int8_t>({0.002, 0.002 * 47000 / 255, -128, -128, 127, true}, seed);
    check<int8_t>({0.002, 0.9, 5, -100, 90, true}, seed);
  }
}

TEST(QuantizedMagnitudeS16, KnownValues) {
  // 3-4-5 triangles at unit scale: |z| exact; and 1, 1 -> sqrt(2) = 1.414 rounds to 1.
  const int16_t real[] = {3, -300, 0, 1, -32768, 2};
  const int16_t imag[] = {4, 400, -7, 1, 0, 1};  // |2 + i| = 2.236 -> 2
  const auto q = quantize_multiplier(1.0 / (1 << kMagnitudeFractionBits));
  MagnitudeParams p;
  p.size = 6;
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  int16_t out[6];
  quantized_magnitude_s16(p, real, imag, out);
  const int16_t want[] = {5, 500, 7, 1, 32767, 2};  // 32768 clamps to 32767
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

TEST(QuantizedMagnitudeS16, PrepareNamesTheBadArgument) {
  MagnitudeParams p;
  p.multiplier = 1 << 30;
  ASSERT_TRUE(quantized_magnitude_s16_prepare(p).ok());
  p.int8_output = true;
  EXPECT_STREQ(quantized_magnitude_s16_prepare(p).argument, "activation_min");
  p.activation_min = -128;
  p.activation_max = 127;
  ASSERT_TRUE(quantized_magnitude_s16_prepare(p).ok());
  p.output_offset = 128;
  EXPECT_STREQ(quantized_magnitude_s16_prepare(p).argument, "output_zero_point");
  p.output_offset = 0;
  p.shift = 31;
  EXPECT_STREQ(quantized_magnitude_s16_prepare(p).argument, "output_shift");
  p.shift = 0;
  p.multiplier = -1;
  EXPECT_STREQ(quantized_magnitude_s16_prepare(p).argument, "output_multiplier");
  p.multiplier = 0;
  p.size = -1;
  EXPECT_STREQ(quantized_magnitude_s16_prepare(p).argument, "input.numel");
}

}  // namespace
}  // namespace cortexm
