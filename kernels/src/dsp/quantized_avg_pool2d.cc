// DSP variant of quantized_avg_pool2d for windows of at most 256 taps (larger ones run the scalar
// kernel): 8 channels per pass, their sums in registers as int16 lanes (|sum| <= 2^15, no
// scratch). Per tap and 4 channels one word load, SXTB16 (channels 0 and 2) and SXTB16 ROR #8 (1
// and 3), two SADD16. Fewer than 4 channels left: one at a time. The division is the scalar
// kernel's (avg_pool.h), halves away from zero as arm_avgpool_s8.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "avg_pool.h"
#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

// sum / count rounded halves away from zero, clamped.
struct Average {
  int32_t count = 1, lo = -128, hi = 127;
  uint32_t half = 0;
  UnsignedDivider divider{1};

  int8_t operator()(int32_t sum) const {
    const uint32_t magnitude = static_cast<uint32_t>(sum > 0 ? sum : -sum) + half;
    const int32_t quotient = static_cast<int32_t>(divider.divide(magnitude));
    return static_cast<int8_t>(clamp(sum > 0 ? quotient : -quotient, lo, hi));
  }
};

// Window sums of 4 channels at x: (0, 2) in *even, (1, 3) in *odd.
inline void sum4(const int8_t* x, int32_t rows, int32_t cols, int64_t row_step, int32_t tap_step,
                 uint32_t* even, uint32_t* odd) {
  uint32_t e = 0, o = 0;
  const int64_t row_taps = int64_t{cols} * tap_step;
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    for (const int8_t *tap = x, *end = x + row_taps; tap != end; tap += tap_step) {
      const uint32_t word = load_u32(tap);
      e = sadd16(e, sxtb16(word));
      o = sadd16(o, sxtb16_ror8(word));
    }
  }
  *even = e;
  *odd = o;
}

// sum4 for 8 channels: (0, 2), (1, 3), (4, 6), (5, 7) in s[0..3].
inline void sum8(const int8_t* x, int32_t rows, int32_t cols, int64_t row_step, int32_t tap_step,
                 uint32_t s[4]) {
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  const int64_t row_taps = int64_t{cols} * tap_step;
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    for (const int8_t *tap = x, *end = x + row_taps; tap != end; tap += tap_step) {
      const uint32_t low = load_u32(tap), high = load_u32(tap + 4);
      s0 = sadd16(s0, sxtb16(low));
      s1 = sadd16(s1, sxtb16_ror8(low));
      s2 = sadd16(s2, sxtb16(high));
      s3 = sadd16(s3, sxtb16_ror8(high));
    }
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}

// Channels 0..3 from the even pair (0, 2) and the odd pair (1, 3).
inline void store4(uint32_t even, uint32_t odd, const Average& average, int8_t* out) {
  out[0] = average(bottom(even));
  out[1] = average(bottom(odd));
  out[2] = average(top(even));
  out[3] = average(top(odd));
}

}  // namespace

void quantized_avg_pool2d(const Pool2dParams& p, const int8_t* input, int8_t* output,
                          void* /*scratch*/) {
  const int32_t channels = p.input.c;
  const int64_t row_step = int64_t{p.input.w} * channels;
  Average average;
  average.lo = p.activation_min;
  average.hi = p.activation_max;
  auto pool = [=](const int8_t* window, int32_t rows, int32_t cols, int8_t* out) mutable
      CORTEXM_LAMBDA_ALWAYS_INLINE {
    if (rows * cols != average.count) {
      average.count = rows * cols;
      average.half = static_cast<uint32_t>(average.count / 2);
      average.divider = UnsignedDivider(average.count);
    }
    int32_t c = 0;
    for (; c + 8 <= channels; c += 8) {
      uint32_t s[4];
      sum8(window + c, rows, cols, row_step, channels, s);
      store4(s[0], s[1], average, out + c);
      store4(s[2], s[3], average, out + c + 4);
    }
    if (c + 4 <= channels) {
      uint32_t even, odd;
      sum4(window + c, rows, cols, row_step, channels, &even, &odd);
      store4(even, odd, average, out + c);
      c += 4;
    }
    for (; c < channels; ++c) {
      int32_t sum = 0;
      const int8_t* x = window + c;
      for (int32_t r = 0; r < rows; ++r, x += row_step)
        for (int32_t k = 0; k < cols; ++k) sum += x[k * channels];
      out[c] = average(sum);
    }
  };
  for_each_pool_window(p, input, output, pool);
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
