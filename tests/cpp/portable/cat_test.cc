#include "cortexm/portable/cat.h"

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

TEST(Cat, RandomShapesAnyDim) {
  testing::Random rng(11);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 6));
    const Dims base = rng.dims(rank, 1, 4);
    const int dim = static_cast<int>(rng.uniform(0, rank - 1));
    const int count = static_cast<int>(rng.uniform(1, 4));
    const int32_t es = testing::kElementSizes[rng.uniform(0, 3)];
    std::vector<Dims> dims(count, base);
    std::vector<Shape> shapes;
    std::vector<std::vector<uint8_t>> data;
    std::vector<const void*> ptrs;
    for (auto& d : dims) {
      d[dim] = rng.uniform(0, 3);  // empty inputs too
      shapes.push_back(testing::to_shape(d));
      data.push_back(rng.bytes(testing::numel(d) * es));
    }
    for (auto& v : data) ptrs.push_back(v.data());
    CatParams p;
    p.inputs = shapes.data();
    p.num_inputs = count;
    p.dim = rng.coin() ? dim : dim - rank;  // negative dims too
    p.element_size = es;
    Shape out_shape;
    ASSERT_TRUE(cat_prepare(p, &out_shape).ok());
    const Dims od = testing::to_dims(out_shape);
    std::vector<uint8_t> out(testing::numel(od) * es + 1, 0xCD);
    cat(p, ptrs.data(), out.data());
    EXPECT_EQ(out.back(), 0xCD);
    // Reference: output coordinate c along dim falls in input k at c[dim] - offset_k.
    for (int64_t o = 0; o < testing::numel(od); ++o) {
      Dims c = testing::unravel(o, od);
      int k = 0;
      while (c[dim] >= dims[k][dim]) c[dim] -= dims[k++][dim];
      ASSERT_EQ(0, std::memcmp(&out[o * es], &data[k][testing::ravel(c, dims[k]) * es], es));
    }
  }
}

TEST(Cat, RejectsMismatchedShapes) {
  Shape shapes[2] = {testing::to_shape({2, 3}), testing::to_shape({2, 4})};
  CatParams p;
  p.inputs = shapes;
  p.num_inputs = 2;
  p.dim = 0;
  const Error e = cat_prepare(p);
  EXPECT_STREQ(e.argument, "tensors.shape");
  EXPECT_EQ(e.index, 1);
  p.dim = 1;
  EXPECT_TRUE(cat_prepare(p).ok());
  p.dim = 2;
  EXPECT_STREQ(cat_prepare(p).argument, "dim");
  p.dim = -3;
  EXPECT_STREQ(cat_prepare(p).argument, "dim");
  p.num_inputs = 0;
  EXPECT_STREQ(cat_prepare(p).argument, "tensors");
  Shape scalar[1];
  p.inputs = scalar;
  p.num_inputs = 1;
  p.dim = 0;
  EXPECT_STREQ(cat_prepare(p).argument, "tensors.rank");
}

}  // namespace
}  // namespace cortexm::portable
