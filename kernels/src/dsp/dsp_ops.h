// The few Armv7E-M DSP instructions the DSP kernel variants use, on packed pairs of int16 lanes
// (bottom = bits 0..15, top = bits 16..31). On the target they are the ACLE intrinsics; with
// CORTEXM_EMULATE_DSP (host test builds) portable C with the same results, wrapping as the
// instructions do, so the variants' logic can be tested on the host too.
#pragma once

#include <cstdint>
#include <cstring>

#include "cortexm/kernels/requantize.h"

#if !defined(CORTEXM_EMULATE_DSP)
#include <arm_acle.h>
#endif

namespace cortexm::dsp {

inline uint32_t load_u32(const void* p) {  // unaligned loads are allowed on Armv7E-M
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline void store_u32(void* p, uint32_t v) { std::memcpy(p, &v, sizeof(v)); }

// v modulo 2^32, for sums that wrap as the target's adds do.
inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

// The int16 lanes of a pair, and a pair of them.
inline int32_t bottom(uint32_t x) { return static_cast<int16_t>(x & 0xFFFFu); }
inline int32_t top(uint32_t x) { return static_cast<int16_t>(x >> 16); }
inline uint32_t pack(int32_t bottom_lane, int32_t top_lane) {
  return (static_cast<uint32_t>(bottom_lane) & 0xFFFFu) | (static_cast<uint32_t>(top_lane) << 16);
}

// 4 bytes as one little-endian word.
inline uint32_t pack_bytes(int8_t b0, int8_t b1, int8_t b2, int8_t b3) {
  return static_cast<uint8_t>(b0) | static_cast<uint32_t>(static_cast<uint8_t>(b1)) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b2)) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b3)) << 24;
}

#if defined(CORTEXM_EMULATE_DSP)

// Bytes 0 and 2 sign-extended to int16 lanes.
inline uint32_t sxtb16(uint32_t x) {
  return pack(static_cast<int8_t>(x & 0xFFu), static_cast<int8_t>((x >> 16) & 0xFFu));
}
// Bytes 1 and 3 sign-extended to int16 lanes (SXTB16 with ROR #8).
inline uint32_t sxtb16_ror8(uint32_t x) { return sxtb16((x >> 8) | (x << 24)); }
inline uint32_t sadd16(uint32_t a, uint32_t b) {
  return pack(bottom(a) + bottom(b), top(a) + top(b));
}
// a + sxtb16(x) and a + sxtb16_ror8(x), lane by lane.
inline uint32_t sxtab16(uint32_t a, uint32_t x) { return sadd16(a, sxtb16(x)); }
inline uint32_t sxtab16_ror8(uint32_t a, uint32_t x) { return sadd16(a, sxtb16_ror8(x)); }
inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) +
                              static_cast<uint32_t>(bottom(a) * bottom(b)) +
                              static_cast<uint32_t>(top(a) * top(b)));
}
inline int32_t smlabb(uint32_t a, uint32_t b, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bottom(a) * bottom(b)));
}
inline int32_t smlatt(uint32_t a, uint32_t b, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(top(a) * top(b)));
}
// acc + bottom(a) * bottom(b) + top(a) * top(b) in 64 bits (modulo 2^64, as the instruction).
inline int64_t smlald(uint32_t a, uint32_t b, int64_t acc) {
  return static_cast<int64_t>(static_cast<uint64_t>(acc) +
                              static_cast<uint64_t>(int64_t{bottom(a) * bottom(b)}) +
                              static_cast<uint64_t>(int64_t{top(a) * top(b)}));
}
inline int32_t smulbb(uint32_t a, uint32_t b) { return bottom(a) * bottom(b); }
inline int32_t smultt(uint32_t a, uint32_t b) { return top(a) * top(b); }

inline int32_t ssat8(int32_t v) { return v < -128 ? -128 : (v > 127 ? 127 : v); }
// Bytes 0 and 2 zero-extended into the two int16 lanes.
inline uint32_t uxtb16(uint32_t x) { return x & 0x00FF00FFu; }
// Per signed byte: the larger / smaller of a and b (SSUB8 then SEL on the target).
inline uint32_t select_s8x4(uint32_t a, uint32_t b, bool larger) {
  uint32_t r = 0;
  for (int i = 0; i < 32; i += 8) {
    const int8_t x = static_cast<int8_t>(a >> i), y = static_cast<int8_t>(b >> i);
    r |= static_cast<uint32_t>(static_cast<uint8_t>((x >= y) == larger ? x : y)) << i;
  }
  return r;
}
inline uint32_t max_s8x4(uint32_t a, uint32_t b) { return select_s8x4(a, b, true); }
inline uint32_t min_s8x4(uint32_t a, uint32_t b) { return select_s8x4(a, b, false); }

#else

inline uint32_t sxtb16(uint32_t x) { return static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(x))); }
inline uint32_t sxtb16_ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline uint32_t sadd16(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(__sadd16(static_cast<int32_t>(a), static_cast<int32_t>(b)));
}
inline uint32_t sxtab16(uint32_t a, uint32_t x) {
  return static_cast<uint32_t>(__sxtab16(static_cast<int32_t>(a), static_cast<int32_t>(x)));
}
inline uint32_t sxtab16_ror8(uint32_t a, uint32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}
inline int32_t smlad(uint32_t a, uint32_t b, int32_t acc) {
  return __smlad(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}
inline int32_t smlabb(uint32_t a, uint32_t b, int32_t acc) {
  return __smlabb(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}
inline int32_t smlatt(uint32_t a, uint32_t b, int32_t acc) {
  return __smlatt(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}
inline int64_t smlald(uint32_t a, uint32_t b, int64_t acc) {
  return __smlald(static_cast<int32_t>(a), static_cast<int32_t>(b), acc);
}
inline int32_t ssat8(int32_t v) { return __ssat(v, 8); }
inline uint32_t uxtb16(uint32_t x) { return static_cast<uint32_t>(__uxtb16(static_cast<int32_t>(x))); }
// SSUB8 sets the GE flag of each byte where a >= b; SEL takes those bytes from its first operand.
inline uint32_t max_s8x4(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
  return r;
}
inline uint32_t min_s8x4(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
  return r;
}
// No ACLE intrinsics; GCC emits SMULBB / SMULTT for these.
inline int32_t smulbb(uint32_t a, uint32_t b) {
  return static_cast<int16_t>(a & 0xFFFFu) * static_cast<int16_t>(b & 0xFFFFu);
}
inline int32_t smultt(uint32_t a, uint32_t b) {
  return static_cast<int16_t>(a >> 16) * static_cast<int16_t>(b >> 16);
}

#endif

// Both int16 lanes set to v.
inline uint32_t splat16(int32_t v) {
  const uint32_t lane = static_cast<uint32_t>(v) & 0xFFFFu;
  return lane | (lane << 16);
}

// All 4 bytes set to v.
inline uint32_t splat8(int32_t v) { return (static_cast<uint32_t>(v) & 0xFFu) * 0x01010101u; }


// The output stage of the conv variants. What it needs, read once per call.
struct Stage {
  const int32_t* bias;  // may be null
  const int32_t* multipliers;
  const int32_t* shifts;
  int32_t output_offset, activation_min, activation_max;
  uint32_t min4, max4;  // the activation bounds in all 4 bytes
};

// What requantizing a channel needs, the shift taken apart once for the channel's outputs:
// requantize() is acc << left, the doubling high multiply, then a divide by 2^right rounding
// halves away from zero (remainder > mask / 2, or >= for negative values).
struct Channel {
  uint32_t bias;
  int32_t multiplier, left, right;
  uint32_t mask;      // 2^right - 1
  int32_t nudge_top;  // 2^(right - 2) for right >= 2: the rounding of the divide, in the top word
};

inline Channel channel(const Stage& s, int32_t c) {
  const int32_t shift = s.shifts[c];
  const int32_t left = shift & ~(shift >> 31);  // max(shift, 0), without a branch
  const int32_t right = left - shift;
  return {s.bias ? wrap(s.bias[c]) : 0u, s.multipliers[c], left, right, (uint32_t{1} << right) - 1u,
          right >= 2 ? int32_t{1} << (right - 2) : 0};
}

// requantize(sum + bias) + output_offset, not yet clamped.
inline int32_t requantized(int32_t sum, const Channel& ch, const Stage& s) {
  const int32_t acc = static_cast<int32_t>(wrap(sum) + ch.bias);
  const int32_t shifted = static_cast<int32_t>(wrap(acc) << ch.left);
  if (ch.right >= 2) {
    // Both roundings in one 64-bit multiply-accumulate: with A = shifted * multiplier + 2^30 (the
    // high multiply's x = floor(A / 2^31)) and sign = -1 when x < 0, the divide is
    // floor((x + 2^(right - 1) + sign) / 2^right) = floor((A + 2^(30 + right) + sign 2^31) / 2^(31 + right)),
    // the top word of that sum shifted right by right - 1. The multiplier is in [0, 2^31), so the
    // product's sign stands for x's: they differ only when x = 0, which no rounding moves.
    const int32_t sign = (shifted ^ ch.multiplier) >> 31;
    const uint32_t low = 0x40000000u + (wrap(sign) << 31);
    const uint64_t start = uint64_t{wrap(ch.nudge_top + sign)} << 32 | low;
    const int64_t total = static_cast<int64_t>(static_cast<uint64_t>(int64_t{shifted} * ch.multiplier) + start);
    return wrapping_add(static_cast<int32_t>(total >> 32) >> (ch.right - 1), s.output_offset);
  }
  const int32_t x = doubling_high_mult_no_sat(shifted, ch.multiplier);
  const uint32_t remainder = wrap(x) & ch.mask;
  const uint32_t threshold = (ch.mask >> 1) + (wrap(x) >> 31);
  return wrapping_add((x >> ch.right) + (remainder > threshold ? 1 : 0), s.output_offset);
}

// 4 requantized values saturated to int8 and packed (v0 in byte 0), then clamped to the
// activation range 4 bytes at a time.
inline uint32_t clamped_bytes(int32_t v0, int32_t v1, int32_t v2, int32_t v3, const Stage& s) {
  const uint32_t even = uxtb16(pack(ssat8(v0), ssat8(v2))), odd = uxtb16(pack(ssat8(v1), ssat8(v3)));
  return min_s8x4(max_s8x4(even | odd << 8, s.min4), s.max4);
}

}  // namespace cortexm::dsp
