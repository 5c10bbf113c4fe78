// MVE variant of quantized_avg_pool2d: 16 channels per pass, their sums in registers (no scratch).
// Windows of at most 256 taps sum in int16 lanes (|sum| <= 2^15): per tap two widening loads
// (VLDRB.S16) and two VADD.I16; larger windows sum in int32 lanes (VLDRB.S32). The last partial
// group of channels loads and stores under VCTP predicates. The division is the scalar kernel's
// (avg_pool.h) on 4 lanes at a time: |sum| + count / 2 (VABS, VADD), times the divider's
// multiplier (VMULH.U32, the high half of the 64-bit product), shifted right, negated where the
// sum is negative: halves away from zero, as arm_avgpool_s8 and the reference round.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include <arm_mve.h>

#include "avg_pool.h"

namespace cortexm::mve {

namespace {

// sum / count rounded halves away from zero, clamped to [lo, hi], on 4 lanes.
struct VectorAverage {
  int32_t count, half, multiplier, neg_shift, lo, hi;

  explicit VectorAverage(int32_t taps, int32_t act_min, int32_t act_max)
      : count(taps), half(taps / 2), lo(act_min), hi(act_max) {
    const UnsignedDivider d(taps);
    multiplier = static_cast<int32_t>(d.multiplier);
    neg_shift = 32 - d.shift;  // VMULH drops 32 bits of the shift (shift >= 32 when count >= 2)
  }

  int32x4_t operator()(int32x4_t sum) const {
    int32x4_t average = sum;
    if (count > 1) {
      const uint32x4_t magnitude = vreinterpretq_u32_s32(vaddq_n_s32(vabsq_s32(sum), half));
      const uint32x4_t product = vmulhq_u32(magnitude, vdupq_n_u32(static_cast<uint32_t>(multiplier)));
      const uint32x4_t quotient = vshlq_r_u32(product, neg_shift);
      const int32x4_t q = vreinterpretq_s32_u32(quotient);
      average = vnegq_m_s32(q, q, vcmpltq_n_s32(sum, 0));
    }
    return vminq_s32(vmaxq_s32(average, vdupq_n_s32(lo)), vdupq_n_s32(hi));
  }
};

// Window sums of 16 channels in int16 lanes (channels c .. c + 7 in *low, c + 8 .. c + 15 in
// *high). Tail: loads predicated by lo_lanes / hi_lanes (off lanes 0); else all 16 channels.
template <bool Tail>
inline void sum16_narrow(const int8_t* x, int32_t rows, int32_t cols, int64_t row_step,
                         int32_t tap_step, mve_pred16_t lo_lanes, mve_pred16_t hi_lanes,
                         int16x8_t* low, int16x8_t* high) {
  int16x8_t a = vdupq_n_s16(0), b = vdupq_n_s16(0);
  for (int32_t r = 0; r < rows; ++r, x += row_step) {
    const int8_t* tap = x;
    for (int32_t k = 0; k < cols; ++k, tap += tap_step) {
      a = vaddq_s16(a, Tail ? vldrbq_z_s16(tap, lo_lanes) : vldrbq_s16(tap));
      b = vaddq_s16(b, Tail ? vldrbq_z_s16(tap + 8, hi_lanes) : vldrbq_s16(tap + 8));
    }
  }
  *low = a;
  *high = b;
}

// Averages 8 int16 window sums of consecutive channels and stores the lanes of `lanes`: even and
// odd channels widened (VMOVLB / VMOVLT), averaged, narrowed back in order (VMOVNB / VMOVNT).
inline void store8(int16x8_t sums, const VectorAverage& average, mve_pred16_t lanes, int8_t* out) {
  const int32x4_t even = average(vmovlbq_s16(sums));
  const int32x4_t odd = average(vmovltq_s16(sums));
  const int16x8_t both = vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd);
  vstrbq_p_s16(out, both, lanes);
}

template <bool Narrow>
void average_pool(const Pool2dParams& p, const int8_t* input, int8_t* output) {
  const int32_t channels = p.input.c;
  const int64_t row_step = int64_t{p.input.w} * channels;
  VectorAverage average(1, p.activation_min, p.activation_max);
  auto pool = [=](const int8_t* window, int32_t rows, int32_t cols, int8_t* out) mutable
      CORTEXM_LAMBDA_ALWAYS_INLINE {
    if (rows * cols != average.count)
      average = VectorAverage(rows * cols, p.activation_min, p.activation_max);
    for (int32_t c = 0; c < channels; c += 16) {
      const uint32_t left = static_cast<uint32_t>(channels - c);
      if (Narrow) {
        const mve_pred16_t lo_lanes = vctp16q(left);
        const mve_pred16_t hi_lanes = vctp16q(left > 8 ? left - 8 : 0);
        int16x8_t low, high;
        if (left >= 16)
          sum16_narrow<false>(window + c, rows, cols, row_step, channels, 0, 0, &low, &high);
        else
          sum16_narrow<true>(window + c, rows, cols, row_step, channels, lo_lanes, hi_lanes, &low,
                             &high);
        store8(low, average, lo_lanes, out + c);
        if (left > 8) store8(high, average, hi_lanes, out + c + 8);
        continue;
      }
      int32x4_t sums[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
      const int8_t* x = window + c;
      for (int32_t r = 0; r < rows; ++r, x += row_step) {
        const int8_t* tap = x;
        for (int32_t k = 0; k < cols; ++k, tap += channels)
          for (uint32_t i = 0; i < 4; ++i) {
            const mve_pred16_t lanes = vctp32q(left > 4 * i ? left - 4 * i : 0);
            sums[i] = vaddq_s32(sums[i], vldrbq_z_s32(tap + 4 * i, lanes));
          }
      }
      for (uint32_t i = 0; i < 4 && 4 * i < left; ++i)
        vstrbq_p_s32(out + c + 4 * i, average(sums[i]), vctp32q(left - 4 * i));
    }
  };
  for_each_pool_window(p, input, output, pool);
}

}  // namespace

template <uint32_t Paths>
void quantized_avg_pool2d_on_paths(const Pool2dParams& params, const int8_t* input, int8_t* output,
                                   void* /*scratch*/) {
  if (avg_pool_max_window_taps(params) <= 256) {
    if constexpr ((Paths & kAvgPool2dNarrowSums) != 0) average_pool<true>(params, input, output);
  } else {
    if constexpr ((Paths & kAvgPool2dWideSums) != 0) average_pool<false>(params, input, output);
  }
}

#define CORTEXM_AVG_POOL2D_ON_PATHS(paths) \
  template void quantized_avg_pool2d_on_paths<paths>(const Pool2dParams&, const int8_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_2_BITS(CORTEXM_AVG_POOL2D_ON_PATHS)
#undef CORTEXM_AVG_POOL2D_ON_PATHS

void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch) {
  mve::quantized_avg_pool2d_on_paths<kAvgPool2dAllPaths>(params, input, output, scratch);
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
