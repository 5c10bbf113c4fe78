#include "cortexm/kernels/quantized_max_pool2d.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

// The int8 kernel or the int16 one (quantized_max_pool2d_s16), by element type.
Error prepare(const Pool2dParams& p, int8_t) { return quantized_max_pool2d_prepare(p); }
Error prepare(const Pool2dParams& p, int16_t) { return quantized_max_pool2d_s16_prepare(p); }
void run(const Pool2dParams& p, const int8_t* in, int8_t* out, bool reference) {
  reference ? quantized_max_pool2d_reference(p, in, out) : quantized_max_pool2d(p, in, out);
}
void run(const Pool2dParams& p, const int16_t* in, int16_t* out, bool reference) {
  reference ? quantized_max_pool2d_s16_reference(p, in, out) : quantized_max_pool2d_s16(p, in, out);
}

// Builder with awkward defaults: batch 2, odd H, W and C, a 3x2 kernel with strides 2x1 and
// asymmetric padding (top 1, left 0, bottom 2, right 1), so edge windows hold fewer taps.
// T: int8_t or int16_t; ranges default to T's.
template <class T>
class MaxPoolTester {
 public:
  MaxPoolTester& input(int32_t n, int32_t h, int32_t w, int32_t c) {
    n_ = n; h_ = h; w_ = w; c_ = c; return *this;
  }
  MaxPoolTester& kernel(int32_t kh, int32_t kw) { kh_ = kh; kw_ = kw; return *this; }
  MaxPoolTester& stride(int32_t sh, int32_t sw) { sh_ = sh; sw_ = sw; return *this; }
  MaxPoolTester& padding(int32_t top, int32_t left, int32_t bottom, int32_t right) {
    pt_ = top; pl_ = left; pb_ = bottom; pr_ = right; return *this;
  }
  MaxPoolTester& activation(int32_t lo, int32_t hi) { act_min_ = lo; act_max_ = hi; return *this; }
  MaxPoolTester& input_range(int32_t lo, int32_t hi) { in_lo_ = lo; in_hi_ = hi; return *this; }
  MaxPoolTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    testing::RandomData rng(seed_);
    std::vector<T> input(size_t(n_) * h_ * w_ * c_);
    for (T& v : input) v = static_cast<T>(rng.uniform(in_lo_, in_hi_));
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
    ASSERT_TRUE(prepare(p, T{}).ok());

    // Plain loops: the maximum over the taps inside the input (padding never wins), clamped.
    const size_t n = size_t(n_) * oh * ow * c_;
    std::vector<T> expected(n);
    std::vector<double> real_max(n);
    for (int32_t b = 0; b < n_; ++b)
      for (int32_t y = 0; y < oh; ++y)
        for (int32_t x = 0; x < ow; ++x)
          for (int32_t c = 0; c < c_; ++c) {
            double best = -1e9;
            for (int32_t ky = 0; ky < kh_; ++ky)
              for (int32_t kx = 0; kx < kw_; ++kx) {
                const int32_t iy = y * sh_ - pt_ + ky, ix = x * sw_ - pl_ + kx;
                if (iy < 0 || iy >= h_ || ix < 0 || ix >= w_) continue;
                const double v = input[((size_t(b) * h_ + iy) * w_ + ix) * c_ + c];
                best = v > best ? v : best;
              }
            ASSERT_GE(best, double(kLowest));
            const size_t e = ((size_t(b) * oh + y) * ow + x) * c_ + c;
            real_max[e] = best;
            best = best < act_min_ ? act_min_ : (best > act_max_ ? act_max_ : best);
            expected[e] = static_cast<T>(best);
          }

    std::vector<T> fast(n), ref(n);
    run(p, input.data(), fast.data(), false);
    run(p, input.data(), ref.data(), true);
    ASSERT_EQ(ref, expected);
    ASSERT_EQ(fast, expected);
    // Input and output share qparams, so the max of the real values is representable exactly.
    for (size_t e = 0; e < n; ++e) {
      const double q = real_max[e] < act_min_ ? act_min_ : (real_max[e] > act_max_ ? act_max_
                                                                                    : real_max[e]);
      ASSERT_EQ(q, double(expected[e])) << "element " << e;
    }
  }

 private:
  static constexpr int32_t kLowest = sizeof(T) == 1 ? -128 : -32768;
  static constexpr int32_t kHighest = sizeof(T) == 1 ? 127 : 32767;
  int32_t n_ = 2, h_ = 11, w_ = 9, c_ = 19;
  int32_t kh_ = 3, kw_ = 2, sh_ = 2, sw_ = 1;
  int32_t pt_ = 1, pl_ = 0, pb_ = 2, pr_ = 1;
  int32_t act_min_ = kLowest, act_max_ = kHighest;
  int32_t in_lo_ = kLowest, in_hi_ = kHighest;
  uint32_t seed_ = 1;
};

TEST(QuantizedMaxPool2d, AwkwardDefaults) { MaxPoolTester<int8_t>().Test(); }
TEST(QuantizedMaxPool2d, NoPadding) { MaxPoolTester<int8_t>().padding(0, 0, 0, 0).seed(2).Test(); }
TEST(QuantizedMaxPool2d, SingleChannel) { MaxPoolTester<int8_t>().input(3, 8, 7, 1).seed(3).Test(); }
TEST(QuantizedMaxPool2d, StrideLargerThanKernel) {
  MaxPoolTester<int8_t>().kernel(2, 2).stride(3, 3).padding(1, 1, 0, 0).seed(4).Test();
}
TEST(QuantizedMaxPool2d, KernelLargerThanInput) {
  MaxPoolTester<int8_t>().input(1, 2, 3, 5).kernel(3, 4).stride(1, 1).padding(1, 2, 2, 3).seed(5).Test();
}
TEST(QuantizedMaxPool2d, ThreeByThreeStrideTwoPadded) {
  MaxPoolTester<int8_t>().input(1, 112, 112, 16).kernel(3, 3).stride(2, 2).padding(1, 1, 1, 1).seed(6)
      .Test();
}
// All inputs -128: padded taps must not contribute a 0 (or anything else) to the maximum.
TEST(QuantizedMaxPool2d, PaddingNeverWins) {
  MaxPoolTester<int8_t>().input_range(-128, -100).padding(2, 1, 2, 1).kernel(3, 3).seed(7).Test();
}
TEST(QuantizedMaxPool2d, FusedActivationRange) {
  MaxPoolTester<int8_t>().activation(-30, 45).seed(8).Test();
  MaxPoolTester<int8_t>().activation(0, 6).seed(9).Test();
}
TEST(QuantizedMaxPool2d, GlobalWindow) {
  MaxPoolTester<int8_t>().input(2, 13, 17, 64).kernel(13, 17).stride(1, 1).padding(0, 0, 0, 0).seed(10)
      .Test();
}

// `count` random windows, paddings, strides, activation and input ranges within [lo, hi].
template <class T>
void randomized_cases(uint32_t seed, int count, int32_t lo, int32_t hi) {
  testing::RandomData rng(seed);
  for (int i = 0; i < count; ++i) {
    const int32_t kh = rng.uniform(1, 5), kw = rng.uniform(1, 5);
    const int32_t pt = rng.uniform(0, kh - 1), pl = rng.uniform(0, kw - 1);
    const int32_t pb = rng.uniform(0, kh - 1), pr = rng.uniform(0, kw - 1);
    // The padded input must hold one window; the kernel alone may exceed the input.
    const int32_t min_h = kh - pt - pb > 1 ? kh - pt - pb : 1;
    const int32_t min_w = kw - pl - pr > 1 ? kw - pl - pr : 1;
    const int32_t act_lo = rng.uniform(lo, hi - (hi - lo) / 10);
    const int32_t in_lo = rng.uniform(lo, hi);
    MaxPoolTester<T>()
        .input(rng.uniform(1, 3), rng.uniform(min_h, 12), rng.uniform(min_w, 12),
               rng.uniform(1, 40))
        .kernel(kh, kw)
        .stride(rng.uniform(1, 4), rng.uniform(1, 4))
        .padding(pt, pl, pb, pr)
        .activation(act_lo, rng.uniform(act_lo, hi))
        .input_range(in_lo, rng.uniform(in_lo, hi))
        .seed(seed * 1000 + uint32_t(i))
        .Test();
  }
}

TEST(QuantizedMaxPool2d, RandomizedAwkwardCases) { randomized_cases<int8_t>(41, 300, -128, 127); }

TEST(QuantizedMaxPool2dS16, AwkwardDefaults) { MaxPoolTester<int16_t>().Test(); }
TEST(QuantizedMaxPool2dS16, PaddingNeverWins) {
  MaxPoolTester<int16_t>().input_range(-32768, -32000).padding(2, 1, 2, 1).kernel(3, 3).seed(7)
      .Test();
}
TEST(QuantizedMaxPool2dS16, FusedActivationRange) {
  MaxPoolTester<int16_t>().activation(-300, 4500).seed(8).Test();
  MaxPoolTester<int16_t>().activation(0, 32767).seed(9).Test();
}

TEST(QuantizedMaxPool2dS16, RandomizedAwkwardCases) {
  randomized_cases<int16_t>(43, 200, -32768, 32767);
}

// The int16 activation range is int16's, not int8's.
TEST(QuantizedMaxPool2dS16, PrepareTakesTheInt16Range) {
  Pool2dParams p;
  p.input.h = 6; p.input.w = 6; p.input.c = 3;
  p.kernel_h = 3; p.kernel_w = 3; p.stride_h = 2; p.stride_w = 2;
  p.output = pool2d_output_dims(p);
  p.activation_min = -32768;
  p.activation_max = 32767;
  EXPECT_TRUE(quantized_max_pool2d_s16_prepare(p).ok());
  EXPECT_STREQ(quantized_max_pool2d_prepare(p).argument, "activation_min");
  p.activation_max = 32768;
  EXPECT_STREQ(quantized_max_pool2d_s16_prepare(p).argument, "activation_max");
  p.activation_max = 5;
  p.padding.bottom = 3;
  p.output = pool2d_output_dims(p);
  EXPECT_STREQ(quantized_max_pool2d_s16_prepare(p).argument, "padding");
}

TEST(QuantizedMaxPool2d, PrepareRejectsBadParams) {
  Pool2dParams p;
  p.input.h = 6; p.input.w = 6; p.input.c = 3;
  p.kernel_h = 3; p.kernel_w = 3; p.stride_h = 2; p.stride_w = 2;
  p.padding.top = p.padding.left = p.padding.bottom = p.padding.right = 1;
  p.output = pool2d_output_dims(p);
  EXPECT_TRUE(quantized_max_pool2d_prepare(p).ok());
  Pool2dParams bad = p;
  bad.padding.right = 3;
  bad.output = pool2d_output_dims(bad);
  Error e = quantized_max_pool2d_prepare(bad);
  EXPECT_STREQ(e.argument, "padding");
  EXPECT_EQ(e.index, 3);
  bad = p;
  bad.output.w = 2;
  EXPECT_STREQ(quantized_max_pool2d_prepare(bad).argument, "output.shape[2]");
  bad = p;
  bad.activation_min = 7;
  bad.activation_max = 6;
  EXPECT_STREQ(quantized_max_pool2d_prepare(bad).argument, "activation_min");
  bad = p;
  bad.stride_w = 0;
  EXPECT_STREQ(quantized_max_pool2d_prepare(bad).argument, "stride");
}

}  // namespace
}  // namespace cortexm
