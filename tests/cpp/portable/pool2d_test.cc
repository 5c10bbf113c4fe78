#include "cortexm/portable/pool2d.h"

#include <cmath>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

// torch's output size, written from its definition: windows that start inside input or the
// left padding.
int64_t out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * pad - d * (k - 1) - 1) / s;
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

Pool2dParams random_pool(testing::Random& rng, bool dilation, Dims* shape) {
  const bool batched = rng.coin();
  *shape = batched ? Dims{rng.uniform(1, 2), rng.uniform(1, 3), rng.uniform(1, 12), rng.uniform(1, 12)}
                   : Dims{rng.uniform(1, 3), rng.uniform(1, 12), rng.uniform(1, 12)};
  Pool2dParams p;
  p.input = testing::to_shape(*shape);
  p.kernel_h = rng.uniform(1, 5), p.kernel_w = rng.uniform(1, 5);
  p.stride_h = rng.uniform(1, 3), p.stride_w = rng.uniform(1, 3);
  p.pad_h = rng.uniform(0, p.kernel_h / 2), p.pad_w = rng.uniform(0, p.kernel_w / 2);
  if (dilation) p.dilation_h = rng.uniform(1, 3), p.dilation_w = rng.uniform(1, 3);
  p.ceil_mode = rng.coin();
  return p;
}

TEST(MaxPool2d, RandomGeometry) {
  testing::Random rng(41);
  int checked = 0;
  for (int iter = 0; iter < 500; ++iter) {
    Dims shape;
    const Pool2dParams p = random_pool(rng, true, &shape);
    const int r = static_cast<int>(shape.size());
    const int64_t H = shape[r - 2], W = shape[r - 1];
    const int64_t OH = out_size(H, p.kernel_h, p.pad_h, p.stride_h, p.dilation_h, p.ceil_mode);
    const int64_t OW = out_size(W, p.kernel_w, p.pad_w, p.stride_w, p.dilation_w, p.ceil_mode);
    Shape out_shape;
    const Error e = max_pool2d_prepare(p, &out_shape);
    ASSERT_EQ(e.ok(), OH >= 1 && OW >= 1);
    if (!e.ok()) continue;
    ++checked;
    ASSERT_EQ(out_shape.dims[r - 2], OH);
    ASSERT_EQ(out_shape.dims[r - 1], OW);
    const int64_t planes = testing::numel(shape) / (H * W);
    const std::vector<float> x = rng.floats(testing::numel(shape), 3.0f, true);
    std::vector<float> out(planes * OH * OW), want(out.size());
    max_pool2d_f32(p, x.data(), out.data());
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          float best = -INFINITY;
          bool nan = false;
          for (int64_t ky = 0; ky < p.kernel_h; ++ky)
            for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
              const int64_t iy = oy * p.stride_h - p.pad_h + ky * p.dilation_h;
              const int64_t ix = ox * p.stride_w - p.pad_w + kx * p.dilation_w;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              const float v = x[(pl * H + iy) * W + ix];
              nan = nan || std::isnan(v);
              best = std::max(best, v);
            }
          want[(pl * OH + oy) * OW + ox] = nan ? NAN : best;
        }
    EXPECT_TRUE(testing::floats_equal(out, want)) << testing::str(shape);
  }
  EXPECT_GT(checked, 300);
}

TEST(AvgPool2d, RandomGeometryAndDivisors) {
  testing::Random rng(43);
  int checked = 0;
  for (int iter = 0; iter < 500; ++iter) {
    Dims shape;
    AvgPool2dParams p;
    p.pool = random_pool(rng, false, &shape);
    p.count_include_pad = rng.coin();
    p.divisor_override = rng.coin(0.2) ? rng.uniform(-3, 7) : 0;
    const int r = static_cast<int>(shape.size());
    const int64_t H = shape[r - 2], W = shape[r - 1];
    const Pool2dParams& g = p.pool;
    const int64_t OH = out_size(H, g.kernel_h, g.pad_h, g.stride_h, 1, g.ceil_mode);
    const int64_t OW = out_size(W, g.kernel_w, g.pad_w, g.stride_w, 1, g.ceil_mode);
    const Error e = avg_pool2d_prepare(p);
    ASSERT_EQ(e.ok(), OH >= 1 && OW >= 1);
    if (!e.ok()) continue;
    ++checked;
    const int64_t planes = testing::numel(shape) / (H * W);
    const std::vector<float> x = rng.floats(testing::numel(shape));
    std::vector<float> out(planes * OH * OW), want(out.size());
    avg_pool2d_f32(p, x.data(), out.data());
    for (int64_t pl = 0; pl < planes; ++pl)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double sum = 0.0;
          int64_t inside = 0, padded = 0;
          for (int64_t ky = 0; ky < g.kernel_h; ++ky)
            for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
              const int64_t iy = oy * g.stride_h - g.pad_h + ky;
              const int64_t ix = ox * g.stride_w - g.pad_w + kx;
              // torch counts padding only up to the padded input's far edge.
              if (iy < H + g.pad_h && ix < W + g.pad_w) ++padded;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              sum += x[(pl * H + iy) * W + ix];
              ++inside;
            }
          const int64_t divisor =
              p.divisor_override ? p.divisor_override : (p.count_include_pad ? padded : inside);
          want[(pl * OH + oy) * OW + ox] =
              inside == 0 ? 0.0f : static_cast<float>(sum / static_cast<double>(divisor));
        }
    EXPECT_TRUE(testing::floats_equal(out, want)) << testing::str(shape);
  }
  EXPECT_GT(checked, 300);
}

TEST(Pool2d, RejectsBadGeometry) {
  Pool2dParams p;
  p.input = testing::to_shape({1, 2, 5, 5});
  p.kernel_h = p.kernel_w = 3;
  p.pad_h = 2;
  EXPECT_STREQ(max_pool2d_prepare(p).argument, "padding");
  p.pad_h = 1;
  p.stride_w = 0;
  EXPECT_STREQ(max_pool2d_prepare(p).argument, "stride");
  p.stride_w = 1;
  p.kernel_h = 9;  // 5 + 2 * 1 < 9: no window fits
  EXPECT_STREQ(max_pool2d_prepare(p).argument, "output_size");
  p.kernel_h = 3;
  p.dilation_w = 2;
  EXPECT_TRUE(max_pool2d_prepare(p).ok());
  AvgPool2dParams a;
  a.pool = p;
  EXPECT_STREQ(avg_pool2d_prepare(a).argument, "dilation");
  p.input = testing::to_shape({5, 5});
  EXPECT_STREQ(max_pool2d_prepare(p).argument, "self.rank");
}

TEST(AdaptiveAvgPool2d, OverlappingWindows) {
  testing::Random rng(47);
  for (int iter = 0; iter < 200; ++iter) {
    const Dims shape = {rng.uniform(1, 2), rng.uniform(1, 3), rng.uniform(1, 11), rng.uniform(1, 11)};
    AdaptiveAvgPool2dParams p;
    p.input = testing::to_shape(shape);
    p.out_h = rng.uniform(1, 12);
    p.out_w = rng.uniform(1, 12);
    ASSERT_TRUE(adaptive_avg_pool2d_prepare(p).ok());
    const int64_t H = shape[2], W = shape[3], OH = p.out_h, OW = p.out_w;
    const std::vector<float> x = rng.floats(testing::numel(shape));
    std::vector<float> out(shape[0] * shape[1] * OH * OW), want(out.size());
    adaptive_avg_pool2d_f32(p, x.data(), out.data());
    for (int64_t pl = 0; pl < shape[0] * shape[1]; ++pl)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          const int64_t y0 = static_cast<int64_t>(std::floor(static_cast<double>(oy * H) / OH));
          const int64_t y1 = static_cast<int64_t>(std::ceil(static_cast<double>((oy + 1) * H) / OH));
          const int64_t x0 = static_cast<int64_t>(std::floor(static_cast<double>(ox * W) / OW));
          const int64_t x1 = static_cast<int64_t>(std::ceil(static_cast<double>((ox + 1) * W) / OW));
          double sum = 0.0;
          for (int64_t iy = y0; iy < y1; ++iy)
            for (int64_t ix = x0; ix < x1; ++ix) sum += x[(pl * H + iy) * W + ix];
          want[(pl * OH + oy) * OW + ox] =
              static_cast<float>(sum / static_cast<double>((y1 - y0) * (x1 - x0)));
        }
    EXPECT_TRUE(testing::floats_equal(out, want)) << testing::str(shape);
  }
}

}  // namespace
}  // namespace cortexm::portable
