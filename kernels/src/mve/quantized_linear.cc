// MVE variant of quantized_linear on int8 rows in place (no scratch):
//   sum (x + io) * (w + fo) = sum x * w + io * sum w + fo * sum x + K * io * fo (modulo 2^32),
// with sum x * w and sum w taken 16 lanes at a time (VMLADAVA, VADDVA) for two weight rows per
// pass over the input, and 4 output channels requantized together.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

// sum x * w and sum w for two weight rows.
inline void dot2(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t depth, int32_t* dots,
                 int32_t* weight_sums) {
  int32_t d0 = 0, d1 = 0, s0 = 0, s1 = 0;
  for (int32_t k = 0; k < depth; k += 16) {
    const mve_pred16_t lanes = vctp8q(static_cast<uint32_t>(depth - k));
    const int8x16_t xv = vldrbq_z_s8(x + k, lanes);
    const int8x16_t a = vldrbq_z_s8(w0 + k, lanes);
    const int8x16_t b = vldrbq_z_s8(w1 + k, lanes);
    d0 = vmladavaq_s8(d0, xv, a);
    s0 = vaddvaq_s8(s0, a);
    d1 = vmladavaq_s8(d1, xv, b);
    s1 = vaddvaq_s8(s1, b);
  }
  dots[0] = d0;
  dots[1] = d1;
  weight_sums[0] = s0;
  weight_sums[1] = s1;
}

}  // namespace

void quantized_linear(const LinearParams& p, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* /*scratch*/) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const bool per_channel = p.num_multipliers != 1;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* in_row = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    int32_t x_sum = 0;
    for (int32_t k = 0; k < depth; k += 16) {
      const mve_pred16_t lanes = vctp8q(static_cast<uint32_t>(depth - k));
      x_sum = vaddvaq_s8(x_sum, vldrbq_z_s8(in_row + k, lanes));
    }
    const uint32_t row_term = wrap(p.filter_offset) * wrap(x_sum) +
                              wrap(depth) * wrap(p.input_offset) * wrap(p.filter_offset);
    for (int32_t oc = 0; oc < channels; oc += 4) {
      int32_t dots[4] = {0, 0, 0, 0}, weight_sums[4] = {0, 0, 0, 0};
      for (int32_t j = 0; j < 4 && oc + j < channels; j += 2) {
        const int8_t* w0 = weights + int64_t{oc + j} * depth;
        // A missing second row repeats the first; its result is not stored.
        const int8_t* w1 = oc + j + 1 < channels ? w0 + depth : w0;
        dot2(in_row, w0, w1, depth, dots + j, weight_sums + j);
      }
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(channels - oc));
      int32x4_t acc = vaddq_s32(vld1q_s32(dots), vmulq_n_s32(vld1q_s32(weight_sums), p.input_offset));
      acc = vaddq_n_s32(acc, static_cast<int32_t>(row_term));
      if (bias) acc = vaddq_s32(acc, vldrwq_z_s32(bias + oc, lanes));
      if (per_channel) {
        acc = requantize(acc, vldrwq_z_s32(p.multipliers + oc, lanes), vldrwq_z_s32(p.shifts + oc, lanes));
      } else {
        acc = requantize(acc, p.multipliers[0], p.shifts[0]);
      }
      vstrbq_p_s32(out_row + oc, offset_and_clamp(acc, p.output_offset, p.activation_min, p.activation_max),
                   lanes);
    }
  }
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
