#include "cortexm/kernels/quantized_mul.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_mul_prepare(const MulParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_binary_zero_points(p.lhs_offset, p.rhs_offset, p.output_offset));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

// Runs where one side is broadcast hoist that side's offset value out of the loop.
#if CORTEXM_BUILT_ISA == 0
namespace {

void mul_scalar(const MulParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  for_each_elementwise_run(p.shape, lhs, rhs, output, [&](const int8_t* __restrict a,
                                                           const int8_t* __restrict b,
                                                           int8_t* __restrict out, int32_t count,
                                                           int32_t ls, int32_t rs) {
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i)
        out[i] = mul_one(p, a[i] + p.lhs_offset, b[i] + p.rhs_offset);
    } else if (ls == 1 && rs == 0) {
      const int32_t y = b[0] + p.rhs_offset;
      for (int32_t i = 0; i < count; ++i) out[i] = mul_one(p, a[i] + p.lhs_offset, y);
    } else if (ls == 0 && rs == 1) {
      const int32_t x = a[0] + p.lhs_offset;
      for (int32_t i = 0; i < count; ++i) out[i] = mul_one(p, x, b[i] + p.rhs_offset);
    } else {
      strided_run(a, b, out, count, ls, rs, [&p](int32_t x, int32_t y) {
        return mul_one(p, x + p.lhs_offset, y + p.rhs_offset);
      });
    }
  });
}

}  // namespace
#endif

void quantized_mul(const MulParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_mul(p, lhs, rhs, output);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_mul(p, lhs, rhs, output);
#else
  mul_scalar(p, lhs, rhs, output);
#endif
}

}  // namespace cortexm
