#include "cortexm/kernels/quantized_avg_pool2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

constexpr size_t kGuardBytes = 64;
constexpr uint8_t kGuardByte = 0xA5;

// Builder with awkward defaults: batch 2, odd H, W and C, a 3x2 kernel with strides 2x1 and
// asymmetric padding (top 1, left 0, bottom 2, right 1), so edge windows hold fewer taps.
class AvgPoolTester {
 public:
  AvgPoolTester& input(int32_t n, int32_t h, int32_t w, int32_t c) {
    n_ = n; h_ = h; w_ = w; c_ = c; return *this;
  }
  AvgPoolTester& kernel(int32_t kh, int32_t kw) { kh_ = kh; kw_ = kw; return *this; }
  AvgPoolTester& stride(int32_t sh, int32_t sw) { sh_ = sh; sw_ = sw; return *this; }
  AvgPoolTester& padding(int32_t top, int32_t left, int32_t bottom, int32_t right) {
    pt_ = top; pl_ = left; pb_ = bottom; pr_ = right; return *this;
  }
  AvgPoolTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  AvgPoolTester& input_range(int32_t lo, int32_t hi) { in_lo_ = lo; in_hi_ = hi; return *this; }
  AvgPoolTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    const auto input = rng.int8s(size_t(n_) * h_ * w_ * c_, in_lo_, in_hi_);
    const int32_t oh = (h_ + pt_ + pb_ - kh_) / sh_ + 1;
    const int32_t ow = (w_ + pl_ + pr_ - kw_) / sw_ + 1;

    Pool2dParams p;
    p.input.n = n_; p.input.h = h_; p.input.w = w_; p.input.c = c_;
    p.kernel_h = kh_; p.kernel_w = kw_;
    p.stride_h = sh_; p.stride_w = sw_;
    p.padding.top = pt_; p.padding.left = pl_; p.padding.bottom = pb_; p.padding.right = pr_;
    p.activation_min = act_min_; p.activation_max = act_max_;
    p.output = pool2d_output_dims(p);
    ASSERT_EQ(p.output.h, oh);
    ASSERT_EQ(p.output.w, ow);
    ASSERT_TRUE(quantized_avg_pool2d_prepare(p).ok());

    // Plain loops: sum and count the taps inside the input, divide rounding halves away from 0.
    const size_t n = size_t(n_) * oh * ow * c_;
    std::vector<int8_t> expected(n);
    std::vector<double> real_average(n);
    for (int32_t b = 0; b < n_; ++b)
      for (int32_t y = 0; y < oh; ++y)
        for (int32_t x = 0; x < ow; ++x)
          for (int32_t c = 0; c < c_; ++c) {
            int64_t sum = 0, count = 0;
            for (int32_t ky = 0; ky < kh_; ++ky)
              for (int32_t kx = 0; kx < kw_; ++kx) {
                const int32_t iy = y * sh_ - pt_ + ky, ix = x * sw_ - pl_ + kx;
                if (iy < 0 || iy >= h_ || ix < 0 || ix >= w_) continue;
                sum += input[((size_t(b) * h_ + iy) * w_ + ix) * c_ + c];
                ++count;
              }
            ASSERT_GT(count, 0);
            int64_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
            avg = avg < act_min_ ? act_min_ : (avg > act_max_ ? act_max_ : avg);
            const size_t e = ((size_t(b) * oh + y) * ow + x) * c_ + c;
            expected[e] = static_cast<int8_t>(avg);
            real_average[e] = double(sum) / double(count);
          }

    const size_t scratch_size = quantized_avg_pool2d_scratch_size(p, Isa::kScalar);
    std::vector<uint8_t> scratch(scratch_size + kGuardBytes, kGuardByte);
    std::vector<int8_t> fast(n), ref(n);
    quantized_avg_pool2d(p, input.data(), fast.data(), scratch.data());
    quantized_avg_pool2d_reference(p, input.data(), ref.data());
    ASSERT_EQ(ref, expected);
    ASSERT_EQ(fast, expected);
    for (size_t i = scratch_size; i < scratch.size(); ++i)
      ASSERT_EQ(scratch[i], kGuardByte) << "scratch overrun at byte " << i;

    // Input and output share qparams: the float average rounds to within half an LSB.
    for (size_t e = 0; e < n; ++e) {
      double q = real_average[e];
      q = q < act_min_ ? act_min_ : (q > act_max_ ? act_max_ : q);
      ASSERT_LE(std::abs(q - expected[e]), 0.5) << "element " << e;
    }
  }

 private:
  int32_t n_ = 2, h_ = 11, w_ = 9, c_ = 19;
  int32_t kh_ = 3, kw_ = 2, sh_ = 2, sw_ = 1;
  int32_t pt_ = 1, pl_ = 0, pb_ = 2, pr_ = 1;
  int32_t act_min_ = -128, act_max_ = 127;
  int32_t in_lo_ = -128, in_hi_ = 127;
  uint32_t seed_ = 1;
};

TEST(QuantizedAvgPool2d, AwkwardDefaults) { AvgPoolTester().Test(); }
TEST(QuantizedAvgPool2d, NoPadding) { AvgPoolTester().padding(0, 0, 0, 0).seed(2).Test(); }
TEST(QuantizedAvgPool2d, SingleChannel) { AvgPoolTester().input(3, 8, 7, 1).seed(3).Test(); }
TEST(QuantizedAvgPool2d, StrideLargerThanKernel) {
  AvgPoolTester().kernel(2, 2).stride(3, 3).padding(1, 1, 0, 0).seed(4).Test();
}
TEST(QuantizedAvgPool2d, KernelLargerThanInput) {
  AvgPoolTester().input(1, 2, 3, 5).kernel(3, 4).stride(1, 1).padding(1, 2, 2, 3).seed(5).Test();
}
TEST(QuantizedAvgPool2d, GlobalSevenBySeven) {
  AvgPoolTester().input(1, 7, 7, 1280).kernel(7, 7).stride(1, 1).padding(0, 0, 0, 0).seed(6)
      .Test();
}
TEST(QuantizedAvgPool2d, ThreeByThreeStrideTwoPadded) {
  AvgPoolTester().input(1, 15, 15, 32).kernel(3, 3).stride(2, 2).padding(1, 1, 1, 1).seed(7)
      .Test();
}
// Exact halves must round away from zero on both signs: two taps summing to odd values.
TEST(QuantizedAvgPool2d, HalvesRoundAwayFromZero) {
  AvgPoolTester().input(2, 1, 6, 33).kernel(1, 2).stride(1, 2).padding(0, 0, 0, 0).seed(8).Test();
}
TEST(QuantizedAvgPool2d, FusedActivationRange) {
  AvgPoolTester().activation(-30, 45).seed(9).Test();
}
// More than 256 taps per window: the kernel sums in int32 instead of int16.
TEST(QuantizedAvgPool2d, WideWindowsSumInInt32) {
  AvgPoolTester().input(1, 17, 17, 9).kernel(17, 17).stride(1, 1).padding(0, 0, 0, 0).seed(10)
      .Test();
  AvgPoolTester().input(1, 17, 17, 9).kernel(17, 17).stride(1, 1).padding(0, 0, 0, 0)
      .input_range(-128, -128).seed(11).Test();
  AvgPoolTester().input(2, 70, 70, 3).kernel(70, 70).stride(1, 1).padding(0, 0, 0, 0)
      .input_range(127, 127).seed(12).Test();
  // 257 taps of -128 sum below -2^15: just past the int16 limit.
  AvgPoolTester().input(1, 257, 2, 21).kernel(257, 1).stride(1, 1).padding(0, 0, 0, 0)
      .input_range(-128, -128).seed(15).Test();
}
// Exactly 256 taps of -128: the int16 sum reaches -2^15.
TEST(QuantizedAvgPool2d, Int16SumAtItsLimit) {
  AvgPoolTester().input(1, 16, 16, 17).kernel(16, 16).stride(1, 1).padding(0, 0, 0, 0)
      .input_range(-128, -128).seed(13).Test();
  AvgPoolTester().input(1, 16, 16, 17).kernel(16, 16).stride(1, 1).padding(0, 0, 0, 0)
      .input_range(127, 127).seed(14).Test();
}

TEST(QuantizedAvgPool2d, RandomizedAwkwardCases) {
  testing::RandomData rng(31);
  for (int i = 0; i < 300; ++i) {
    const int32_t kh = rng.uniform(1, 5), kw = rng.uniform(1, 5);
    const int32_t pt = rng.uniform(0, kh - 1), pl = rng.uniform(0, kw - 1);
    const int32_t pb = rng.uniform(0, kh - 1), pr = rng.uniform(0, kw - 1);
    // The padded input must hold one window; the kernel alone may exceed the input.
    const int32_t min_h = kh - pt - pb > 1 ? kh - pt - pb : 1;
    const int32_t min_w = kw - pl - pr > 1 ? kw - pl - pr : 1;
    const int32_t lo = rng.uniform(-128, 100);
    AvgPoolTester()
        .input(rng.uniform(1, 3), rng.uniform(min_h, 12), rng.uniform(min_w, 12),
               rng.uniform(1, 150))  // past the scalar kernel's 64-channel blocks
        .kernel(kh, kw)
        .stride(rng.uniform(1, 4), rng.uniform(1, 4))
        .padding(pt, pl, pb, pr)
        .activation(lo, rng.uniform(lo, 127))
        .seed(uint32_t(500 + i))
        .Test();
  }
}

TEST(QuantizedAvgPool2d, RejectsWindowsTooWideForInt32Sums) {
  Pool2dParams p;
  p.input.h = 4096;
  p.input.w = 4096;
  p.kernel_h = 4096;
  p.kernel_w = 4096;
  p.output = pool2d_output_dims(p);
  ASSERT_TRUE(validate_pool2d(p).ok());
  EXPECT_STREQ(quantized_avg_pool2d_prepare(p).argument, "kernel_size");
  p.kernel_w = 2048;
  p.output = pool2d_output_dims(p);
  EXPECT_TRUE(quantized_avg_pool2d_prepare(p).ok());
}

// Sums of blocks of 64 channels on the stack (scalar) or in registers (DSP, MVE), as
// arm_avgpool_s8 on MVE: no scratch.
TEST(QuantizedAvgPool2d, NeedsNoScratch) {
  Pool2dParams p;
  p.input.c = 1280;
  for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve})
    EXPECT_EQ(quantized_avg_pool2d_scratch_size(p, isa), 0u);
}

// validate_pool2d is shared by both pooling kernels.
Pool2dParams valid_pool(int32_t kh = 3, int32_t kw = 3) {
  Pool2dParams p;
  p.input.n = 2; p.input.h = 9; p.input.w = 8; p.input.c = 5;
  p.kernel_h = kh; p.kernel_w = kw;
  p.stride_h = 2; p.stride_w = 2;
  p.padding.top = 1; p.padding.left = 1; p.padding.bottom = 1; p.padding.right = 1;
  p.output = pool2d_output_dims(p);
  return p;
}

void expect_rejects(const Pool2dParams& p, const char* argument, int64_t value,
                    int64_t index = -1) {
  const Error e = validate_pool2d(p);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, argument);
  EXPECT_EQ(e.value, value);
  EXPECT_EQ(e.index, index);
  EXPECT_FALSE(quantized_avg_pool2d_prepare(p).ok());
}

TEST(Pool2dParams, OutputDims) {
  const Pool2dParams p = valid_pool();
  EXPECT_EQ(p.output.n, 2);
  EXPECT_EQ(p.output.h, 5);  // (9 + 2 - 3) / 2 + 1
  EXPECT_EQ(p.output.w, 4);  // (8 + 2 - 3) / 2 + 1
  EXPECT_EQ(p.output.c, 5);
  EXPECT_TRUE(validate_pool2d(p).ok());
  Pool2dParams bad = p;
  bad.stride_h = 0;
  EXPECT_EQ(pool2d_output_dims(bad).h, 0);  // no division by zero
}

TEST(Pool2dParams, RejectsBadParams) {
  Pool2dParams p;
  p = valid_pool(); p.input.c = 0; expect_rejects(p, "input.shape[3]", 0);
  p = valid_pool(); p.input.h = 0; expect_rejects(p, "input.shape[1]", 0);
  p = valid_pool(); p.kernel_h = 0; expect_rejects(p, "kernel_size", 0, 0);
  p = valid_pool(); p.kernel_w = -2; expect_rejects(p, "kernel_size", -2, 1);
  p = valid_pool(); p.stride_h = 0; expect_rejects(p, "stride", 0, 0);
  p = valid_pool(); p.stride_w = -1; expect_rejects(p, "stride", -1, 1);
  p = valid_pool(); p.padding.left = -1; expect_rejects(p, "padding", -1, 1);
  p = valid_pool(); p.padding.top = 3; p.output = pool2d_output_dims(p);
  expect_rejects(p, "padding", 3, 0);
  p = valid_pool(); p.padding.bottom = 3; p.output = pool2d_output_dims(p);
  expect_rejects(p, "padding", 3, 2);
  p = valid_pool(3, 2); p.padding.right = 2; p.output = pool2d_output_dims(p);
  expect_rejects(p, "padding", 2, 3);
  p = valid_pool(); p.input.h = 2; p.kernel_h = 5; p.padding.top = 1; p.padding.bottom = 1;
  p.output = pool2d_output_dims(p);
  expect_rejects(p, "input.shape[1]", 2);
  p = valid_pool(); p.output.h = 4; expect_rejects(p, "output.shape[1]", 4);
  p = valid_pool(); p.output.w = 5; expect_rejects(p, "output.shape[2]", 5);
  p = valid_pool(); p.output.c = 4; expect_rejects(p, "output.shape[3]", 4);
  p = valid_pool(); p.output.n = 1; expect_rejects(p, "output.shape[0]", 1);
  p = valid_pool(); p.activation_min = -129; expect_rejects(p, "activation_min", -129);
  p = valid_pool(); p.activation_max = 128; expect_rejects(p, "activation_max", 128);
  p = valid_pool(); p.activation_min = 1; p.activation_max = 0;
  expect_rejects(p, "activation_min", 1);
}

}  // namespace
}  // namespace cortexm
