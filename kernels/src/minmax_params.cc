#include "cortexm/kernels/minmax_params.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

Error check_multiplier(const char* multiplier_name, int32_t multiplier, const char* shift_name,
                       int32_t shift) {
  if (multiplier < 0) return invalid(multiplier_name, multiplier, "must be in [0, 2^31)");
  if (shift < kMinShift || shift > kMaxShift) return invalid(shift_name, shift, "must be in [-31, 30]");
  return kOk;
}

}  // namespace

Error minmax_prepare(const MinMaxParams& p) {
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

}  // namespace cortexm
