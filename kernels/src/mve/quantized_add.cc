// MVE variant of quantized_add: 4 elements per vector of int32 lanes (widening loads, or one value
// repeated for a broadcast side), the offsets, << 20 and the three requantizations on vectors,
// narrowing predicated stores. Runs with other strides go element by element.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "elementwise.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

void quantized_add(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  // Locals captured by value: the int8 output stores could alias the params otherwise, and every
  // iteration would reload them.
  const AddParams params = p;
  const Requantizer lhs_scale = make_requantizer(p.lhs_multiplier, p.lhs_shift);
  const Requantizer rhs_scale = make_requantizer(p.rhs_multiplier, p.rhs_shift);
  const Requantizer out_scale = make_requantizer(p.output_multiplier, p.output_shift);
  const int32_t lhs_offset = p.lhs_offset, rhs_offset = p.rhs_offset;
  const int32_t out_offset = p.output_offset, lo = p.activation_min, hi = p.activation_max;
  for_each_elementwise_run(p.shape, lhs, rhs, output, [=](const int8_t* a, const int8_t* b, int8_t* out,
                                                           int32_t count, int32_t ls, int32_t rs) {
    if (ls > 1 || rs > 1) {
      strided_run(a, b, out, count, ls, rs,
                  [=](int32_t x, int32_t y) { return add_one(params, x, y); });
      return;
    }
    const int32x4_t a_fixed = vdupq_n_s32(a[0]), b_fixed = vdupq_n_s32(b[0]);
    for (int32_t i = 0; i < count; i += 4) {
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count - i));
      const int32x4_t x = ls ? vldrbq_z_s32(a + i, lanes) : a_fixed;
      const int32x4_t y = rs ? vldrbq_z_s32(b + i, lanes) : b_fixed;
      const int32x4_t x_scaled = requantize(vshlq_n_s32(vaddq_n_s32(x, lhs_offset), kAddLeftShift), lhs_scale);
      const int32x4_t y_scaled = requantize(vshlq_n_s32(vaddq_n_s32(y, rhs_offset), kAddLeftShift), rhs_scale);
      const int32x4_t sum = requantize(vaddq_s32(x_scaled, y_scaled), out_scale);
      vstrbq_p_s32(out + i, offset_and_clamp(sum, out_offset, lo, hi), lanes);
    }
  });
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
