// MVE variant of quantized_mul_s16: 4 elements per vector of int32 lanes (widening int16 loads, or
// one value repeated for a broadcast side), the exact product and its requantization on vectors,
// narrowing predicated stores. Runs with other strides go element by element.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 2

#include "elementwise.h"
#include "mve/mve_ops.h"

namespace cortexm::mve {

void quantized_mul_s16(const MulS16Params& p, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output) {
  // Locals captured by value: the output stores could alias the params otherwise.
  const MulS16Params params = p;
  const Requantizer scale = make_requantizer(p.output_multiplier, p.output_shift);
  const int32_t lo = p.activation_min, hi = p.activation_max;
  for_each_elementwise_run(p.shape, lhs, rhs, output, [=](const int16_t* a, const int16_t* b, int16_t* out,
                                                           int32_t count, int32_t ls, int32_t rs) {
    if (ls > 1 || rs > 1) {
      strided_run(a, b, out, count, ls, rs,
                  [=](int32_t x, int32_t y) { return mul_s16_one(params, x, y); });
      return;
    }
    const int32x4_t a_fixed = vdupq_n_s32(a[0]), b_fixed = vdupq_n_s32(b[0]);
    for (int32_t i = 0; i < count; i += 4) {
      const mve_pred16_t lanes = vctp32q(static_cast<uint32_t>(count - i));
      const int32x4_t x = ls ? vldrhq_z_s32(a + i, lanes) : a_fixed;
      const int32x4_t y = rs ? vldrhq_z_s32(b + i, lanes) : b_fixed;
      vstrhq_p_s32(out + i, offset_and_clamp(requantize(vmulq_s32(x, y), scale), 0, lo, hi), lanes);
    }
  });
}

}  // namespace cortexm::mve

#endif  // CORTEXM_BUILT_ISA == 2
