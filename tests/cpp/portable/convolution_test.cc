#include "cortexm/portable/convolution.h"

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

TEST(Convolution, Random1dAnd2dWithGroupsDilationPadding) {
  testing::Random rng(67);
  int checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const bool one_d = rng.coin(0.3);
    const int64_t groups = rng.uniform(1, 3);
    const int64_t cin = groups * rng.uniform(1, 3), cout = groups * rng.uniform(1, 3);
    const int64_t N = rng.uniform(1, 2), H = one_d ? 1 : rng.uniform(1, 9), W = rng.uniform(1, 9);
    const int64_t KH = one_d ? 1 : rng.uniform(1, 4), KW = rng.uniform(1, 4);
    ConvolutionParams p;
    p.input = testing::to_shape(one_d ? Dims{N, cin, W} : Dims{N, cin, H, W});
    p.weight = testing::to_shape(one_d ? Dims{cout, cin / groups, KW} : Dims{cout, cin / groups, KH, KW});
    const int64_t SH = one_d ? 1 : rng.uniform(1, 3), SW = rng.uniform(1, 3);
    const int64_t PH = one_d ? 0 : rng.uniform(0, 2), PW = rng.uniform(0, 2);
    const int64_t DH = one_d ? 1 : rng.uniform(1, 2), DW = rng.uniform(1, 2);
    p.stride[0] = one_d ? 7 : SH, p.stride[1] = SW;  // 1-D ignores index 0
    p.padding[0] = one_d ? 5 : PH, p.padding[1] = PW;
    p.dilation[0] = one_d ? 3 : DH, p.dilation[1] = DW;
    p.groups = groups;
    const bool fits = H + 2 * PH >= DH * (KH - 1) + 1 && W + 2 * PW >= DW * (KW - 1) + 1;
    Shape out_shape;
    ASSERT_EQ(convolution_prepare(p, &out_shape).ok(), fits);
    if (!fits) continue;
    ++checked;
    const int64_t OH = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1;
    const int64_t OW = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
    EXPECT_EQ(out_shape.dims[out_shape.rank - 1], OW);
    const std::vector<float> x = rng.floats(N * cin * H * W), w = rng.floats(cout * (cin / groups) * KH * KW),
                             bias = rng.floats(cout);
    const bool with_bias = rng.coin();
    std::vector<float> out(N * cout * OH * OW), want(out.size());
    convolution_f32(p, x.data(), w.data(), with_bias ? bias.data() : nullptr, out.data());
    const int64_t cin_g = cin / groups, cout_g = cout / groups;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < cout; ++oc)
        for (int64_t oy = 0; oy < OH; ++oy)
          for (int64_t ox = 0; ox < OW; ++ox) {
            float s = with_bias ? bias[oc] : 0.0f;
            const int64_t g = oc / cout_g;
            for (int64_t ic = 0; ic < cin_g; ++ic)
              for (int64_t ky = 0; ky < KH; ++ky)
                for (int64_t kx = 0; kx < KW; ++kx) {
                  const int64_t iy = oy * SH - PH + ky * DH, ix = ox * SW - PW + kx * DW;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  s += w[((oc * cin_g + ic) * KH + ky) * KW + kx] *
                       x[((n * cin + g * cin_g + ic) * H + iy) * W + ix];
                }
            want[((n * cout + oc) * OH + oy) * OW + ox] = s;
          }
    EXPECT_TRUE(testing::floats_equal(out, want))
        << (one_d ? "1d" : "2d") << " groups " << groups << " cin " << cin << " cout " << cout;
  }
  EXPECT_GT(checked, 150);
}

TEST(Convolution, RejectsBadShapes) {
  ConvolutionParams p;
  p.input = testing::to_shape({1, 4, 5, 5});
  p.weight = testing::to_shape({6, 4, 3, 3});
  p.groups = 2;
  EXPECT_STREQ(convolution_prepare(p).argument, "weight.shape");
  p.groups = 3;
  EXPECT_STREQ(convolution_prepare(p).argument, "groups");
  p.groups = 1;
  EXPECT_TRUE(convolution_prepare(p).ok());
  p.dilation[0] = 3;
  EXPECT_STREQ(convolution_prepare(p).argument, "input.shape");
  p.dilation[0] = 1;
  p.weight = testing::to_shape({6, 4, 3});
  EXPECT_STREQ(convolution_prepare(p).argument, "weight.rank");
}

}  // namespace
}  // namespace cortexm::portable
