#include "cortexm/kernels/quantized_add.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

namespace {

Error check_multiplier(const char* multiplier_name, int32_t multiplier, const char* shift_name,
                       int32_t shift) {
  if (multiplier < 0) return invalid(multiplier_name, multiplier, "must be in [0, 2^31)");
  if (shift < kMinShift || shift > kMaxShift) return invalid(shift_name, shift, "must be in [-31, 30]");
  return kOk;
}

}  // namespace

Error quantized_add_prepare(const AddParams& p) {
  if (p.lhs_offset < -127 || p.lhs_offset > 128)
    return invalid("self_zero_point", -p.lhs_offset, "must be in [-128, 127]");
  if (p.rhs_offset < -127 || p.rhs_offset > 128)
    return invalid("other_zero_point", -p.rhs_offset, "must be in [-128, 127]");
  if (p.output_offset < -128 || p.output_offset > 127)
    return invalid("output_zero_point", p.output_offset, "must be in [-128, 127]");
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("self_multiplier", p.lhs_multiplier, "self_shift", p.lhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("other_multiplier", p.rhs_multiplier, "other_shift", p.rhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

#if CORTEXM_BUILT_ISA == 0
namespace {

void add_scalar(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  for_each_broadcast_run(p.shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls, int32_t rs) {
    const int8_t* a = lhs + li;
    const int8_t* b = rhs + ri;
    int8_t* out = output;
    output += count;
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i) out[i] = add_one(p, a[i], b[i]);
    } else {
      for (int32_t i = 0; i < count; ++i) out[i] = add_one(p, a[i * ls], b[i * rs]);
    }
  });
}

}  // namespace
#endif

void quantized_add(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_add(p, lhs, rhs, output);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_add(p, lhs, rhs, output);
#else
  add_scalar(p, lhs, rhs, output);
#endif
}

}  // namespace cortexm
