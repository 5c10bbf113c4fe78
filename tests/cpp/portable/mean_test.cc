#include "cortexm/portable/mean.h"

#include <algorithm>
#include <cmath>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

TEST(Mean, RandomDimSets) {
  testing::Random rng(37);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = static_cast<int>(rng.uniform(0, 6));
    Dims shape = rng.dims(rank, 1, 5);
    if (rank > 0 && rng.coin(0.05)) shape[rng.uniform(0, rank - 1)] = 0;
    std::vector<int64_t> dims;
    std::vector<bool> reduced(rank, false);
    for (int d = 0; d < rank; ++d)
      if (rng.coin()) dims.push_back(rng.coin() ? d : d - rank), reduced[d] = true;
    std::shuffle(dims.begin(), dims.end(), rng.engine());
    if (dims.empty()) std::fill(reduced.begin(), reduced.end(), true);
    MeanParams p;
    p.input = testing::to_shape(shape);
    p.num_dims = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) p.dims[i] = dims[i];
    p.keepdim = rng.coin();
    Shape out_shape;
    ASSERT_TRUE(mean_prepare(p, &out_shape).ok());
    // Reference: accumulate every input element into its output slot in input order.
    Dims kept_shape;
    int64_t count = 1;
    for (int d = 0; d < rank; ++d) {
      if (!reduced[d]) kept_shape.push_back(shape[d]);
      else count *= shape[d];
      if (reduced[d] && p.keepdim) EXPECT_EQ(out_shape.dims[d], 1);
    }
    const std::vector<float> x = rng.floats(testing::numel(shape));
    std::vector<double> acc(testing::numel(kept_shape), 0.0);
    for (int64_t i = 0; i < testing::numel(shape); ++i) {
      const Dims c = testing::unravel(i, shape);
      Dims kc;
      for (int d = 0; d < rank; ++d)
        if (!reduced[d]) kc.push_back(c[d]);
      acc[testing::ravel(kc, kept_shape)] += x[i];
    }
    std::vector<float> want(acc.size()), out(acc.size());
    for (size_t j = 0; j < acc.size(); ++j) want[j] = static_cast<float>(acc[j] / static_cast<double>(count));
    EXPECT_EQ(testing::numel(testing::to_dims(out_shape)), static_cast<int64_t>(want.size()));
    mean_f32(p, x.data(), out.data());
    EXPECT_TRUE(testing::floats_equal(out, want)) << testing::str(shape) << " " << testing::str(dims);
  }
}

TEST(Mean, EmptyReductionIsNaNAndRepeatsAreRejected) {
  MeanParams p;
  p.input = testing::to_shape({2, 0});
  p.num_dims = 1;
  p.dims[0] = 1;
  ASSERT_TRUE(mean_prepare(p).ok());
  float out[2];
  mean_f32(p, nullptr, out);
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  p.num_dims = 2;
  p.dims[1] = -1;
  const Error e = mean_prepare(p);
  EXPECT_STREQ(e.argument, "dim");
  EXPECT_EQ(e.index, 1);
  p.dims[1] = 2;
  EXPECT_STREQ(mean_prepare(p).argument, "dim");
}

}  // namespace
}  // namespace cortexm::portable
