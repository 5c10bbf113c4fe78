// Dot products of P int8 columns (P = 1..2, output pixels) with C filter rows (C = 1..3, output
// channels) of `length` >= 1 bytes, added modulo 2^32 into acc[p][c]: per 16 taps P + C loads and
// P * C VMLADAVA.S8, the 2 x 3 block 11 instructions per 96 MACs. The loop takes 32 taps per
// iteration (LE, no tail predication: lengths that are multiples of 32 run no predicated code),
// then the 1-31 taps left, if any, in a tail-predicated loop (DLSTP.8 / LETP). Inline assembly: VMLADAVA
// accumulates into even registers only (7 of them beside LR, the loop counter), and GCC 12 emits
// no low-overhead loops from intrinsics. Pointers advance by whole 16-byte steps: the caller
// recomputes them.
#pragma once

#include <arm_mve.h>

#include <cstdint>

namespace cortexm::mve {

// One 16-tap step: the P column loads, then per row one load and P accumulations.
#define CORTEXM_COLS1 "   vldrb.8     q0, [%[c0]], #16\n"
#define CORTEXM_COLS2 CORTEXM_COLS1 "   vldrb.8     q1, [%[c1]], #16\n"
#define CORTEXM_ROW1(q, w, c) \
  "   vldrb.8     " q ", [%[" w "]], #16\n   vmladava.s8 %[a0" c "], q0, " q "\n"
#define CORTEXM_ROW2(q, w, c) CORTEXM_ROW1(q, w, c) "   vmladava.s8 %[a1" c "], q1, " q "\n"
// The rows after the first, `n` bytes apart (computed in the assembly: GCC 12 at -O3 finds no
// registers for them as inputs beside 6 accumulators).
#define CORTEXM_ROWS2 "   add         %[w1], %[w0], %[n]\n"
#define CORTEXM_ROWS3 CORTEXM_ROWS2 "   add         %[w2], %[w1], %[n]\n"
// The loop over 32-tap pairs of steps (`n` >> 5 iterations), then `n` & 31 taps predicated.
#define CORTEXM_BLOCK_LOOPS(step)        \
  "   lsrs        lr, %[n], #5\n"        \
  "   beq         2f\n"                  \
  "1:\n" step step                       \
  "   le          lr, 1b\n"              \
  "2: ands        %[n], %[n], #31\n"     \
  "   beq         4f\n"                  \
  "   dlstp.8     lr, %[n]\n"            \
  "3:\n" step                            \
  "   letp        lr, 3b\n"              \
  "4:\n"

template <int P, int C>
struct BlockDots;

template <>
struct BlockDots<2, 3> {
  static inline void run(const int8_t* c0, const int8_t* c1, const int8_t* w0, int32_t length,
                         int32_t (&acc)[2][3]) {
    const int8_t *w1, *w2;
    int32_t a00 = acc[0][0], a01 = acc[0][1], a02 = acc[0][2];
    int32_t a10 = acc[1][0], a11 = acc[1][1], a12 = acc[1][2];
    __asm__ volatile(CORTEXM_ROWS3 CORTEXM_BLOCK_LOOPS(CORTEXM_COLS2 CORTEXM_ROW2("q2", "w0", "0")
                                             CORTEXM_ROW2("q3", "w1", "1")
                                             CORTEXM_ROW2("q2", "w2", "2"))
                     : [c0] "+r"(c0), [c1] "+r"(c1), [w0] "+r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),
                       [n] "+r"(length), [a00] "+Te"(a00), [a01] "+Te"(a01), [a02] "+Te"(a02),
                       [a10] "+Te"(a10), [a11] "+Te"(a11), [a12] "+Te"(a12)
                     :
                     : "q0", "q1", "q2", "q3", "memory", "lr", "cc");
    acc[0][0] = a00, acc[0][1] = a01, acc[0][2] = a02;
    acc[1][0] = a10, acc[1][1] = a11, acc[1][2] = a12;
  }
};

template <>
struct BlockDots<2, 2> {
  static inline void run(const int8_t* c0, const int8_t* c1, const int8_t* w0, int32_t length,
                         int32_t (&acc)[2][2]) {
    const int8_t* w1;
    int32_t a00 = acc[0][0], a01 = acc[0][1], a10 = acc[1][0], a11 = acc[1][1];
    __asm__ volatile(CORTEXM_ROWS2 CORTEXM_BLOCK_LOOPS(CORTEXM_COLS2 CORTEXM_ROW2("q2", "w0", "0")
                                             CORTEXM_ROW2("q3", "w1", "1"))
                     : [c0] "+r"(c0), [c1] "+r"(c1), [w0] "+r"(w0), [w1] "=&r"(w1), [n] "+r"(length),
                       [a00] "+Te"(a00), [a01] "+Te"(a01), [a10] "+Te"(a10), [a11] "+Te"(a11)
                     :
                     : "q0", "q1", "q2", "q3", "memory", "lr", "cc");
    acc[0][0] = a00, acc[0][1] = a01, acc[1][0] = a10, acc[1][1] = a11;
  }
};

template <>
struct BlockDots<2, 1> {
  static inline void run(const int8_t* c0, const int8_t* c1, const int8_t* w0, int32_t length,
                         int32_t (&acc)[2][1]) {
    int32_t a00 = acc[0][0], a10 = acc[1][0];
    __asm__ volatile(CORTEXM_BLOCK_LOOPS(CORTEXM_COLS2 CORTEXM_ROW2("q2", "w0", "0"))
                     : [c0] "+r"(c0), [c1] "+r"(c1), [w0] "+r"(w0), [n] "+r"(length),
                       [a00] "+Te"(a00), [a10] "+Te"(a10)
                     :
                     : "q0", "q1", "q2", "memory", "lr", "cc");
    acc[0][0] = a00, acc[1][0] = a10;
  }
};

template <>
struct BlockDots<1, 3> {
  static inline void run(const int8_t* c0, const int8_t* /*c1*/, const int8_t* w0, int32_t length,
                         int32_t (&acc)[1][3]) {
    const int8_t *w1, *w2;
    int32_t a00 = acc[0][0], a01 = acc[0][1], a02 = acc[0][2];
    __asm__ volatile(CORTEXM_ROWS3 CORTEXM_BLOCK_LOOPS(CORTEXM_COLS1 CORTEXM_ROW1("q2", "w0", "0")
                                             CORTEXM_ROW1("q3", "w1", "1")
                                             CORTEXM_ROW1("q2", "w2", "2"))
                     : [c0] "+r"(c0), [w0] "+r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2), [n] "+r"(length),
                       [a00] "+Te"(a00), [a01] "+Te"(a01), [a02] "+Te"(a02)
                     :
                     : "q0", "q2", "q3", "memory", "lr", "cc");
    acc[0][0] = a00, acc[0][1] = a01, acc[0][2] = a02;
  }
};

template <>
struct BlockDots<1, 2> {
  static inline void run(const int8_t* c0, const int8_t* /*c1*/, const int8_t* w0, int32_t length,
                         int32_t (&acc)[1][2]) {
    const int8_t* w1;
    int32_t a00 = acc[0][0], a01 = acc[0][1];
    __asm__ volatile(CORTEXM_ROWS2 CORTEXM_BLOCK_LOOPS(CORTEXM_COLS1 CORTEXM_ROW1("q2", "w0", "0")
                                             CORTEXM_ROW1("q3", "w1", "1"))
                     : [c0] "+r"(c0), [w0] "+r"(w0), [w1] "=&r"(w1), [n] "+r"(length),
                       [a00] "+Te"(a00), [a01] "+Te"(a01)
                     :
                     : "q0", "q2", "q3", "memory", "lr", "cc");
    acc[0][0] = a00, acc[0][1] = a01;
  }
};

template <>
struct BlockDots<1, 1> {
  static inline void run(const int8_t* c0, const int8_t* /*c1*/, const int8_t* w0, int32_t length,
                         int32_t (&acc)[1][1]) {
    int32_t a00 = acc[0][0];
    __asm__ volatile(CORTEXM_BLOCK_LOOPS(CORTEXM_COLS1 CORTEXM_ROW1("q2", "w0", "0"))
                     : [c0] "+r"(c0), [w0] "+r"(w0), [n] "+r"(length), [a00] "+Te"(a00)
                     :
                     : "q0", "q2", "memory", "lr", "cc");
    acc[0][0] = a00;
  }
};

#undef CORTEXM_COLS1
#undef CORTEXM_COLS2
#undef CORTEXM_ROW1
#undef CORTEXM_ROW2
#undef CORTEXM_ROWS2
#undef CORTEXM_ROWS3
#undef CORTEXM_BLOCK_LOOPS

}  // namespace cortexm::mve
