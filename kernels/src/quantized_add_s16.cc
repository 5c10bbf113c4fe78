#include "cortexm/kernels/quantized_add_s16.h"

#include "cortexm/kernels/requantize.h"
#include "cortexm/kernels/rescaled_binary.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_add_s16_prepare(const AddS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(check_rescale_multipliers(p));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, true));
  return kOk;
}

#if CORTEXM_BUILT_ISA != 2
namespace {

// A side broadcast along a run (step 0) is rescaled once for the run.
void add_s16_scalar(const AddS16Params& params, const int16_t* lhs, const int16_t* rhs,
                    int16_t* output) {
  const AddS16Params p = params;
  for_each_elementwise_run(p.shape, lhs, rhs, output, [&](const int16_t* __restrict a,
                                                           const int16_t* __restrict b,
                                                           int16_t* __restrict out, int32_t count,
                                                           int32_t ls, int32_t rs) {
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i) out[i] = add_s16_one(p, a[i], b[i]);
    } else if (rs == 0) {
      const int32_t y = add_s16_scaled(b[0], p.rhs_multiplier, p.rhs_shift);
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_s16_sum(p, add_s16_scaled(a[int64_t{i} * ls], p.lhs_multiplier, p.lhs_shift), y);
    } else if (ls == 0) {
      const int32_t x = add_s16_scaled(a[0], p.lhs_multiplier, p.lhs_shift);
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_s16_sum(p, x, add_s16_scaled(b[int64_t{i} * rs], p.rhs_multiplier, p.rhs_shift));
    } else {
      strided_run(a, b, out, count, ls, rs,
                  [&p](int32_t x, int32_t y) { return add_s16_one(p, x, y); });
    }
  });
}

}  // namespace
#endif

void quantized_add_s16(const AddS16Params& p, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_add_s16(p, lhs, rhs, output);
#else
  add_s16_scalar(p, lhs, rhs, output);
#endif
}

}  // namespace cortexm
