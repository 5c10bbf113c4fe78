// graph/layout.h: the dim order a view keeps, and which layouts hold the same bytes. Checked against
// element offsets computed by plain loops.
#include "graph/layout.h"

#include <gtest/gtest.h>

namespace cortexm {
namespace {

TensorInfo int8(std::vector<int64_t> shape, std::vector<int64_t> dim_order = {}) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  info.dim_order = std::move(dim_order);
  return info;
}

// Offset of each element, in logical row-major order, by plain loops over the index.
std::vector<int64_t> element_offsets(const TensorInfo& info) {
  const std::vector<int64_t> order = info.effective_dim_order();
  std::vector<int64_t> strides(info.shape.size(), 0);
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[static_cast<size_t>(order[k])] = stride;
    stride *= info.shape[static_cast<size_t>(order[k])];
  }
  std::vector<int64_t> offsets;
  std::vector<int64_t> index(info.shape.size(), 0);
  for (int64_t n = 0; n < info.numel(); ++n) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    offsets.push_back(offset);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < info.shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

TEST(Layout, ViewOfAContiguousValueIsContiguous) {
  EXPECT_EQ(view_dim_order(int8({2, 3, 4}), {6, 4}), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(view_dim_order(int8({2, 3, 4}, {0, 1, 2}), {24}), (std::vector<int64_t>{0}));
}

TEST(Layout, SizeOneViewsKeepThePhysicalOrder) {
  struct Case {
    std::vector<int64_t> shape, order, view, expected;
  };
  const Case cases[] = {
      {{10, 64, 1, 3}, {0, 2, 3, 1}, {10, 64, 3}, {0, 2, 1}},        // squeeze H of NHWC
      {{10, 64, 3}, {0, 2, 1}, {10, 64, 1, 3}, {0, 2, 3, 1}},        // and back
      {{1, 258, 1, 4}, {0, 2, 3, 1}, {1, 258, 4}, {0, 2, 1}},        // N = 1 placed outermost
      {{1, 128, 1, 1}, {0, 2, 3, 1}, {1, 128, 1}, {0, 1, 2}},        // one real dim: contiguous
      {{2, 5, 1, 3}, {0, 2, 3, 1}, {1, 2, 5, 3, 1}, {0, 1, 3, 2, 4}},  // several size-1 dims
      {{3, 4, 5}, {2, 0, 1}, {3, 1, 4, 5}, {1, 3, 0, 2}},            // any permutation
  };
  for (const Case& c : cases) {
    const TensorInfo in = int8(c.shape, c.order);
    const auto order = view_dim_order(in, c.view);
    ASSERT_TRUE(order.has_value()) << shape_to_string(c.view);
    EXPECT_EQ(*order, c.expected) << shape_to_string(c.view);
    const TensorInfo out = int8(c.view, *order);
    EXPECT_EQ(element_offsets(in), element_offsets(out)) << shape_to_string(c.view);
    EXPECT_TRUE(same_bytes(in, out));
  }
}

TEST(Layout, ViewsThatMoveElementsHaveNoKeptOrder) {
  const TensorInfo nhwc = int8({2, 5, 1, 3}, {0, 2, 3, 1});
  EXPECT_FALSE(view_dim_order(nhwc, {2, 15}).has_value());     // merges C and W
  EXPECT_FALSE(view_dim_order(nhwc, {2, 3, 5}).has_value());   // other extents
  EXPECT_FALSE(view_dim_order(nhwc, {10, 3}).has_value());
}

TEST(Layout, SameBytesAgreesWithElementOffsets) {
  const TensorInfo infos[] = {
      int8({2, 5, 1, 3}), int8({2, 5, 1, 3}, {0, 2, 3, 1}), int8({2, 5, 3}, {0, 2, 1}),
      int8({2, 5, 3}), int8({30}), int8({1, 2, 5, 3, 1}, {0, 1, 3, 2, 4}), int8({2, 15}),
      int8({1, 30, 1, 1}, {0, 2, 3, 1}), int8({1, 30})};
  for (const TensorInfo& a : infos)
    for (const TensorInfo& b : infos)
      EXPECT_EQ(same_bytes(a, b), element_offsets(a) == element_offsets(b))
          << info_to_string(a) << " vs " << info_to_string(b);
  TensorInfo wider = int8({2, 15});
  wider.dtype = DType::kInt16;
  EXPECT_FALSE(same_bytes(int8({2, 15}), wider));
}

}  // namespace
}  // namespace cortexm
