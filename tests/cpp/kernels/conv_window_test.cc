// conv_spatial_pair and check_conv_window (conv_params.h): the one 1-D -> 2-D rule and the one
// range check of a convolution's window, shared by the graph op, its lowering and the kernels.
#include <gtest/gtest.h>

#include <string>

#include "cortexm/kernels/conv_params.h"

namespace cortexm {
namespace {

TEST(ConvWindow, SpatialPairs) {
  const int64_t one[] = {3}, two[] = {2, 5}, three[] = {1, 2, 3};
  int64_t h = -9, w = -9;
  ASSERT_TRUE(conv_spatial_pair(one, 1, false, 1, &h, &w));
  EXPECT_EQ(h, 3);
  EXPECT_EQ(w, 3);
  ASSERT_TRUE(conv_spatial_pair(two, 2, false, 1, &h, &w));
  EXPECT_EQ(h, 2);
  EXPECT_EQ(w, 5);
  ASSERT_TRUE(conv_spatial_pair(one, 1, true, 0, &h, &w));  // 1-D: (N, C, 1, W)
  EXPECT_EQ(h, 0);
  EXPECT_EQ(w, 3);
  EXPECT_FALSE(conv_spatial_pair(two, 2, true, 1, &h, &w));
  EXPECT_FALSE(conv_spatial_pair(three, 3, false, 1, &h, &w));
  EXPECT_FALSE(conv_spatial_pair(one, 0, false, 1, &h, &w));
}

TEST(ConvWindow, NamesTheFirstValueOutOfRange) {
  EXPECT_TRUE(check_conv_window(1, 2, 1, 3, 0, 1, 0, 2).ok());
  struct Case {
    int64_t v[8];
    const char* argument;
    int64_t index, value;
  };
  const Case cases[] = {{{0, 1, 1, 1, 0, 0, 0, 0}, "stride", 0, 0},
                        {{1, -2, 0, 1, 0, 0, 0, 0}, "stride", 1, -2},
                        {{1, 1, 0, 1, -1, 0, 0, 0}, "dilation", 0, 0},
                        {{1, 1, 1, -5, 0, 0, 0, 0}, "dilation", 1, -5},
                        {{1, 1, 1, 1, -1, 0, 0, 0}, "padding", 0, -1},
                        {{1, 1, 1, 1, 0, -1, 0, 0}, "padding", 1, -1},
                        {{1, 1, 1, 1, 0, 0, -3, 0}, "padding", 2, -3},
                        {{1, 1, 1, 1, 0, 0, 0, -4}, "padding", 3, -4}};
  for (const Case& c : cases) {
    const Error e = check_conv_window(c.v[0], c.v[1], c.v[2], c.v[3], c.v[4], c.v[5], c.v[6], c.v[7]);
    ASSERT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, c.argument);
    EXPECT_EQ(e.index, c.index);
    EXPECT_EQ(e.value, c.value);
  }
  ConvGeometry g;
  g.dilation_w = 0;
  EXPECT_STREQ(check_conv_window(g).argument, "dilation");
}

}  // namespace
}  // namespace cortexm
