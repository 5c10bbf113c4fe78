#include "cortexm/portable/softmax.h"

#include <cmath>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

using testing::Dims;

// Softmax over the slice of `x` through coordinate c along dim, computed on a gathered copy.
void reference(const std::vector<float>& x, const Dims& shape, int dim, bool log,
               std::vector<float>* y) {
  const int64_t n = testing::numel(shape);
  for (int64_t i = 0; i < n; ++i) {
    Dims c = testing::unravel(i, shape);
    if (c[dim] != 0) continue;
    std::vector<float> row(shape[dim]);
    std::vector<int64_t> at(shape[dim]);
    for (int64_t k = 0; k < shape[dim]; ++k) {
      c[dim] = k;
      at[k] = testing::ravel(c, shape);
      row[k] = x[at[k]];
    }
    float max = -INFINITY;
    for (float v : row) max = v > max ? v : max;
    double sum = 0.0;
    for (float v : row) sum += std::exp(static_cast<double>(v - max));
    for (int64_t k = 0; k < shape[dim]; ++k) {
      const float shifted = row[k] - max;
      (*y)[at[k]] = log ? static_cast<float>(static_cast<double>(shifted) - std::log(sum))
                        : static_cast<float>(std::exp(static_cast<double>(shifted)) / sum);
    }
  }
}

TEST(Softmax, AnyDimAnyRank) {
  testing::Random rng(31);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = static_cast<int>(rng.uniform(1, 6));
    const Dims shape = rng.dims(rank, 1, 6);
    const int dim = static_cast<int>(rng.uniform(0, rank - 1));
    std::vector<float> x = rng.floats(testing::numel(shape), 4.0f);
    if (rng.coin(0.3)) x[0] = 90.0f;  // exp would overflow without the max shift
    for (bool log : {false, true}) {
      SoftmaxParams p;
      p.input = testing::to_shape(shape);
      p.dim = rng.coin() ? dim : dim - rank;
      ASSERT_TRUE(softmax_prepare(p).ok());
      std::vector<float> out(x.size()), want(x.size());
      (log ? log_softmax_f32 : softmax_f32)(p, x.data(), out.data());
      reference(x, shape, dim, log, &want);
      EXPECT_TRUE(testing::floats_equal(out, want)) << testing::str(shape) << " dim " << dim;
      for (float v : out) EXPECT_TRUE(std::isfinite(v));
    }
  }
}

TEST(Softmax, ScalarAndBadDims) {
  SoftmaxParams p;  // rank 0
  p.dim = 0;
  EXPECT_TRUE(softmax_prepare(p).ok());
  const float x = 5.0f;
  float y = 0.0f;
  softmax_f32(p, &x, &y);
  EXPECT_EQ(y, 1.0f);
  log_softmax_f32(p, &x, &y);
  EXPECT_EQ(y, 0.0f);
  p.dim = 1;
  EXPECT_STREQ(softmax_prepare(p).argument, "dim");
  p.input = testing::to_shape({2, 3});
  p.dim = -3;
  EXPECT_STREQ(softmax_prepare(p).argument, "dim");
  p.dim = -2;
  EXPECT_TRUE(softmax_prepare(p).ok());
}

}  // namespace
}  // namespace cortexm::portable
