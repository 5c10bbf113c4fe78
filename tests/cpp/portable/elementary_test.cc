#include "cortexm/portable/elementary.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "portable/test_util.h"

namespace cortexm::portable {
namespace {

// Distance in units in the last place between two finite doubles of the same sign.
int64_t ulps_apart(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  if (ia < 0) ia = std::numeric_limits<int64_t>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<int64_t>::min() - ib;
  return ia > ib ? ia - ib : ib - ia;
}

::testing::AssertionResult close(double got, double want, int64_t max_ulps, double at) {
  if (std::isnan(want) && std::isnan(got)) return ::testing::AssertionSuccess();
  if (got == want) return ::testing::AssertionSuccess();
  if (std::isfinite(want) && std::isfinite(got) && ulps_apart(got, want) <= max_ulps)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "at x = " << at << ": got " << got << ", want " << want;
}

// Sweep of doubles over [lo, hi] with a few thousand points, plus random ones.
std::vector<double> sweep(double lo, double hi) {
  std::vector<double> xs;
  for (int i = 0; i <= 4000; ++i) xs.push_back(lo + (hi - lo) * i / 4000.0);
  testing::Random rng(7);
  for (float v : rng.floats(4000, static_cast<float>(hi > -lo ? hi : -lo), /*specials=*/false))
    if (v >= lo && v <= hi) xs.push_back(v);
  return xs;
}

TEST(Elementary, ExpMatchesLibm) {
  for (double x : sweep(-745.0, 709.0)) EXPECT_TRUE(close(exp_d(x), std::exp(x), 4, x));
  for (double x : sweep(-1.0, 1.0)) EXPECT_TRUE(close(exp_d(x), std::exp(x), 2, x));
  EXPECT_EQ(exp_d(0.0), 1.0);
  EXPECT_EQ(exp_d(800.0), INFINITY);
  EXPECT_EQ(exp_d(-800.0), 0.0);
  EXPECT_TRUE(std::isnan(exp_d(NAN)));
  EXPECT_EQ(exp_d(-INFINITY), 0.0);
  EXPECT_EQ(exp_d(INFINITY), INFINITY);
  // Subnormal results round once.
  EXPECT_TRUE(close(exp_d(-740.0), std::exp(-740.0), 1, -740.0));
}

TEST(Elementary, Expm1KeepsRelativeAccuracyNearZero) {
  for (double x : sweep(-2.0, 2.0)) EXPECT_TRUE(close(expm1_d(x), std::expm1(x), 8, x));
  for (double x : {1e-300, -1e-20, 3e-9, -0.3399, 0.3399}) EXPECT_TRUE(close(expm1_d(x), std::expm1(x), 2, x));
}

TEST(Elementary, LogMatchesLibm) {
  for (double x : sweep(1e-6, 1e6)) EXPECT_TRUE(close(log_d(x), std::log(x), 4, x));
  for (double x : sweep(0.5, 2.0)) EXPECT_TRUE(close(log_d(x), std::log(x), 4, x));
  for (double x : {1e-310, 4.9e-324, 1e300, 1.0 + 1e-15, 0.9999999}) EXPECT_TRUE(close(log_d(x), std::log(x), 4, x));
  EXPECT_EQ(log_d(1.0), 0.0);
  EXPECT_EQ(log_d(0.0), -INFINITY);
  EXPECT_EQ(log_d(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(log_d(-1.0)));
}

TEST(Elementary, Log1pKeepsRelativeAccuracyNearZero) {
  for (double x : sweep(-0.999, 10.0)) EXPECT_TRUE(close(log1p_d(x), std::log1p(x), 8, x));
  for (double x : {1e-300, -1e-20, 3e-9, 1e-17, 1e300, 1.5e-16}) EXPECT_TRUE(close(log1p_d(x), std::log1p(x), 4, x));
  EXPECT_EQ(log1p_d(-1.0), -INFINITY);
  EXPECT_EQ(log1p_d(INFINITY), INFINITY);
  EXPECT_TRUE(std::isnan(log1p_d(-2.0)));
  EXPECT_TRUE(std::isnan(log1p_d(NAN)));
}

TEST(Elementary, TanhMatchesLibm) {
  for (double x : sweep(-30.0, 30.0)) EXPECT_TRUE(close(tanh_d(x), std::tanh(x), 8, x));
  for (double x : sweep(-0.01, 0.01)) EXPECT_TRUE(close(tanh_d(x), std::tanh(x), 8, x));
  EXPECT_EQ(tanh_d(-0.0), 0.0);
  EXPECT_TRUE(std::signbit(tanh_d(-0.0)));
  EXPECT_EQ(tanh_d(INFINITY), 1.0);
  EXPECT_EQ(tanh_d(-INFINITY), -1.0);
}

TEST(Elementary, ErfMatchesLibm) {
  for (double x : sweep(-7.0, 7.0)) EXPECT_TRUE(close(erf_d(x), std::erf(x), 64, x));
  for (double x : sweep(-0.5, 0.5)) EXPECT_TRUE(close(erf_d(x), std::erf(x), 8, x));
  EXPECT_EQ(erf_d(INFINITY), 1.0);
  EXPECT_EQ(erf_d(-INFINITY), -1.0);
  EXPECT_TRUE(std::isnan(erf_d(NAN)));
}

TEST(Elementary, PowMatchesLibm) {
  for (double y : {-1.7, 0.5, 2.0, 3.0, -2.0, 0.3333, 7.25, 31.0}) {
    for (double x : sweep(1e-3, 40.0)) {
      const double want = std::pow(x, y);
      if (std::fabs(std::log(want)) > 700) continue;
      EXPECT_TRUE(close(pow_d(x, y), want, 64, x)) << "y = " << y;
    }
  }
  EXPECT_EQ(pow_d(-2.0, 3.0), -8.0);
  EXPECT_EQ(pow_d(-2.0, 2.0), 4.0);
  EXPECT_EQ(pow_d(-2.0, 1e20), std::pow(-2.0, 1e20));
  EXPECT_EQ(pow_d(-0.5, 3e15 + 1), std::pow(-0.5, 3e15 + 1));  // odd power of a negative number
  EXPECT_TRUE(std::isnan(pow_d(-2.0, 0.5)));
  EXPECT_EQ(pow_d(NAN, 0.0), 1.0);
  EXPECT_EQ(pow_d(0.0, -1.5), INFINITY);
  EXPECT_EQ(pow_d(0.0, 2.5), 0.0);
  EXPECT_EQ(pow_d(INFINITY, -1.0), 0.0);
  for (double x : {-double{INFINITY}, -0.0, 0.0, double{INFINITY}, -1.0, 1.0, -0.5, 2.0})
    for (double y : {-double{INFINITY}, -3.0, -1.7, 0.5, 3.0, double{INFINITY}, double{NAN}})
      EXPECT_TRUE(close(pow_d(x, y), std::pow(x, y), 2, x)) << "y = " << y;
}

// Rounded to float, the results equal glibc's double functions rounded to float: what the portable
// float kernels return on every target.
TEST(Elementary, FloatResultsAreCorrectlyRounded) {
  testing::Random rng(11);
  int mismatches = 0;
  for (float v : rng.floats(20000, 12.0f, /*specials=*/false)) {
    const double x = v;
    mismatches += static_cast<float>(exp_d(x)) != static_cast<float>(std::exp(x));
    mismatches += static_cast<float>(tanh_d(x)) != static_cast<float>(std::tanh(x));
    mismatches += static_cast<float>(erf_d(x)) != static_cast<float>(std::erf(x));
    if (x > 0) mismatches += static_cast<float>(log_d(x)) != static_cast<float>(std::log(x));
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace cortexm::portable
