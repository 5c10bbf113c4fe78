#include "cortexm/kernels/requantize_s16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

struct Scales {
  double in_scale, out_scale;
  int32_t in_zero_point, out_zero_point, act_min, act_max;
};

// Every input value (all 2^16 or 2^8, then again in a long random tensor): optimized == reference,
// and within 0.5 LSB (+ the multiplier's 2^-30 relative error) of x * s_in / s_out + zp clamped.
template <typename In, typename Out>
void check(const Scales& s) {
  SCOPED_TRACE(::testing::Message() << "scales " << s.in_scale << " -> " << s.out_scale << " zp "
                                    << s.in_zero_point << " -> " << s.out_zero_point << " act ["
                                    << s.act_min << ", " << s.act_max << "]");
  constexpr bool int16_input = sizeof(In) == 2;
  RequantizeS16Params p;
  p.int16_input = int16_input;
  p.int16_output = sizeof(Out) == 2;
  const auto q = quantize_multiplier(s.in_scale / (s.out_scale * double(1 << p.left_shift())));
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  p.input_offset = -s.in_zero_point;
  p.output_offset = s.out_zero_point;
  p.activation_min = s.act_min;
  p.activation_max = s.act_max;
  const int32_t lo = int16_input ? -32768 : -128, hi = int16_input ? 32767 : 127;
  std::vector<In> input;
  for (int32_t x = lo; x <= hi; ++x) input.push_back(In(x));
  testing::RandomData rng(5);
  for (int i = 0; i < 3000; ++i) input.push_back(In(rng.uniform(lo, hi)));
  p.size = int64_t(input.size());
  const Error error = requantize_s16_prepare(p);
  ASSERT_TRUE(error.ok()) << error.argument << " = " << error.value << " " << error.requirement;
  std::vector<Out> fast(input.size() + 4, Out(0x5A)), ref(input.size());
  requantize_s16(p, input.data(), fast.data());
  requantize_s16_reference(p, input.data(), ref.data());
  for (size_t i = input.size(); i < fast.size(); ++i) ASSERT_EQ(fast[i], Out(0x5A));
  int64_t inside = 0;
  for (size_t i = 0; i < input.size(); ++i) {
    ASSERT_EQ(fast[i], ref[i]) << "element " << i;
    const double exact = (input[i] - s.in_zero_point) * s.in_scale / s.out_scale + s.out_zero_point;
    const double want = exact < s.act_min ? s.act_min : (exact > s.act_max ? s.act_max : exact);
    ASSERT_LE(std::abs(want - ref[i]), 0.5 + std::abs(exact) * 1e-9 + 1e-9)
        << "input " << int(input[i]) << " gives " << int(ref[i]) << ", float " << exact;
    if (exact > s.act_min && exact < s.act_max) ++inside;
  }
  EXPECT_GT(inside, p.size / 4);
}

TEST(RequantizeS16, Int16ToInt8) {
  check<int16_t, int8_t>({1.0 / 32768, 1.0 / 127, 0, 0, -128, 127});
  check<int16_t, int8_t>({3.3e-4, 2.7e-2, 0, -128, -128, 127});  // relu-like output range
  check<int16_t, int8_t>({1e-5, 9.1e-4, 0, 17, -100, 101});
  check<int16_t, int8_t>({2e-5, 2e-5 * 300, 0, 3, -128, 127});
}

TEST(RequantizeS16, Int8ToInt16) {
  check<int8_t, int16_t>({1.0 / 127, 1.0 / 32768, 0, 0, -32768, 32767});
  check<int8_t, int16_t>({0.0173, 0.0173 / 256.3, -128, 0, -32768, 32767});
  check<int8_t, int16_t>({0.02, 0.02 / 300, 77, -5000, -30000, 30000});
}

TEST(RequantizeS16, Int16ToInt16) {
  check<int16_t, int16_t>({1.0 / 32768, 1.7 / 32768, 0, 0, -32768, 32767});
  check<int16_t, int16_t>({2.5e-4, 1.3e-4, 0, 1000, -32768, 32767});  // clamps
}

TEST(RequantizeS16, ShortInt8InputUsesTheSameArithmetic) {
  RequantizeS16Params p;
  p.int16_input = false;
  p.int16_output = true;
  const auto q = quantize_multiplier(1.0 / (1 << kRequantizeLeftShift) * 300.25);
  p.multiplier = q.multiplier;
  p.shift = q.shift;
  p.input_offset = 3;
  p.activation_min = -32768;
  p.activation_max = 32767;
  const int8_t input[] = {-128, -3, -2, 0, 1, 127};
  p.size = 6;
  int16_t out[6];
  requantize_s16(p, input, out);
  const int want[] = {-37531, 0, 300, 901, 1201, 39033};  // before the int16 clamp
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[i], std::max(-32768, std::min(32767, want[i]))) << i;
}

TEST(RequantizeS16, PrepareNamesTheBadArgument) {
  RequantizeS16Params p;
  p.multiplier = 1 << 30;
  ASSERT_TRUE(requantize_s16_prepare(p).ok());
  p.input_offset = 1;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "input_zero_point");
  p.input_offset = 0;
  p.activation_max = 128;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "activation_max");
  p.activation_max = 127;
  p.output_offset = -129;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "output_zero_point");
  p.output_offset = 0;
  p.shift = -32;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "output_shift");
  p.shift = 0;
  p.int16_input = false;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "input.dtype");
  p.int16_output = true;
  p.activation_min = -32768;
  p.activation_max = 32767;
  p.input_offset = 129;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "input_zero_point");
  EXPECT_EQ(requantize_s16_prepare(p).value, -129);
  p.input_offset = INT32_MIN;  // the zero point it names, 2^31, does not fit an int32
  EXPECT_EQ(requantize_s16_prepare(p).value, int64_t{1} << 31);
  p.int16_input = true;
  p.int16_output = false;
  p.activation_min = -128;
  p.activation_max = 127;
  EXPECT_STREQ(requantize_s16_prepare(p).argument, "input_zero_point");
  EXPECT_EQ(requantize_s16_prepare(p).value, int64_t{1} << 31);
}

}  // namespace
}  // namespace cortexm
