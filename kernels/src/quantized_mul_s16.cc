#include "cortexm/kernels/quantized_mul_s16.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_mul_s16_prepare(const MulS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, true));
  return kOk;
}

#if CORTEXM_BUILT_ISA != 2
namespace {

void mul_s16_scalar(const MulS16Params& params, const int16_t* lhs, const int16_t* rhs,
                    int16_t* output) {
  const MulS16Params p = params;
  for_each_elementwise_run(p.shape, lhs, rhs, output, [&](const int16_t* __restrict a,
                                                           const int16_t* __restrict b,
                                                           int16_t* __restrict out, int32_t count,
                                                           int32_t ls, int32_t rs) {
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i) out[i] = mul_s16_one(p, a[i], b[i]);
    } else {
      strided_run(a, b, out, count, ls, rs,
                  [&p](int32_t x, int32_t y) { return mul_s16_one(p, x, y); });
    }
  });
}

}  // namespace
#endif

void quantized_mul_s16(const MulS16Params& p, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_mul_s16(p, lhs, rhs, output);
#else
  mul_s16_scalar(p, lhs, rhs, output);
#endif
}

}  // namespace cortexm
