// MVE variant of quantized_conv2d. Columns stay int8: padded taps hold -input_offset (so that
// x + input_offset is 0 there), and sum (x + off) * w = sum x * w + off * sum w, both sums taken
// 16 lanes at a time (VMLADAVA, VADDVA) modulo 2^32 like the reference's adds; with
// bias_includes_input_offset the bias already holds off * sum w and only sum x * w is taken. A
// 1x1 window without padding reads the input rows in place; other windows gather 4 columns into
// scratch. The 4 pixels of one output channel are requantized together and scattered to the
// output.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include <cstring>

#include "conv_window.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

namespace {

constexpr int32_t kBlockPixels = 4;

// Dot products of a filter row with 4 int8 columns, and the sum of the row when WeightSum.
template <bool WeightSum>
inline void dot4(const int8_t* weights, const int8_t* const* columns, int32_t length,
                 int32_t* sums, int32_t* weight_sum) {
  const int8_t* c0 = columns[0];
  const int8_t* c1 = columns[1];
  const int8_t* c2 = columns[2];
  const int8_t* c3 = columns[3];
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, ws = 0;
  for (int32_t left = length; left > 0; left -= 16) {
    const mve_pred16_t lanes = vctp8q(static_cast<uint32_t>(left));
    const int8x16_t w = vldrbq_z_s8(weights, lanes);
    s0 = vmladavaq_s8(s0, vldrbq_z_s8(c0, lanes), w);
    s1 = vmladavaq_s8(s1, vldrbq_z_s8(c1, lanes), w);
    s2 = vmladavaq_s8(s2, vldrbq_z_s8(c2, lanes), w);
    s3 = vmladavaq_s8(s3, vldrbq_z_s8(c3, lanes), w);
    if (WeightSum) ws = vaddvaq_s8(ws, w);
    weights += 16;
    c0 += 16;
    c1 += 16;
    c2 += 16;
    c3 += 16;
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
  *weight_sum = ws;
}

}  // namespace

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const bool pointwise = is_pointwise(p);
  const bool folded = p.bias_includes_input_offset;
  const ConvQuantParams q = p.quant;
  const int32_t groups = p.groups();
  const int32_t out_c = p.filter.n;
  const int32_t out_per_group = out_c / groups;
  const int32_t length = p.filter.h * p.filter.w * p.filter.c;
  const int32_t out_w = p.output.w;
  const int32_t pixels = p.output.h * out_w;
  int8_t* columns = static_cast<int8_t*>(scratch);
  const int8_t pad = static_cast<int8_t>(-q.input_offset);
  const auto fill = [pad](int8_t* dst, int32_t count) { std::memset(dst, pad, static_cast<size_t>(count)); };
  const auto copy = [](const int8_t* src, int32_t count, int8_t* dst) {
    std::memcpy(dst, src, static_cast<size_t>(count));
  };
  // Byte offsets of the 4 pixels of one output channel in the output.
  const uint32x4_t scatter = vmulq_n_u32(vidupq_n_u32(0, 1), static_cast<uint32_t>(out_c));

  for (int32_t n = 0; n < p.input.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * p.input.c;
    int8_t* out_image = output + int64_t{n} * pixels * out_c;
    for (int32_t group = 0; group < groups; ++group) {
      for (int32_t first = 0; first < pixels; first += kBlockPixels) {
        const int32_t count = pixels - first < kBlockPixels ? pixels - first : kBlockPixels;
        const int8_t* column[kBlockPixels];
        for (int32_t j = 0; j < count; ++j) {
          const int32_t oy = (first + j) / out_w, ox = (first + j) % out_w;
          if (pointwise) {
            const int64_t iy = int64_t{oy} * p.geometry.stride_h;
            const int64_t ix = int64_t{ox} * p.geometry.stride_w;
            column[j] = image + (iy * p.input.w + ix) * p.input.c + int64_t{group} * length;
          } else {
            int8_t* dst = columns + j * length;
            gather_column(p, image, group, oy, ox, dst, fill, copy);
            column[j] = dst;
          }
        }
        for (int32_t j = count; j < kBlockPixels; ++j) column[j] = column[0];  // results unused
        const mve_pred16_t stored = vctp32q(static_cast<uint32_t>(count));
        for (int32_t oc = group * out_per_group; oc < (group + 1) * out_per_group; ++oc) {
          int32_t sums[kBlockPixels], weight_sum;
          uint32_t constant = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
          if (folded) {
            dot4<false>(filter + int64_t{oc} * length, column, length, sums, &weight_sum);
          } else {
            dot4<true>(filter + int64_t{oc} * length, column, length, sums, &weight_sum);
            constant += static_cast<uint32_t>(q.input_offset) * static_cast<uint32_t>(weight_sum);
          }
          int32x4_t acc = vaddq_n_s32(vld1q_s32(sums), static_cast<int32_t>(constant));
          acc = requantize(acc, q.multipliers[oc], q.shifts[oc]);
          acc = offset_and_clamp(acc, q.output_offset, q.activation_min, q.activation_max);
          vstrbq_scatter_offset_p_s32(out_image + int64_t{first} * out_c + oc, scatter, acc, stored);
        }
      }
    }
  }
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
