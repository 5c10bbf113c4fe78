// The dot products of quantized_conv2d_s16 / quantized_linear_s16 (int16 x int8, the 16x8 kernels)
// and of quantized_conv2d_s16w16 / quantized_linear_s16w16 (int16 x int16, the 16x16 kernels) for
// the isa this build selects (kernels/src only): x int16 (a column or an input row), w the weight
// rows, one overload per weight type.
//
// int8 weights: sums are exact: |int16 * int8| <= 2^22, so blocks of kInt32Taps products sum in
// int32 (|sum| <= 2^30) and the blocks add into 64 bits; any order of the blocks gives the same
// result. On DSP, x holds every full quad of taps x0 x1 x2 x3 as x0 x2 x1 x3 (the caller reorders
// it), so one SMLAD pairs SXTB16 of 4 weight bytes (w0, w2) with (x0, x2) and another the ROR #8
// form (w1, w3) with (x1, x3), as CMSIS-NN's read_and_pad_reordered; the tail stays in order.
//
// int16 weights: |int16 * int16| <= 2^30, so every product goes straight into a 64-bit sum (MVE
// VMLALDAVA.S16 in an assembly loop, DSP SMLALD on pairs of taps in order); the sums are exact for
// any length the kernels' prepare accepts (kMaxTapsS16W16), so every order gives the same result.
// x is in order.
#pragma once

#include <cstdint>

#include "cortexm/kernels/kernel_isa.h"
#if CORTEXM_BUILT_ISA == 1
#include "dsp/dsp_ops.h"
#elif CORTEXM_BUILT_ISA == 2
#include <arm_mve.h>
#endif

namespace cortexm::s16 {

constexpr int32_t kInt32Taps = 256;

// End of the int32 block that starts at `start`.
inline int32_t block_end(int32_t start, int32_t length) {
  return length - start < kInt32Taps ? length : start + kInt32Taps;
}

#if CORTEXM_BUILT_ISA == 0

inline int64_t dot(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  int64_t total = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = block_end(start, length);
    int32_t s = 0;
    for (int32_t k = start; k < end; ++k) s += x[k] * w[k];
    total += s;
  }
  return total;
}

// Two weight rows `length` apart per pass over x: each input load feeds two multiply-adds.
inline void dot2(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int8_t* w0 = weights;
  const int8_t* w1 = w0 + length;
  int64_t total0 = 0, total1 = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = block_end(start, length);
    int32_t s0 = 0, s1 = 0;
    for (int32_t k = start; k < end; ++k) {
      const int32_t xk = x[k];
      s0 += xk * w0[k];
      s1 += xk * w1[k];
    }
    total0 += s0;
    total1 += s1;
  }
  sums[0] = total0;
  sums[1] = total1;
}

#elif CORTEXM_BUILT_ISA == 2

// 8 taps per step: VLDRH of x, VLDRB.S16 widening each weight row, VMLADAVA into int32 block
// sums; the last partial step predicated (its off lanes load 0).
inline int64_t dot(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  int64_t total = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = block_end(start, length);
    int32_t s = 0, k = start;
    for (; k + 8 <= end; k += 8) s = vmladavaq_s16(s, vldrhq_s16(x + k), vldrbq_s16(w + k));
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      s = vmladavaq_s16(s, vldrhq_z_s16(x + k, lanes), vldrbq_z_s16(w + k, lanes));
    }
    total += s;
  }
  return total;
}

inline void dot2(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int8_t* w0 = weights;
  const int8_t* w1 = w0 + length;
  int64_t total0 = 0, total1 = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = block_end(start, length);
    int32_t s0 = 0, s1 = 0, k = start;
    for (; k + 8 <= end; k += 8) {
      const int16x8_t xv = vldrhq_s16(x + k);
      s0 = vmladavaq_s16(s0, xv, vldrbq_s16(w0 + k));
      s1 = vmladavaq_s16(s1, xv, vldrbq_s16(w1 + k));
    }
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      const int16x8_t xv = vldrhq_z_s16(x + k, lanes);
      s0 = vmladavaq_s16(s0, xv, vldrbq_z_s16(w0 + k, lanes));
      s1 = vmladavaq_s16(s1, xv, vldrbq_z_s16(w1 + k, lanes));
    }
    total0 += s0;
    total1 += s1;
  }
  sums[0] = total0;
  sums[1] = total1;
}

// Four weight rows `length` apart per pass over x: each load of x feeds four multiply-adds.
inline void dot4(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int8_t* w0 = weights;
  const int8_t* w1 = w0 + length;
  const int8_t* w2 = w1 + length;
  const int8_t* w3 = w2 + length;
  int64_t total0 = 0, total1 = 0, total2 = 0, total3 = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = block_end(start, length);
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, k = start;
    for (; k + 8 <= end; k += 8) {
      const int16x8_t xv = vldrhq_s16(x + k);
      s0 = vmladavaq_s16(s0, xv, vldrbq_s16(w0 + k));
      s1 = vmladavaq_s16(s1, xv, vldrbq_s16(w1 + k));
      s2 = vmladavaq_s16(s2, xv, vldrbq_s16(w2 + k));
      s3 = vmladavaq_s16(s3, xv, vldrbq_s16(w3 + k));
    }
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      const int16x8_t xv = vldrhq_z_s16(x + k, lanes);
      s0 = vmladavaq_s16(s0, xv, vldrbq_z_s16(w0 + k, lanes));
      s1 = vmladavaq_s16(s1, xv, vldrbq_z_s16(w1 + k, lanes));
      s2 = vmladavaq_s16(s2, xv, vldrbq_z_s16(w2 + k, lanes));
      s3 = vmladavaq_s16(s3, xv, vldrbq_z_s16(w3 + k, lanes));
    }
    total0 += s0;
    total1 += s1;
    total2 += s2;
    total3 += s3;
  }
  sums[0] = total0;
  sums[1] = total1;
  sums[2] = total2;
  sums[3] = total3;
}

#else

// The dot products of x with `rows` weight rows `length` apart: SMLADs over the full quads in
// int32 blocks, then the tail in order.
template <int kRows>
inline void dots(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int32_t quads_end = length & ~3;
  int64_t total[kRows] = {};
  int32_t i = 0;
  while (i < quads_end) {
    const int32_t end = block_end(i, quads_end);
    int32_t s[kRows] = {};
    for (; i < end; i += 4) {
      const uint32_t x02 = dsp::load_u32(x + i), x13 = dsp::load_u32(x + i + 2);
      for (int r = 0; r < kRows; ++r) {
        const uint32_t w = dsp::load_u32(weights + int64_t{r} * length + i);
        s[r] = dsp::smlad(dsp::sxtb16(w), x02, s[r]);
        s[r] = dsp::smlad(dsp::sxtb16_ror8(w), x13, s[r]);
      }
    }
    for (int r = 0; r < kRows; ++r) total[r] += s[r];
  }
  int32_t tail[kRows] = {};
  for (; i < length; ++i)
    for (int r = 0; r < kRows; ++r) tail[r] += x[i] * weights[int64_t{r} * length + i];
  for (int r = 0; r < kRows; ++r) sums[r] = total[r] + tail[r];
}

inline int64_t dot(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  int64_t sum;
  dots<1>(x, w, length, &sum);
  return sum;
}

inline void dot2(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  dots<2>(x, weights, length, sums);
}

inline void dot4(const int16_t* __restrict x, const int8_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  dots<4>(x, weights, length, sums);
}

#endif

// --- int16 weights ----------------------------------------------------------------------------

#if CORTEXM_BUILT_ISA == 0

inline int64_t dot(const int16_t* __restrict x, const int16_t* __restrict w, int32_t length) {
  int64_t total = 0;
  for (int32_t k = 0; k < length; ++k) total += int32_t{x[k]} * w[k];
  return total;
}

inline void dot2(const int16_t* __restrict x, const int16_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int16_t* w0 = weights;
  const int16_t* w1 = w0 + length;
  int64_t total0 = 0, total1 = 0;
  for (int32_t k = 0; k < length; ++k) {
    const int32_t xk = x[k];
    total0 += xk * w0[k];
    total1 += xk * w1[k];
  }
  sums[0] = total0;
  sums[1] = total1;
}

#elif CORTEXM_BUILT_ISA == 2

// One tail-predicated low-overhead loop (DLSTP.16 / LETP, inline assembly as mve_dots.h: GCC's
// loop re-derives a row address each step) over `length` >= 1 taps, 8 per step: a VLDRH of x
// (post-increment), per row a VLDRH and a VMLALDAVA.S16 into its 64-bit sum (a core register pair,
// even / odd as GCC allocates 64-bit values with MVE), then LETP: 6 instructions per 16 MACs for
// two rows. The last step's off lanes neither load nor add.
#define CORTEXM_DOT16_LOOP_START "   dlstp.16    lr, %[n]\n1: vldrh.16    q0, [%[x]], #16\n"
#define CORTEXM_DOT16_STEP(q, row, sum) \
  "   vldrh.16    " q ", [%[" row "]], #16\n   vmlaldava.s16 %Q[" sum "], %R[" sum "], q0, " q "\n"
#define CORTEXM_DOT16_LOOP_END "   letp        lr, 1b\n"

inline int64_t dot(const int16_t* __restrict x, const int16_t* __restrict w, int32_t length) {
  int64_t s0 = 0;
  __asm__ volatile(
      CORTEXM_DOT16_LOOP_START
      CORTEXM_DOT16_STEP("q1", "w0", "s0")
      CORTEXM_DOT16_LOOP_END
      : [x] "+r"(x), [w0] "+r"(w), [s0] "+r"(s0)
      : [n] "r"(length)
      : "q0", "q1", "memory", "lr");
  return s0;
}

inline void dot2(const int16_t* __restrict x, const int16_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int16_t* w0 = weights;
  const int16_t* w1 = weights + length;
  int64_t s0 = 0, s1 = 0;
  __asm__ volatile(
      CORTEXM_DOT16_LOOP_START
      CORTEXM_DOT16_STEP("q1", "w0", "s0")
      CORTEXM_DOT16_STEP("q2", "w1", "s1")
      CORTEXM_DOT16_LOOP_END
      : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [s0] "+r"(s0), [s1] "+r"(s1)
      : [n] "r"(length)
      : "q0", "q1", "q2", "memory", "lr");
  sums[0] = s0;
  sums[1] = s1;
}

// Three rows: 8 instructions per 24 MACs (4 rows would need 14 core registers).
inline void dot3(const int16_t* __restrict x, const int16_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  const int16_t* w0 = weights;
  const int16_t* w1 = w0 + length;
  const int16_t* w2 = w1 + length;
  int64_t s0 = 0, s1 = 0, s2 = 0;
  __asm__ volatile(
      CORTEXM_DOT16_LOOP_START
      CORTEXM_DOT16_STEP("q1", "w0", "s0")
      CORTEXM_DOT16_STEP("q2", "w1", "s1")
      CORTEXM_DOT16_STEP("q3", "w2", "s2")
      CORTEXM_DOT16_LOOP_END
      : [x] "+r"(x), [w0] "+r"(w0), [w1] "+r"(w1), [w2] "+r"(w2), [s0] "+r"(s0), [s1] "+r"(s1),
        [s2] "+r"(s2)
      : [n] "r"(length)
      : "q0", "q1", "q2", "q3", "memory", "lr");
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
}

#undef CORTEXM_DOT16_LOOP_START
#undef CORTEXM_DOT16_STEP
#undef CORTEXM_DOT16_LOOP_END

#else

// The dot products of x with kRows int16 weight rows `length` apart: per pair of taps one word of
// x and per row a word of weights and an SMLALD into its 64-bit sum; an odd last tap in C. (The
// kernels take kRows 1 or 2: more 64-bit sums, or 4 taps per step, spill on Armv7-M.)
template <int kRows>
inline void dots(const int16_t* __restrict x, const int16_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  int64_t s[kRows] = {};
  int32_t k = 0;
  for (; k + 2 <= length; k += 2) {
    const uint32_t xv = dsp::load_u32(x + k);
    for (int r = 0; r < kRows; ++r)
      s[r] = dsp::smlald(dsp::load_u32(weights + int64_t{r} * length + k), xv, s[r]);
  }
  if (k < length)
    for (int r = 0; r < kRows; ++r) s[r] += int32_t{x[k]} * weights[int64_t{r} * length + k];
  for (int r = 0; r < kRows; ++r) sums[r] = s[r];
}

inline int64_t dot(const int16_t* __restrict x, const int16_t* __restrict w, int32_t length) {
  int64_t sum;
  dots<1>(x, w, length, &sum);
  return sum;
}

inline void dot2(const int16_t* __restrict x, const int16_t* __restrict weights, int32_t length,
                 int64_t* sums) {
  dots<2>(x, weights, length, sums);
}

#endif

}  // namespace cortexm::s16
