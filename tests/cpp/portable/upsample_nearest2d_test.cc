#include "cortexm/portable/upsample_nearest2d.h"

#include <cmath>

#include "cortexm/portable/copy.h"
#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

TEST(UpsampleNearest2d, UpAndDownScales) {
  testing::Random rng(17);
  for (int iter = 0; iter < 200; ++iter) {
    const Dims shape = {rng.uniform(1, 2), rng.uniform(1, 3), rng.uniform(1, 9), rng.uniform(1, 9)};
    UpsampleNearest2dParams p;
    p.input = testing::to_shape(shape);
    p.out_h = rng.uniform(1, 20);
    p.out_w = rng.uniform(1, 20);
    p.element_size = testing::kElementSizes[rng.uniform(0, 3)];
    Shape out_shape;
    ASSERT_TRUE(upsample_nearest2d_prepare(p, &out_shape).ok());
    const int32_t es = p.element_size;
    const int64_t H = shape[2], W = shape[3], OH = p.out_h, OW = p.out_w;
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
    std::vector<uint8_t> out(shape[0] * shape[1] * OH * OW * es);
    upsample_nearest2d(p, in.data(), out.data());
    for (int64_t plane = 0; plane < shape[0] * shape[1]; ++plane)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t x = 0; x < OW; ++x) {
          // torch: floor(dst * float(in / out)), clamped to the last row / column.
          const int64_t sy = std::min<int64_t>(
              static_cast<int64_t>(std::floor(static_cast<float>(y) * (static_cast<float>(H) / OH))), H - 1);
          const int64_t sx = std::min<int64_t>(
              static_cast<int64_t>(std::floor(static_cast<float>(x) * (static_cast<float>(W) / OW))), W - 1);
          ASSERT_EQ(0, std::memcmp(&out[((plane * OH + y) * OW + x) * es],
                                   &in[((plane * H + sy) * W + sx) * es], es));
        }
  }
}

TEST(UpsampleNearest2d, IntegerFactorRepeatsPixels) {
  UpsampleNearest2dParams p;
  p.input = testing::to_shape({1, 1, 2, 2});
  p.out_h = 4;
  p.out_w = 4;
  const int8_t in[4] = {1, 2, 3, 4};
  int8_t out[16];
  ASSERT_TRUE(upsample_nearest2d_prepare(p).ok());
  upsample_nearest2d(p, in, out);
  const int8_t want[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  EXPECT_EQ(0, std::memcmp(out, want, 16));
}

TEST(UpsampleNearest2d, RejectsBadShapes) {
  UpsampleNearest2dParams p;
  p.input = testing::to_shape({1, 2, 3});
  EXPECT_STREQ(upsample_nearest2d_prepare(p).argument, "self.rank");
  p.input = testing::to_shape({1, 2, 0, 3});
  EXPECT_STREQ(upsample_nearest2d_prepare(p).argument, "self.shape");
  p.input = testing::to_shape({1, 2, 3, 3});
  p.out_w = 0;
  EXPECT_STREQ(upsample_nearest2d_prepare(p).argument, "output_size");
}

TEST(Copy, CopiesBytesAndAllowsInPlace) {
  testing::Random rng(1);
  for (int32_t es : testing::kElementSizes) {
    CopyParams p{37, es};
    ASSERT_TRUE(copy_prepare(p).ok());
    const std::vector<uint8_t> in = rng.bytes(37 * es);
    std::vector<uint8_t> out(in.size());
    copy(p, in.data(), out.data());
    EXPECT_EQ(out, in);
    copy(p, out.data(), out.data());
    EXPECT_EQ(out, in);
  }
  EXPECT_STREQ(copy_prepare(CopyParams{-1, 1}).argument, "numel");
  EXPECT_STREQ(copy_prepare(CopyParams{1, 3}).argument, "element_size");
}

}  // namespace
}  // namespace cortexm::portable
