// MVE variant of quantized_add_s16: 4 elements per vector of int32 lanes (widening int16 loads; a
// broadcast side rescaled once per run), << 15 and the three requantizations on vectors, narrowing
// predicated stores. Runs with other strides go element by element.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "elementwise.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

void quantized_add_s16(const AddS16Params& p, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output) {
  // Locals captured by value: the output stores could alias the params otherwise.
  const AddS16Params params = p;
  const Requantizer lhs_scale = make_requantizer(p.lhs_multiplier, p.lhs_shift);
  const Requantizer rhs_scale = make_requantizer(p.rhs_multiplier, p.rhs_shift);
  const Requantizer out_scale = make_requantizer(p.output_multiplier, p.output_shift);
  const int32_t lo = p.activation_min, hi = p.activation_max;
  for_each_elementwise_run(p.shape, lhs, rhs, output, [=](const int16_t* a, const int16_t* b, int16_t* out,
                                                           int32_t count, int32_t ls, int32_t rs) {
    if (ls > 1 || rs > 1) {
      strided_run(a, b, out, count, ls, rs,
                  [=](int32_t x, int32_t y) { return add_s16_one(params, x, y); });
      return;
    }
    const int32x4_t a_fixed = vdupq_n_s32(add_s16_scaled(a[0], params.lhs_multiplier, params.lhs_shift));
    const int32x4_t b_fixed = vdupq_n_s32(add_s16_scaled(b[0], params.rhs_multiplier, params.rhs_shift));
    for (int32_t i = 0; i < count; i += 4) {
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count - i));
      const int32x4_t x = ls ? requantize(vshlq_n_s32(vldrhq_z_s32(a + i, lanes), kAddS16LeftShift), lhs_scale)
                             : a_fixed;
      const int32x4_t y = rs ? requantize(vshlq_n_s32(vldrhq_z_s32(b + i, lanes), kAddS16LeftShift), rhs_scale)
                             : b_fixed;
      const int32x4_t sum = requantize(vaddq_s32(x, y), out_scale);
      vstrhq_p_s32(out + i, offset_and_clamp(sum, 0, lo, hi), lanes);
    }
  });
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
