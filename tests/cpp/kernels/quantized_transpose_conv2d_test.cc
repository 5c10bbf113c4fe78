#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include <gtest/gtest.h>

#include <vector>

#include "cortexm/kernels/requantize.h"
#include "random_data.h"

namespace cortexm {
namespace {

struct Case {
  int32_t n = 1, h = 4, w = 5, c_in = 3, c_out = 4, kh = 3, kw = 3, stride_h = 2, stride_w = 2;
  Padding2d pad{1, 1, 1, 1};
  int32_t out_pad_h = 0, out_pad_w = 0;
  int32_t zp_in = -5, zp_out = 3, lo = -128, hi = 127;
};

// The test's own arithmetic: scatter every input pixel times every tap into int64 accumulators
// of the full (unpadded) output, then crop by the padding and requantize.
void check(const Case& c, uint32_t seed) {
  testing::RandomData rng(seed);
  const auto x = rng.int8s(size_t(c.n) * c.h * c.w * c.c_in);
  const auto w = rng.int8s(size_t(c.c_out) * c.kh * c.kw * c.c_in, -127, 127);
  const auto bias = rng.int32s(size_t(c.c_out), -5000, 5000);
  std::vector<int32_t> mult(c.c_out), shift(c.c_out);
  for (int32_t oc = 0; oc < c.c_out; ++oc) {
    const QuantizedMultiplier q = quantize_multiplier(rng.uniform(1, 400) / 1e5);
    mult[oc] = q.multiplier;
    shift[oc] = q.shift;
  }
  TransposeConv2dParams p;
  p.input = {c.n, c.h, c.w, c.c_in};
  p.filter = {c.c_out, c.kh, c.kw, c.c_in};
  p.stride_h = c.stride_h;
  p.stride_w = c.stride_w;
  p.padding = c.pad;
  p.output_padding_h = c.out_pad_h;
  p.output_padding_w = c.out_pad_w;
  p.quant.input_offset = -c.zp_in;
  p.quant.output_offset = c.zp_out;
  p.quant.activation_min = c.lo;
  p.quant.activation_max = c.hi;
  p.quant.multipliers = mult.data();
  p.quant.shifts = shift.data();
  p.output = quantized_transpose_conv2d_output_dims(p);
  ASSERT_TRUE(quantized_transpose_conv2d_prepare(p).ok());
  const int32_t oh = (c.h - 1) * c.stride_h + c.kh - c.pad.top - c.pad.bottom + c.out_pad_h;
  const int32_t ow = (c.w - 1) * c.stride_w + c.kw - c.pad.left - c.pad.right + c.out_pad_w;
  ASSERT_EQ(p.output.h, oh);
  ASSERT_EQ(p.output.w, ow);
  const int32_t fh = (c.h - 1) * c.stride_h + c.kh + c.out_pad_h;
  const int32_t fw = (c.w - 1) * c.stride_w + c.kw + c.out_pad_w;
  const size_t total = size_t(c.n) * oh * ow * c.c_out;
  std::vector<int8_t> want(total), fast(total), ref(total);
  for (int32_t b = 0; b < c.n; ++b) {
    std::vector<int64_t> full(size_t(fh) * fw * c.c_out, 0);
    for (int32_t iy = 0; iy < c.h; ++iy)
      for (int32_t ix = 0; ix < c.w; ++ix)
        for (int32_t ky = 0; ky < c.kh; ++ky)
          for (int32_t kx = 0; kx < c.kw; ++kx)
            for (int32_t oc = 0; oc < c.c_out; ++oc)
              for (int32_t ic = 0; ic < c.c_in; ++ic)
                full[(size_t(iy * c.stride_h + ky) * fw + ix * c.stride_w + kx) * c.c_out + oc] +=
                    int64_t(x[((size_t(b) * c.h + iy) * c.w + ix) * c.c_in + ic] - c.zp_in) *
                    w[((size_t(oc) * c.kh + ky) * c.kw + kx) * c.c_in + ic];
    for (int32_t oy = 0; oy < oh; ++oy)
      for (int32_t ox = 0; ox < ow; ++ox)
        for (int32_t oc = 0; oc < c.c_out; ++oc) {
          const int64_t acc =
              full[(size_t(oy + c.pad.top) * fw + ox + c.pad.left) * c.c_out + oc] + bias[oc];
          const int32_t v =
              requantize(static_cast<int32_t>(acc), mult[oc], shift[oc]) + c.zp_out;
          want[((size_t(b) * oh + oy) * ow + ox) * c.c_out + oc] =
              static_cast<int8_t>(std::min(std::max(v, c.lo), c.hi));
        }
  }
  std::vector<int32_t> scratch(quantized_transpose_conv2d_scratch_size(p, Isa::kScalar) / 4 + 1);
  quantized_transpose_conv2d(p, x.data(), w.data(), bias.data(), fast.data(), scratch.data());
  quantized_transpose_conv2d_reference(p, x.data(), w.data(), bias.data(), ref.data());
  ASSERT_EQ(ref, want);
  ASSERT_EQ(fast, want);
}

TEST(QuantizedTransposeConv2d, Upsample2x) { check(Case{}, 1); }

TEST(QuantizedTransposeConv2d, OutputPadding) {
  Case c;
  c.out_pad_h = 1;
  c.out_pad_w = 1;
  check(c, 2);
  c.stride_h = 3;
  c.out_pad_h = 2;
  c.pad = {0, 2, 1, 0};
  check(c, 3);
}

TEST(QuantizedTransposeConv2d, RandomizedAwkwardCases) {
  testing::RandomData rng(31);
  for (int i = 0; i < 120; ++i) {
    Case c;
    c.n = rng.uniform(1, 2);
    c.h = rng.uniform(1, 6);
    c.w = rng.uniform(1, 6);
    c.c_in = rng.uniform(1, 7);
    c.c_out = rng.uniform(1, 6);
    c.kh = rng.uniform(1, 4);
    c.kw = rng.uniform(1, 4);
    c.stride_h = rng.uniform(1, 3);
    c.stride_w = rng.uniform(1, 3);
    c.out_pad_h = rng.uniform(0, c.stride_h - 1);
    c.out_pad_w = rng.uniform(0, c.stride_w - 1);
    c.pad = {rng.uniform(0, c.kh - 1), rng.uniform(0, c.kw - 1), rng.uniform(0, c.kh - 1),
             rng.uniform(0, c.kw - 1)};
    c.zp_in = rng.uniform(-128, 127);
    c.zp_out = rng.uniform(-128, 127);
    c.lo = rng.uniform(-128, 100);
    c.hi = rng.uniform(c.lo, 127);
    const int32_t oh = (c.h - 1) * c.stride_h + c.kh - c.pad.top - c.pad.bottom + c.out_pad_h;
    const int32_t ow = (c.w - 1) * c.stride_w + c.kw - c.pad.left - c.pad.right + c.out_pad_w;
    if (oh < 1 || ow < 1) continue;
    check(c, uint32_t(i));
  }
}

TEST(QuantizedTransposeConv2d, PrepareRejectsBadParams) {
  std::vector<int32_t> mult(2, 1 << 30), shift(2, 0);
  TransposeConv2dParams p;
  p.input = {1, 3, 3, 2};
  p.filter = {2, 3, 3, 2};
  p.stride_h = p.stride_w = 2;
  p.quant.multipliers = mult.data();
  p.quant.shifts = shift.data();
  p.output = quantized_transpose_conv2d_output_dims(p);
  ASSERT_TRUE(quantized_transpose_conv2d_prepare(p).ok());
  TransposeConv2dParams bad = p;
  bad.output_padding_h = 2;
  bad.output = quantized_transpose_conv2d_output_dims(bad);
  Error e = quantized_transpose_conv2d_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "output_padding");
  bad = p;
  bad.filter.c = 1;
  e = quantized_transpose_conv2d_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "weight.shape[3]");
  bad = p;
  bad.output.h += 1;
  e = quantized_transpose_conv2d_prepare(bad);
  ASSERT_FALSE(e.ok());
  EXPECT_STREQ(e.argument, "output.shape[1]");
}

}  // namespace
}  // namespace cortexm
