// Test-side reference of gemmlowp's FixedPoint<int32, IntegerBits> as TFLite's reference softmax
// and log_softmax use it, written with typed fixed-point values (not the kernels' raw helpers):
// the independent arithmetic the softmax kernel tests compare with.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace cortexm::testing::gemmlowp_ref {

inline int32_t srdhm(int32_t a, int32_t b) {  // SaturatingRoundingDoublingHighMul
  if (a == std::numeric_limits<int32_t>::min() && b == a) return std::numeric_limits<int32_t>::max();
  const int64_t ab = static_cast<int64_t>(a) * b;
  const int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return static_cast<int32_t>((ab + nudge) / (int64_t(1) << 31));
}

inline int32_t rounding_divide(int32_t x, int e) {  // RoundingDivideByPOT, as exact rational rounding
  if (e == 0) return x;
  if (e >= 32) return 0;
  const int64_t d = int64_t(1) << e;
  const int64_t q = x / d, r = x % d;  // truncation toward zero
  const int64_t twice = 2 * (r < 0 ? -r : r);
  return static_cast<int32_t>(twice >= d ? q + (x < 0 ? -1 : 1) : q);
}

inline int32_t saturating_shift(int32_t x, int e) {  // SaturatingRoundingMultiplyByPOT<e>
  if (e <= 0) return rounding_divide(x, -e);
  const int64_t v = static_cast<int64_t>(x) * (int64_t(1) << e);
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

inline int32_t wrap(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

template <int IntegerBits>
struct Fx {
  int32_t raw;
  static Fx from_raw(int32_t r) { return Fx{r}; }
  static Fx one() { return Fx{IntegerBits == 0 ? std::numeric_limits<int32_t>::max()
                                                 : int32_t(1) << (31 - IntegerBits)}; }
  template <int Exponent>  // 2^Exponent
  static Fx pot() { return Fx{int32_t(1) << (31 - IntegerBits + Exponent)}; }
};

template <int A> Fx<A> operator+(Fx<A> a, Fx<A> b) { return {wrap(int64_t(a.raw) + b.raw)}; }
template <int A> Fx<A> operator-(Fx<A> a, Fx<A> b) { return {wrap(int64_t(a.raw) - b.raw)}; }
template <int A, int B> Fx<A + B> operator*(Fx<A> a, Fx<B> b) { return {srdhm(a.raw, b.raw)}; }

template <int Dst, int Src>
Fx<Dst> rescale(Fx<Src> x) { return {saturating_shift(x.raw, Src - Dst)}; }

inline Fx<0> exp_on_interval_between_negative_one_quarter_and_0_excl(Fx<0> a) {
  const Fx<0> constant_term{1895147668};
  const Fx<0> one_third{715827883};
  const Fx<0> x = a + Fx<0>::pot<-3>();
  const Fx<0> x2 = x * x, x3 = x2 * x, x4 = x2 * x2;
  const Fx<0> x4_over_4{rounding_divide(x4.raw, 2)};
  const Fx<0> poly{rounding_divide((((x4_over_4 + x3) * one_third) + x2).raw, 1)};
  return constant_term + constant_term * (x + poly);
}

template <int IntegerBits>
Fx<0> exp_on_negative_values(Fx<IntegerBits> a) {
  constexpr int kFractionalBits = 31 - IntegerBits;
  const Fx<IntegerBits> quarter = Fx<IntegerBits>::template pot<-2>();
  const Fx<IntegerBits> mask{quarter.raw - 1};
  const Fx<IntegerBits> a_mod = Fx<IntegerBits>{a.raw & mask.raw} - quarter;
  Fx<0> result = exp_on_interval_between_negative_one_quarter_and_0_excl(rescale<0>(a_mod));
  const int32_t remainder = (a_mod - a).raw;
  const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int exponent = -2; exponent <= 4; ++exponent)
    if (IntegerBits > exponent && (remainder & (int32_t(1) << (kFractionalBits + exponent))))
      result = result * Fx<0>{multipliers[exponent + 2]};
  return a.raw == 0 ? Fx<0>::one() : result;
}

inline Fx<0> one_over_one_plus_x_for_x_in_0_1(Fx<0> a) {
  const int64_t sum = int64_t(a.raw) + Fx<0>::one().raw;
  const Fx<0> half_denominator{static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2)};
  Fx<2> x = Fx<2>{1515870810} + half_denominator * Fx<2>{-1010580540};
  for (int i = 0; i < 3; ++i) {
    const Fx<2> one_minus = Fx<2>::one() - half_denominator * x;
    x = x + rescale<2>(x * one_minus);
  }
  return rescale<0>(Fx<1>{x.raw});  // ExactMulByPot<-1>, then to Q0.31
}

inline int clz(uint32_t x) {
  int n = 0;
  while (n < 32 && !(x & (uint32_t(1) << (31 - n)))) ++n;
  return n;
}

}  // namespace cortexm::testing::gemmlowp_ref
