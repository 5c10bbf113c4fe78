// Dot products of one int8 vector `a` with N int8 vectors b[0..N) (N = 1..4) of `length` >= 1
// bytes, added modulo 2^32 into sums[0..N): a tail-predicated low-overhead loop (DLSTP / LETP),
// per 16 bytes one load of a, N loads and N VMLADAVA.S8, and the LETP (GCC 12 does not emit
// DLSTP / LETP from intrinsics, hence the assembly). Conv2d: a = a filter row, b = im2col columns
// (output pixels); linear: a = the input row, b = weight rows.
#pragma once

#include <arm_mve.h>

#include <cstdint>

namespace cortexm::mve {

// The loop's parts: DLSTP.8 on the byte count, the shared vector into q0 (post-increment), per
// row one load into `q` and a VMLADAVA.S8 into `sum`, and LETP back to the shared load.
#define CORTEXM_DOT_LOOP_START "   dlstp.8     lr, %[n]\n1: vldrb.8     q0, [%[a]], #16\n"
#define CORTEXM_DOT_STEP(q, row, sum) \
  "   vldrb.8     " q ", [%[" row "]], #16\n   vmladava.s8 %[" sum "], q0, " q "\n"
#define CORTEXM_DOT_LOOP_END "   letp        lr, 1b\n"

template <int N>
inline void dot_rows(const int8_t* a, const int8_t* const* b, int32_t length, int32_t* sums);

template <>
inline void dot_rows<1>(const int8_t* a, const int8_t* const* b, int32_t length, int32_t* sums) {
  const int8_t* b0 = b[0];
  int32_t s0 = sums[0];
  __asm__ volatile(
      CORTEXM_DOT_LOOP_START
      CORTEXM_DOT_STEP("q1", "b0", "s0")
      CORTEXM_DOT_LOOP_END
      : [a] "+r"(a), [b0] "+r"(b0), [s0] "+Te"(s0)
      : [n] "r"(length)
      : "q0", "q1", "memory", "lr");
  sums[0] = s0;
}

template <>
inline void dot_rows<2>(const int8_t* a, const int8_t* const* b, int32_t length, int32_t* sums) {
  const int8_t *b0 = b[0], *b1 = b[1];
  int32_t s0 = sums[0], s1 = sums[1];
  __asm__ volatile(
      CORTEXM_DOT_LOOP_START
      CORTEXM_DOT_STEP("q1", "b0", "s0")
      CORTEXM_DOT_STEP("q2", "b1", "s1")
      CORTEXM_DOT_LOOP_END
      : [a] "+r"(a), [b0] "+r"(b0), [b1] "+r"(b1), [s0] "+Te"(s0), [s1] "+Te"(s1)
      : [n] "r"(length)
      : "q0", "q1", "q2", "memory", "lr");
  sums[0] = s0;
  sums[1] = s1;
}

template <>
inline void dot_rows<3>(const int8_t* a, const int8_t* const* b, int32_t length, int32_t* sums) {
  const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2];
  int32_t s0 = sums[0], s1 = sums[1], s2 = sums[2];
  __asm__ volatile(
      CORTEXM_DOT_LOOP_START
      CORTEXM_DOT_STEP("q1", "b0", "s0")
      CORTEXM_DOT_STEP("q2", "b1", "s1")
      CORTEXM_DOT_STEP("q3", "b2", "s2")
      CORTEXM_DOT_LOOP_END
      : [a] "+r"(a), [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [s0] "+Te"(s0), [s1] "+Te"(s1),
        [s2] "+Te"(s2)
      : [n] "r"(length)
      : "q0", "q1", "q2", "q3", "memory", "lr");
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
}

template <>
inline void dot_rows<4>(const int8_t* a, const int8_t* const* b, int32_t length, int32_t* sums) {
  const int8_t *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
  int32_t s0 = sums[0], s1 = sums[1], s2 = sums[2], s3 = sums[3];
  __asm__ volatile(
      CORTEXM_DOT_LOOP_START
      CORTEXM_DOT_STEP("q1", "b0", "s0")
      CORTEXM_DOT_STEP("q2", "b1", "s1")
      CORTEXM_DOT_STEP("q3", "b2", "s2")
      CORTEXM_DOT_STEP("q4", "b3", "s3")
      CORTEXM_DOT_LOOP_END
      : [a] "+r"(a), [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [b3] "+r"(b3), [s0] "+Te"(s0),
        [s1] "+Te"(s1), [s2] "+Te"(s2), [s3] "+Te"(s3)
      : [n] "r"(length)
      : "q0", "q1", "q2", "q3", "q4", "memory", "lr");
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

#undef CORTEXM_DOT_LOOP_START
#undef CORTEXM_DOT_STEP
#undef CORTEXM_DOT_LOOP_END

// The sum of `length` int8 values, modulo 2^32 (VADDVA, 16 lanes per step).
inline int32_t byte_sum(const int8_t* v, int32_t length) {
  int32_t sum = 0;
  for (int32_t left = length; left > 0; left -= 16, v += 16)
    sum = vaddvaq_s8(sum, vldrbq_z_s8(v, vctp8q(static_cast<uint32_t>(left))));
  return sum;
}

}  // namespace cortexm::mve
