#include "cortexm/kernels/quantize_per_tensor.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "random_data.h"

namespace cortexm {
namespace {

constexpr size_t kGuardElements = 16;

// Builder with awkward defaults: an odd count, a scale that is not a power of two, a nonzero
// zero point, a narrowed [quant_min, quant_max] and inputs well past both ends of the range.
class QuantizeTester {
 public:
  QuantizeTester& dtype(QuantDtype d) { dtype_ = d; return *this; }
  QuantizeTester& scale(float s) { scale_ = s; return *this; }
  QuantizeTester& zero_point(int32_t z) { zero_point_ = z; return *this; }
  QuantizeTester& range(int32_t lo, int32_t hi) { qmin_ = lo; qmax_ = hi; return *this; }
  QuantizeTester& count(size_t n) { count_ = n; return *this; }
  QuantizeTester& seed(uint32_t s) { seed_ = s; return *this; }

  void Test() const {
    if (dtype_ == QuantDtype::kInt8)
      Run<int8_t>();
    else
      Run<int16_t>();
  }

 private:
  QuantizeParams params() const {
    QuantizeParams p;
    p.scale = scale_;
    p.zero_point = zero_point_;
    p.quant_min = qmin_;
    p.quant_max = qmax_;
    p.dtype = dtype_;
    return p;
  }

  // Uniform values reaching 20 steps past both ends, exact ties, and the special values.
  std::vector<float> inputs() const {
    testing::RandomData rng(seed_);
    std::uniform_real_distribution<float> steps(float(qmin_ - zero_point_ - 20),
                                                float(qmax_ - zero_point_ + 20));
    std::vector<float> x(count_);
    for (auto& v : x) v = steps(rng.engine()) * scale_;
    const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                              -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), FLT_MAX, -FLT_MAX,
                              1e30f, -1e30f, FLT_MIN, -FLT_MIN, 1e-45f, 0.5f * scale_,
                              -0.5f * scale_, 1.5f * scale_, -1.5f * scale_, 2.5f * scale_,
                              -2.5f * scale_, 3e9f * scale_, -3e9f * scale_};
    for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]) && i < x.size(); ++i)
      x[i * 7 % x.size()] = specials[i];
    return x;
  }

  template <typename T>
  void Run() const {
    const QuantizeParams p = params();
    ASSERT_TRUE(quantize_per_tensor_prepare(p).ok());
    const std::vector<float> x = inputs();

    // Independent: libm's nearbyint in the default rounding mode (halves to even), clamped in
    // double; NaN takes the zero point's place, as documented.
    const float inv_scale = 1.0f / scale_;
    std::vector<T> expected(count_);
    for (size_t i = 0; i < count_; ++i) {
      const float v = x[i] * inv_scale;
      double q = std::isnan(v) ? zero_point_ : zero_point_ + double(std::nearbyint(v));
      q = q < qmin_ ? qmin_ : (q > qmax_ ? qmax_ : q);
      expected[i] = static_cast<T>(q);
    }
    std::vector<T> got(count_ + kGuardElements, T{77});
    quantize_per_tensor(p, x.data(), got.data(), count_);
    for (size_t i = 0; i < count_; ++i)
      ASSERT_EQ(int32_t{got[i]}, int32_t{expected[i]}) << "x = " << x[i] << " at " << i;
    for (size_t i = count_; i < got.size(); ++i) ASSERT_EQ(got[i], T{77}) << "overrun at " << i;

    // In place, as the planner narrows it: the output from the float input's first byte, the
    // selected variant and the reference each equal to the run on separate buffers.
    for (auto* kernel : {&quantize_per_tensor, &quantize_per_tensor_reference}) {
      std::vector<float> shared(x);
      kernel(p, shared.data(), shared.data(), count_);
      std::vector<T> in_place(count_);
      if (count_ > 0) std::memcpy(in_place.data(), shared.data(), count_ * sizeof(T));
      for (size_t i = 0; i < count_; ++i)
        ASSERT_EQ(int32_t{in_place[i]}, int32_t{got[i]})
            << (kernel == &quantize_per_tensor ? "variant" : "reference") << " in place, x = " << x[i] << " at " << i;
    }

    // Within half an LSB of exact math for every finite input, give or take the float32 error of
    // 1 / scale and of the product (a few ulp of x / scale).
    for (size_t i = 0; i < count_; ++i) {
      if (!std::isfinite(x[i])) continue;
      const double exact = double(x[i]) / double(scale_);
      double q = exact + zero_point_;
      q = q < qmin_ ? qmin_ : (q > qmax_ ? qmax_ : q);
      const double tolerance = 0.5 + std::abs(exact) * 3 * FLT_EPSILON + 1e-9;
      ASSERT_LE(std::abs(q - double(got[i])), tolerance) << "x = " << x[i];
    }

    // Dequantize every value of the dtype range; bit-exact (q - zero_point) * scale in float32.
    std::vector<T> q_all;
    for (int32_t q = qmin_; q <= qmax_; ++q) q_all.push_back(static_cast<T>(q));
    std::vector<float> deq(q_all.size() + kGuardElements, 1234.5f);
    dequantize_per_tensor(p, q_all.data(), deq.data(), q_all.size());
    for (size_t i = 0; i < q_all.size(); ++i) {
      const float want = float(int32_t{q_all[i]} - zero_point_) * scale_;
      ASSERT_EQ(std::memcmp(&deq[i], &want, sizeof(float)), 0) << "q = " << q_all[i];
    }
    for (size_t i = q_all.size(); i < deq.size(); ++i) ASSERT_EQ(deq[i], 1234.5f);

    // Quantizing the dequantized values gives them back.
    std::vector<T> round_trip(q_all.size());
    quantize_per_tensor(p, deq.data(), round_trip.data(), q_all.size());
    ASSERT_EQ(round_trip, q_all);
  }

  QuantDtype dtype_ = QuantDtype::kInt8;
  float scale_ = 0.0371f;
  int32_t zero_point_ = -13;
  int32_t qmin_ = -127, qmax_ = 120;
  size_t count_ = 1001;
  uint32_t seed_ = 1;
};

TEST(QuantizePerTensor, Int8AwkwardDefaults) { QuantizeTester().Test(); }
TEST(QuantizePerTensor, Int8FullRange) { QuantizeTester().range(-128, 127).seed(2).Test(); }
TEST(QuantizePerTensor, Int8ExtremeZeroPoints) {
  QuantizeTester().range(-128, 127).zero_point(-128).seed(3).Test();
  QuantizeTester().range(-128, 127).zero_point(127).seed(4).Test();
}
// Power-of-two scale: x * (1 / scale) is exact, so inputs land exactly on halves.
TEST(QuantizePerTensor, HalvesRoundToEven) {
  QuantizeTester().scale(0.25f).zero_point(0).range(-128, 127).seed(5).Test();
  const float x[] = {0.125f, 0.375f, 0.625f, 0.875f, -0.125f, -0.375f, -0.625f, -0.875f};
  const int8_t want[] = {0, 2, 2, 4, 0, -2, -2, -4};  // x / 0.25 = 0.5, 1.5, 2.5, 3.5, ...
  QuantizeParams p;
  p.scale = 0.25f;
  int8_t got[8];
  quantize_per_tensor(p, x, got, 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], want[i]) << x[i];
}
TEST(QuantizePerTensor, NanIsZeroPointAndInfinitiesSaturate) {
  QuantizeParams p;
  p.scale = 0.1f;
  p.zero_point = 5;
  p.quant_min = -100;
  p.quant_max = 100;
  const float x[] = {std::nanf(""), std::numeric_limits<float>::infinity(),
                     -std::numeric_limits<float>::infinity(), 1e38f, -1e38f};
  int8_t got[5];
  quantize_per_tensor(p, x, got, 5);
  EXPECT_EQ(got[0], 5);
  EXPECT_EQ(got[1], 100);
  EXPECT_EQ(got[2], -100);
  EXPECT_EQ(got[3], 100);
  EXPECT_EQ(got[4], -100);
  p.quant_min = 10;  // zero point outside [quant_min, quant_max]: NaN clamps like 0.0 does
  quantize_per_tensor(p, x, got, 1);
  EXPECT_EQ(got[0], 10);
}
TEST(QuantizePerTensor, Int16) {
  QuantizeTester().dtype(QuantDtype::kInt16).scale(0.00031f).zero_point(0).range(-32768, 32767)
      .count(4099).Test();
  QuantizeTester().dtype(QuantDtype::kInt16).scale(3.7f).zero_point(-32768)
      .range(-32768, 32767).seed(6).Test();
  QuantizeTester().dtype(QuantDtype::kInt16).scale(1e-3f).zero_point(1234).range(-1000, 30000)
      .seed(7).Test();
}
TEST(QuantizePerTensor, TinyAndHugeScales) {
  QuantizeTester().scale(1e-20f).seed(8).Test();
  QuantizeTester().scale(3e15f).seed(9).Test();
  QuantizeTester().dtype(QuantDtype::kInt16).scale(2e-30f).zero_point(7).range(-32768, 32767)
      .seed(10).Test();
}
TEST(QuantizePerTensor, EmptyAndSingle) {
  QuantizeTester().count(1).seed(11).Test();
  QuantizeParams p;
  quantize_per_tensor(p, nullptr, nullptr, 0);
  dequantize_per_tensor(p, nullptr, nullptr, 0);
}

TEST(QuantizePerTensor, RandomizedAwkwardCases) {
  testing::RandomData rng(2024);
  std::uniform_real_distribution<float> log_scale(-12.0f, 6.0f);
  for (int i = 0; i < 300; ++i) {
    const bool is_int8 = rng.uniform(0, 1) == 0;
    const int32_t type_min = is_int8 ? -128 : -32768, type_max = is_int8 ? 127 : 32767;
    const int32_t lo = rng.uniform(type_min, type_max);
    QuantizeTester()
        .dtype(is_int8 ? QuantDtype::kInt8 : QuantDtype::kInt16)
        .scale(std::exp2(log_scale(rng.engine())))
        .zero_point(rng.uniform(type_min, type_max))
        .range(lo, rng.uniform(lo, type_max))
        .count(size_t(rng.uniform(1, 300)))
        .seed(uint32_t(i))
        .Test();
  }
}

TEST(QuantizePerTensor, PrepareRejectsBadParams) {
  auto rejects = [](QuantizeParams p, const char* argument) {
    const Error e = quantize_per_tensor_prepare(p);
    EXPECT_FALSE(e.ok());
    EXPECT_STREQ(e.argument, argument);
    return e;
  };
  QuantizeParams p;
  EXPECT_TRUE(quantize_per_tensor_prepare(p).ok());
  for (float bad : {0.0f, -0.0f, -1.0f, std::nanf(""), std::numeric_limits<float>::infinity()}) {
    QuantizeParams q = p;
    q.scale = bad;
    rejects(q, "scale");
  }
  QuantizeParams q = p;
  q.zero_point = 128;
  EXPECT_EQ(rejects(q, "zero_point").value, 128);
  q.dtype = QuantDtype::kInt16;
  EXPECT_TRUE(quantize_per_tensor_prepare(q).ok());
  q.zero_point = -32769;
  EXPECT_EQ(rejects(q, "zero_point").value, -32769);
  q = p;
  q.quant_min = -129;
  EXPECT_EQ(rejects(q, "quant_min").value, -129);
  q = p;
  q.quant_max = 128;
  EXPECT_EQ(rejects(q, "quant_max").value, 128);
  q.dtype = QuantDtype::kInt16;
  EXPECT_TRUE(quantize_per_tensor_prepare(q).ok());
  q.quant_max = 32768;
  EXPECT_EQ(rejects(q, "quant_max").value, 32768);
  q = p;
  q.quant_min = 5;
  q.quant_max = 4;
  EXPECT_EQ(rejects(q, "quant_min").value, 5);
  q = p;
  q.dtype = static_cast<QuantDtype>(7);
  rejects(q, "dtype");
}

}  // namespace
}  // namespace cortexm
