#include "cortexm/portable/unary.h"

#include <cmath>
#include <functional>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

struct UnaryCase {
  const char* name;
  UnaryParams params;
  std::function<float(float)> reference;  // torch's formula, written out
};

std::vector<UnaryCase> cases() {
  auto p = [](UnaryOp op, float a = 0.0f, float b = 0.0f, float c = 0.0f) {
    UnaryParams u;
    u.op = op;
    u.a = a;
    u.b = b;
    u.c = c;
    return u;
  };
  auto softplus = [](float x, float beta, float threshold) {
    const float scaled = x * beta;
    return scaled > threshold ? double{x} : std::log1p(std::exp(double{scaled})) / beta;
  };
  auto relu6 = [](float v) { return std::min(std::max(v, 0.0f), 6.0f); };
  return {
      {"relu", p(UnaryOp::kRelu), [](float x) { return x > 0.0f ? x : 0.0f; }},
      {"clamp", p(UnaryOp::kClamp, -1.5f, 2.25f),
       [](float x) { return std::isnan(x) ? x : std::min(std::max(x, -1.5f), 2.25f); }},
      {"clamp_min_above_max", p(UnaryOp::kClamp, 3.0f, 1.0f),
       [](float x) { return std::isnan(x) ? x : 1.0f; }},
      {"clamp_min_only", p(UnaryOp::kClamp, 0.5f, INFINITY),
       [](float x) { return std::isnan(x) ? x : std::max(x, 0.5f); }},
      {"hardsigmoid", p(UnaryOp::kHardsigmoid),
       [=](float x) { return std::isnan(x) ? x : relu6(x + 3.0f) / 6.0f; }},
      {"hardswish", p(UnaryOp::kHardswish),
       [=](float x) { return std::isnan(x) ? x : x * relu6(x + 3.0f) / 6.0f; }},
      // Transcendental ops are computed in double and rounded once: glibc's double functions.
      {"sigmoid", p(UnaryOp::kSigmoid), [](float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); }},
      {"tanh", p(UnaryOp::kTanh), [](float x) { return static_cast<float>(std::tanh(double{x})); }},
      {"silu", p(UnaryOp::kSilu), [](float x) { return static_cast<float>(x / (1.0 + std::exp(-double{x}))); }},
      {"gelu", p(UnaryOp::kGelu),
       [](float x) { return static_cast<float>(x * 0.5 * (1.0 + std::erf(x * M_SQRT1_2))); }},
      {"gelu_tanh", p(UnaryOp::kGeluTanh),
       [](float x) {
         const double inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
         return static_cast<float>(0.5 * x * (1.0 + std::tanh(inner)));
       }},
      {"sqrt", p(UnaryOp::kSqrt), [](float x) { return std::sqrt(x); }},
      {"abs", p(UnaryOp::kAbs), [](float x) { return std::fabs(x); }},
      {"pow2", p(UnaryOp::kPowScalar, 2.0f), [](float x) { return x * x; }},
      {"pow_fraction", p(UnaryOp::kPowScalar, -1.7f), [](float x) { return static_cast<float>(std::pow(double{x}, double{-1.7f})); }},
      {"add_scalar", p(UnaryOp::kAddScalar, 0.3f), [](float x) { return x + 0.3f; }},
      {"sub_scalar", p(UnaryOp::kSubScalar, 0.3f), [](float x) { return x - 0.3f; }},
      {"mul_scalar", p(UnaryOp::kMulScalar, -2.5f), [](float x) { return x * -2.5f; }},
      {"div_scalar", p(UnaryOp::kDivScalar, 0.0f), [](float x) { return x / 0.0f; }},
      {"leaky_relu", p(UnaryOp::kLeakyRelu, 0.173f), [](float x) { return x > 0 ? x : x * 0.173f; }},
      {"elu", p(UnaryOp::kElu, 0.61f, 1.3f, 0.7f),
       [](float x) {
         return x > 0 ? x * 1.3f
                      : static_cast<float>(std::expm1(double{x} * double{0.7f}) * double{0.61f * 1.3f});
       }},
      {"exp", p(UnaryOp::kExp), [](float x) { return static_cast<float>(std::exp(double{x})); }},
      {"log", p(UnaryOp::kLog), [](float x) { return static_cast<float>(std::log(double{x})); }},
      {"rsqrt", p(UnaryOp::kRsqrt), [](float x) { return static_cast<float>(1.0 / std::sqrt(double{x})); }},
      {"neg", p(UnaryOp::kNeg), [](float x) { return -x; }},
      {"reciprocal", p(UnaryOp::kReciprocal), [](float x) { return 1.0f / x; }},
      {"softplus", p(UnaryOp::kSoftplus, 2.5f, 3.0f),
       [=](float x) { return static_cast<float>(softplus(x, 2.5f, 3.0f)); }},
      {"softplus_negative_beta", p(UnaryOp::kSoftplus, -0.5f, 20.0f),
       [=](float x) { return static_cast<float>(softplus(x, -0.5f, 20.0f)); }},
      {"mish", p(UnaryOp::kMish),
       [](float x) { return static_cast<float>(x * std::tanh(std::log1p(std::exp(double{x})))); }},
  };
}

TEST(Unary, EveryOpMatchesItsFormula) {
  testing::Random rng(23);
  std::vector<float> in = rng.floats(1001, 4.0f, /*specials=*/true);
  for (float edge : {-3.0f, 3.0f, -6.0f, 6.0f, 1e-30f, -1e30f, 88.0f, -88.0f, 100.0f})
    in.push_back(edge);
  for (const UnaryCase& c : cases()) {
    UnaryParams params = c.params;
    params.numel = static_cast<int64_t>(in.size());
    ASSERT_TRUE(unary_prepare(params).ok()) << c.name;
    std::vector<float> out(in.size()), want(in.size());
    unary_f32(params, in.data(), out.data());
    for (size_t i = 0; i < in.size(); ++i) want[i] = c.reference(in[i]);
    EXPECT_TRUE(testing::floats_equal(out, want)) << c.name;
    // In place gives the same result.
    std::vector<float> inplace = in;
    unary_f32(params, inplace.data(), inplace.data());
    EXPECT_TRUE(testing::floats_equal(inplace, want)) << c.name << " in place";
  }
}

TEST(Unary, ScalarTimesAlphaRoundsEachFactorToFloat) {
  EXPECT_EQ(scalar_times_alpha(0.1, 3.0), 0.1f * 3.0f);
  EXPECT_EQ(scalar_times_alpha(-0.3, 2.5), 2.5f * -0.3f);
}

TEST(Unary, RejectsBadParams) {
  UnaryParams p;
  p.numel = -1;
  EXPECT_STREQ(unary_prepare(p).argument, "numel");
  p.numel = 1;
  p.op = static_cast<UnaryOp>(99);
  EXPECT_STREQ(unary_prepare(p).argument, "op");
}

}  // namespace
}  // namespace cortexm::portable
