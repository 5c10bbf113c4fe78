#include "cortexm/portable/elementary.h"

#include <stdint.h>
#include <string.h>

namespace cortexm::portable {
namespace {

constexpr double kLn2Hi = 6.93147180369123816490e-01;  // ln 2 with 21 trailing zero bits (fdlibm)
constexpr double kLn2Lo = 1.90821492927058770002e-10;  // ln 2 - kLn2Hi
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kInvSqrtPi = 0.564189583547756286948;
constexpr double kInfinity = __builtin_inf();
constexpr double kNaN = __builtin_nan("");

uint64_t bits_of(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

double from_bits(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

bool is_nan(double x) { return x != x; }

// 2^e for e in [-1022, 1023].
double pow2(int64_t e) { return from_bits(static_cast<uint64_t>(e + 1023) << 52); }

// x * 2^k for any k, rounding once when the result is subnormal.
double scale_by_pow2(double x, int64_t k) {
  if (k > 1023) return x * pow2(k - 1023) * pow2(1023);
  if (k < -1022) return x * pow2(k + 1000) * pow2(-1000);
  return x * pow2(k);
}

int64_t round_to_int(double t) { return static_cast<int64_t>(t >= 0 ? t + 0.5 : t - 0.5); }

// Sum of r^n / n! for n = 1..15, |r| <= ln(2) / 2.
double expm1_taylor(double r) {
  double sum = 0.0;
  for (int n = 15; n >= 1; --n) sum = r / n * (1.0 + sum);
  return sum;
}

}  // namespace

double exp_d(double x) {
  if (is_nan(x)) return x;
  if (x > 709.8) return kInfinity;
  if (x < -745.2) return 0.0;
  const int64_t k = round_to_int(x * kInvLn2);
  const double r = (x - static_cast<double>(k) * kLn2Hi) - static_cast<double>(k) * kLn2Lo;
  return scale_by_pow2(1.0 + expm1_taylor(r), k);
}

double expm1_d(double x) {
  if (is_nan(x)) return x;
  if (x > -0.34 && x < 0.34) return expm1_taylor(x);
  return exp_d(x) - 1.0;
}

double log_d(double x) {
  if (is_nan(x) || x < 0) return kNaN;
  if (x == 0) return -kInfinity;
  if (x == kInfinity) return x;
  int64_t e = 0;
  if (x < 0x1p-1022) {  // subnormal: normalize first
    x *= 0x1p54;
    e = -54;
  }
  const uint64_t b = bits_of(x);
  e += static_cast<int64_t>((b >> 52) & 0x7ff) - 1023;
  double m = from_bits((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 1.41421356237309504880) {
    m *= 0.5;
    ++e;
  }
  // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716.
  const double s = (m - 1.0) / (m + 1.0);
  const double s2 = s * s;
  double series = 0.0;
  for (int n = 25; n >= 3; n -= 2) series = s2 * (1.0 / n + series);
  const double log_m = 2.0 * s + 2.0 * s * series;
  return static_cast<double>(e) * kLn2Hi + (static_cast<double>(e) * kLn2Lo + log_m);
}

double log1p_d(double x) {
  const double u = 1.0 + x;
  if (u == 1.0) return x;  // |x| below half an ulp of 1 (NaN falls through below)
  if (!(u < kInfinity)) return log_d(u);
  // log(u) * x / (u - 1) corrects for the rounding of 1 + x (Goldberg's log1p).
  return log_d(u) * (x / (u - 1.0));
}

double tanh_d(double x) {
  if (is_nan(x)) return x;
  const double a = x < 0 ? -x : x;
  double t;
  if (a < 0x1p-28) {
    t = a;
  } else if (a > 22.0) {
    t = 1.0;
  } else {
    const double e = expm1_d(2.0 * a);
    t = e / (e + 2.0);
  }
  return x < 0 ? -t : t;
}

double erf_d(double x) {
  if (is_nan(x)) return x;
  const double a = x < 0 ? -x : x;
  double r;
  if (a < 2.5) {
    // Maclaurin series: 2/sqrt(pi) * sum (-1)^n a^(2n+1) / (n! (2n+1)).
    const double a2 = a * a;
    double term = a, sum = a;
    for (int n = 1; n < 60; ++n) {
      term *= -a2 / n;
      const double next = sum + term / (2 * n + 1);
      if (next == sum) break;
      sum = next;
    }
    r = 2.0 * kInvSqrtPi * sum;
  } else if (a > 6.0) {
    r = 1.0;
  } else {
    // erfc(a) = exp(-a^2) / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))).
    double tail = 0.0;
    for (int n = 80; n >= 1; --n) tail = (0.5 * n) / (a + tail);
    r = 1.0 - exp_d(-a * a) * kInvSqrtPi / (a + tail);
  }
  return x < 0 ? -r : r;
}

double pow_d(double x, double y) {
  if (y == 0 || x == 1.0) return 1.0;
  if (is_nan(x) || is_nan(y)) return kNaN;
  const double ay = y < 0 ? -y : y;
  const bool small_int = ay < 0x1p52 && ay == static_cast<double>(static_cast<int64_t>(ay));
  if (small_int && ay <= 0x1p20) {  // exact repeated squaring
    int64_t n = static_cast<int64_t>(ay);
    double base = x, result = 1.0;
    while (n > 0) {
      if (n & 1) result *= base;
      base *= base;
      n >>= 1;
    }
    return y < 0 ? 1.0 / result : result;
  }
  const bool odd_int = small_int && (static_cast<int64_t>(ay) & 1);
  const double sign = x < 0 && odd_int ? -1.0 : 1.0;
  const double ax = x < 0 ? -x : x;
  if (ax == 0) return sign * (y > 0 ? 0.0 : kInfinity);
  if (ax == kInfinity) return sign * (y > 0 ? kInfinity : 0.0);
  if (x < 0 && !small_int && ay < 0x1p52) return kNaN;  // non-integer power of a negative number
  if (ax == 1.0) return sign;
  x = ax;
  return sign * exp_d(y * log_d(x));
}

}  // namespace cortexm::portable
