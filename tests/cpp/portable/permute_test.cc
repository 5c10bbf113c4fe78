#include "cortexm/portable/permute.h"

#include <algorithm>
#include <numeric>

#include "cortexm/portable/clone_dim_order.h"
#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

// out[c] = in[c'] where c'[perm[i]] = c[i].
std::vector<uint8_t> reference_permute(const std::vector<uint8_t>& in, const Dims& shape,
                                       const std::vector<int32_t>& perm, int32_t es) {
  Dims out_shape(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out_shape[i] = shape[perm[i]];
  const int64_t n = testing::numel(shape);
  std::vector<uint8_t> out(n * es);
  for (int64_t o = 0; o < n; ++o) {
    const Dims c = testing::unravel(o, out_shape);
    Dims ci(shape.size());
    for (size_t i = 0; i < shape.size(); ++i) ci[perm[i]] = c[i];
    std::memcpy(&out[o * es], &in[testing::ravel(ci, shape) * es], es);
  }
  return out;
}

TEST(Permute, RandomShapesEveryElementSize) {
  testing::Random rng(7);
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = static_cast<int>(rng.uniform(0, 6));
    Dims shape = rng.dims(rank, 1, 6);
    if (rank > 0 && rng.coin(0.05)) shape[rng.uniform(0, rank - 1)] = 0;
    std::vector<int32_t> perm(rank);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng.engine());
    for (int32_t es : testing::kElementSizes) {
      PermuteParams p;
      p.input = testing::to_shape(shape);
      for (int i = 0; i < rank; ++i) p.perm[i] = perm[i];
      p.element_size = es;
      Shape out_shape;
      ASSERT_TRUE(permute_prepare(p, &out_shape).ok());
      const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
      std::vector<uint8_t> out(in.size() + 1, 0xAB);
      permute(p, in.data(), out.data());
      EXPECT_EQ(out.back(), 0xAB) << "wrote past the output";
      out.pop_back();
      EXPECT_EQ(out, reference_permute(in, shape, perm, es)) << testing::str(shape) << " es " << es;
      for (int i = 0; i < rank; ++i) EXPECT_EQ(out_shape.dims[i], shape[perm[i]]);
    }
  }
}

TEST(Permute, RejectsBadPermutations) {
  PermuteParams p;
  p.input = testing::to_shape({2, 3, 4});
  p.perm[0] = 0, p.perm[1] = 0, p.perm[2] = 2;
  EXPECT_STREQ(permute_prepare(p).argument, "dims");
  p.perm[1] = 3;
  EXPECT_STREQ(permute_prepare(p).argument, "dims");
  p.perm[1] = 1;
  p.perm[2] = -1;
  EXPECT_EQ(permute_prepare(p).value, -1);
  p.perm[2] = 2;
  EXPECT_TRUE(permute_prepare(p).ok());
  p.element_size = 3;
  EXPECT_STREQ(permute_prepare(p).argument, "element_size");
}

// NCHW contiguous -> channels last and back, against the permute with the same meaning.
TEST(CloneDimOrder, ContiguousToChannelsLastAndBack) {
  testing::Random rng(3);
  for (int iter = 0; iter < 50; ++iter) {
    const Dims shape = rng.dims(4, 1, 7);
    const int es = testing::kElementSizes[iter % 4];
    CloneDimOrderParams p;
    p.shape = testing::to_shape(shape);
    p.element_size = es;
    const int32_t nhwc[] = {0, 2, 3, 1};
    for (int i = 0; i < 4; ++i) p.output_dim_order[i] = nhwc[i];
    PermuteParams pp;
    ASSERT_TRUE(clone_dim_order_prepare(p, &pp).ok());
    const std::vector<uint8_t> in = rng.bytes(testing::numel(shape) * es);
    std::vector<uint8_t> out(in.size());
    clone_dim_order(pp, in.data(), out.data());
    // Physical NHWC: element (n, c, h, w) at ((n * H + h) * W + w) * C + c.
    const int64_t N = shape[0], C = shape[1], H = shape[2], W = shape[3];
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t w = 0; w < W; ++w)
            ASSERT_EQ(0, std::memcmp(&out[(((n * H + h) * W + w) * C + c) * es],
                                     &in[(((n * C + c) * H + h) * W + w) * es], es));
    // Back: input in NHWC order, output contiguous.
    CloneDimOrderParams back = p;
    for (int i = 0; i < 4; ++i) back.input_dim_order[i] = nhwc[i], back.output_dim_order[i] = i;
    ASSERT_TRUE(clone_dim_order_prepare(back, &pp).ok());
    std::vector<uint8_t> round(in.size());
    clone_dim_order(pp, out.data(), round.data());
    EXPECT_EQ(round, in);
  }
}

TEST(CloneDimOrder, RejectsBadDimOrder) {
  CloneDimOrderParams p;
  p.shape = testing::to_shape({2, 3, 4});
  p.output_dim_order[0] = 2, p.output_dim_order[1] = 2, p.output_dim_order[2] = 0;
  PermuteParams pp;
  EXPECT_STREQ(clone_dim_order_prepare(p, &pp).argument, "dim_order");
  p.output_dim_order[1] = 1;
  p.input_dim_order[0] = 5;
  EXPECT_STREQ(clone_dim_order_prepare(p, &pp).argument, "input_dim_order");
}

}  // namespace
}  // namespace cortexm::portable
