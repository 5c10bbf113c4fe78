#include "cortexm/kernels/rescaled_binary.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

Error check_rescaled_binary(const RescaledBinaryParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_binary_zero_points(p.lhs_offset, p.rhs_offset, p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_rescale_multipliers(p));
  return check_activation_range(p.activation_min, p.activation_max);
}

}  // namespace cortexm
