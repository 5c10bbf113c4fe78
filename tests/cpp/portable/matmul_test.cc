#include "cortexm/portable/matmul.h"

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

// C[i, j] = 0, then + A[i, p] * B[p, j] for p ascending, in float.
std::vector<float> reference_mm(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                                int64_t k, int64_t n) {
  std::vector<float> c(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[p * n + j];
      c[i * n + j] = s;
    }
  return c;
}

TEST(Matmul, MmAndBmmOddSizes) {
  testing::Random rng(53);
  for (int iter = 0; iter < 120; ++iter) {
    MatmulParams p;
    p.batch = rng.uniform(1, 3);
    p.m = rng.uniform(0, 9);
    p.k = rng.uniform(0, 40);
    p.n = rng.coin(0.1) ? rng.uniform(500, 530) : rng.uniform(0, 11);  // across the column block
    ASSERT_TRUE(matmul_prepare(p).ok());
    const std::vector<float> a = rng.floats(p.batch * p.m * p.k), b = rng.floats(p.batch * p.k * p.n);
    std::vector<float> out(p.batch * p.m * p.n + 1, 777.0f);
    bmm_f32(p, a.data(), b.data(), out.data());
    EXPECT_EQ(out.back(), 777.0f);
    out.pop_back();
    std::vector<float> want;
    for (int64_t i = 0; i < p.batch; ++i) {
      const std::vector<float> ai(a.begin() + i * p.m * p.k, a.begin() + (i + 1) * p.m * p.k);
      const std::vector<float> bi(b.begin() + i * p.k * p.n, b.begin() + (i + 1) * p.k * p.n);
      const std::vector<float> ci = reference_mm(ai, bi, p.m, p.k, p.n);
      want.insert(want.end(), ci.begin(), ci.end());
    }
    EXPECT_TRUE(testing::floats_equal(out, want)) << p.m << "x" << p.k << "x" << p.n;
    MatmulParams one = p;
    one.batch = 1;
    std::vector<float> mm_out(p.m * p.n);
    mm_f32(one, a.data(), b.data(), mm_out.data());
    EXPECT_TRUE(testing::floats_equal(mm_out, reference_mm(a, b, p.m, p.k, p.n)));
  }
  MatmulParams bad;
  bad.k = -1;
  EXPECT_STREQ(matmul_prepare(bad).argument, "k");
}

TEST(Matmul, AddmmBroadcastsSelf) {
  testing::Random rng(59);
  for (int iter = 0; iter < 120; ++iter) {
    AddmmParams p;
    p.m = rng.uniform(1, 7), p.k = rng.uniform(1, 20), p.n = rng.uniform(1, 9);
    const int kind = static_cast<int>(rng.uniform(0, 5));
    const testing::Dims self_dims[] = {{}, {1}, {p.n}, {p.m, 1}, {1, p.n}, {p.m, p.n}};
    const testing::Dims sd = self_dims[kind];
    p.self = testing::to_shape(sd);
    p.alpha = rng.coin() ? 1.0f : 0.7f;
    p.beta = rng.coin(0.2) ? 0.0f : (rng.coin() ? 1.0f : -1.3f);
    ASSERT_TRUE(addmm_prepare(p).ok());
    const std::vector<float> self = rng.floats(testing::numel(sd)), a = rng.floats(p.m * p.k),
                             b = rng.floats(p.k * p.n);
    std::vector<float> out(p.m * p.n);
    addmm_f32(p, self.data(), a.data(), b.data(), out.data());
    std::vector<float> want = reference_mm(a, b, p.m, p.k, p.n);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        float& w = want[i * p.n + j];
        if (p.alpha != 1.0f) w *= p.alpha;
        if (p.beta == 0.0f) continue;
        const int64_t si = sd.size() == 2 ? (sd[0] == 1 ? 0 : i) : 0;
        const int64_t sj = sd.empty() ? 0 : (sd.back() == 1 ? 0 : j);
        const int64_t cols = sd.empty() ? 1 : sd.back();
        w += p.beta * self[si * cols + sj];
      }
    EXPECT_TRUE(testing::floats_equal(out, want)) << "self kind " << kind;
  }
  AddmmParams bad;
  bad.m = 2, bad.k = 2, bad.n = 3;
  bad.self = testing::to_shape({2});
  EXPECT_STREQ(addmm_prepare(bad).argument, "self.shape");
  bad.self = testing::to_shape({1, 2, 3});
  EXPECT_STREQ(addmm_prepare(bad).argument, "self.rank");
}

TEST(Matmul, LinearEqualsGemmOfTransposedWeightPlusBias) {
  testing::Random rng(61);
  for (int iter = 0; iter < 120; ++iter) {
    LinearParams p;
    p.m = rng.uniform(0, 9), p.k = rng.uniform(0, 70), p.n = rng.uniform(0, 13);
    ASSERT_TRUE(linear_prepare(p).ok());
    const std::vector<float> x = rng.floats(p.m * p.k), w = rng.floats(p.n * p.k), bias = rng.floats(p.n);
    std::vector<float> wt(p.k * p.n);
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t q = 0; q < p.k; ++q) wt[q * p.n + j] = w[j * p.k + q];
    std::vector<float> want = reference_mm(x, wt, p.m, p.k, p.n);
    std::vector<float> out(p.m * p.n);
    linear_f32(p, x.data(), w.data(), nullptr, out.data());
    EXPECT_TRUE(testing::floats_equal(out, want));
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) want[i * p.n + j] += bias[j];
    linear_f32(p, x.data(), w.data(), bias.data(), out.data());
    EXPECT_TRUE(testing::floats_equal(out, want));
    // The scratch (transposed weight + gemm) path gives the same bits.
    std::vector<float> scratch(linear_scratch_bytes(p) / sizeof(float) + 1);
    std::vector<float> out2(p.m * p.n);
    linear_f32(p, x.data(), w.data(), bias.data(), out2.data(), scratch.data());
    EXPECT_TRUE(testing::floats_equal(out2, want));
  }
}

}  // namespace
}  // namespace cortexm::portable
