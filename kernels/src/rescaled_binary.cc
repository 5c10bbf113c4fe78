#include "cortexm/kernels/rescaled_binary.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

Error check_rescaled_binary(const RescaledBinaryParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_binary_zero_points(p.lhs_offset, p.rhs_offset, p.output_offset));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("self_multiplier", p.lhs_multiplier, "self_shift", p.lhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("other_multiplier", p.rhs_multiplier, "other_shift", p.rhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift));
  return check_activation_range(p.activation_min, p.activation_max);
}

}  // namespace cortexm
