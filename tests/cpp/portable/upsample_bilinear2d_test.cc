#include "cortexm/portable/upsample_bilinear2d.h"

#include <cmath>
#include <limits>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

UpsampleBilinear2dParams params(const testing::Dims& shape, int64_t out_h, int64_t out_w, bool align_corners) {
  UpsampleBilinear2dParams p;
  p.input = testing::to_shape(shape);
  p.out_h = out_h;
  p.out_w = out_w;
  p.align_corners = align_corners;
  p.step_h = upsample_bilinear2d_step(shape[2], out_h, align_corners, 0.0);
  p.step_w = upsample_bilinear2d_step(shape[3], out_w, align_corners, 0.0);
  return p;
}

// The four weights of TFLite's integer kernel sum to 2^20 and those of torch's float kernel to 1:
// a constant plane stays constant at any ratio (the float one within the rounding of 1 - lambda).
TEST(UpsampleBilinear2d, ConstantPlaneStaysConstant) {
  testing::Random rng(23);
  for (int iter = 0; iter < 300; ++iter) {
    const testing::Dims shape = {1, rng.uniform(1, 3), rng.uniform(1, 9), rng.uniform(1, 9)};
    const UpsampleBilinear2dParams p = params(shape, rng.uniform(1, 30), rng.uniform(1, 30), rng.coin(0.5));
    ASSERT_TRUE(upsample_bilinear2d_prepare(p, true).ok());
    ASSERT_TRUE(upsample_bilinear2d_prepare(p, false).ok());
    const int64_t n = testing::numel(shape), m = shape[1] * p.out_h * p.out_w;
    const int8_t v8 = static_cast<int8_t>(rng.uniform(-128, 127));
    const int16_t v16 = static_cast<int16_t>(rng.uniform(-32768, 32767));
    std::vector<int8_t> in8(n, v8), out8(m);
    std::vector<int16_t> in16(n, v16), out16(m);
    std::vector<float> in32(n, 0.5f), out32(m);
    upsample_bilinear2d_s8(p, in8.data(), out8.data());
    upsample_bilinear2d_s16(p, in16.data(), out16.data());
    upsample_bilinear2d_f32(p, in32.data(), out32.data());
    for (int64_t i = 0; i < m; ++i) {
      ASSERT_EQ(out8[i], v8);
      ASSERT_EQ(out16[i], v16);
      ASSERT_NEAR(out32[i], 0.5f, 0x1p-24f);
    }
  }
}

// 2x2 -> 4x4 half-pixel: TFLite's step 512 puts rows at -0.25, 0.25, 0.75, 1.25 (1024ths: -256,
// 256, 768, 1280), the outer ones at the edge pixels, the inner ones 1/4 and 3/4 of the way.
TEST(UpsampleBilinear2d, IntegerHalfPixelByHand) {
  const UpsampleBilinear2dParams p = params({1, 1, 2, 2}, 4, 4, false);
  const int8_t in[4] = {0, 40, 80, 120};
  int8_t out[16];
  upsample_bilinear2d_s8(p, in, out);
  const int8_t want[16] = {0, 10, 30, 40, 20, 30, 50, 60, 60, 70, 90, 100, 80, 90, 110, 120};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], want[i]) << i;
}

TEST(UpsampleBilinear2d, PrepareRefusesWhatCouldReadOutside) {
  UpsampleBilinear2dParams p = params({1, 1, 3, 3}, 5, 5, false);
  for (float bad : {std::nanf(""), -1.0f, std::numeric_limits<float>::infinity(), 1e30f}) {
    p.step_w = bad;
    EXPECT_FALSE(upsample_bilinear2d_prepare(p, false).ok()) << bad;
  }
  // 2 -> 1281 rows: the 10-bit step rounds to 2 and the last row's lower pixel would be row 2.
  EXPECT_TRUE(upsample_bilinear2d_prepare(params({1, 1, 2, 2}, 1280, 2, false), true).ok());
  EXPECT_FALSE(upsample_bilinear2d_prepare(params({1, 1, 2, 2}, 1281, 2, false), true).ok());
  EXPECT_TRUE(upsample_bilinear2d_prepare(params({1, 1, 2, 2}, 1281, 2, false), false).ok());
  EXPECT_FALSE(upsample_bilinear2d_prepare(params({1, 1, 2, 2}, 0, 2, false), false).ok());
  EXPECT_FALSE(upsample_bilinear2d_prepare(params({1, 1, 2, (int64_t{1} << 20) + 1}, 2, 2, false), true).ok());
  EXPECT_FALSE(upsample_bilinear2d_prepare(params({1, 2, 2}, 2, 2, false), false).ok());
}

}  // namespace
}  // namespace cortexm::portable
