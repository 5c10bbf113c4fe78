// MVE variant of quantized_linear on int8 rows in place (no scratch):
//   sum (x + io) * (w + fo) = sum x * w + io * sum w + fo * sum x + K * io * fo (modulo 2^32).
// sum x * w for 4 weight rows per pass over the input row (mve_dots.h: a tail-predicated loop,
// 10 instructions per 16 features of 4 rows; 1-3 rows for the last channels); sum w only when
// io != 0 (quantized_linear calls this with io = 0 when the bias is folded), sum x only when
// fo != 0. 4 output channels are requantized together.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "mve/mve_dots.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

}  // namespace

void quantized_linear(const LinearParams& p, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* /*scratch*/) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const bool per_channel = p.num_multipliers != 1;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* in_row = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    const int32_t x_sum = p.filter_offset != 0 ? byte_sum(in_row, depth) : 0;
    const uint32_t row_term = wrap(p.filter_offset) * wrap(x_sum) +
                              wrap(depth) * wrap(p.input_offset) * wrap(p.filter_offset);
    for (int32_t oc = 0; oc < channels; oc += 4) {
      const int32_t count = channels - oc < 4 ? channels - oc : 4;
      const int8_t* rows[4];
      for (int32_t j = 0; j < count; ++j) rows[j] = weights + int64_t{oc + j} * depth;
      int32_t dots_[4] = {0, 0, 0, 0};
      switch (count) {
        case 1: dot_rows<1>(in_row, rows, depth, dots_); break;
        case 2: dot_rows<2>(in_row, rows, depth, dots_); break;
        case 3: dot_rows<3>(in_row, rows, depth, dots_); break;
        default: dot_rows<4>(in_row, rows, depth, dots_); break;
      }
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count));
      int32x4_t acc = vaddq_n_s32(vld1q_s32(dots_), static_cast<int32_t>(row_term));
      if (p.input_offset != 0) {
        int32_t weight_sums[4] = {0, 0, 0, 0};
        for (int32_t j = 0; j < count; ++j) weight_sums[j] = byte_sum(rows[j], depth);
        acc = vaddq_s32(acc, vmulq_n_s32(vld1q_s32(weight_sums), p.input_offset));
      }
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
