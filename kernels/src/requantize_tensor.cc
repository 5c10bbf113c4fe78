#include "cortexm/kernels/requantize_tensor.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error requantize_tensor_prepare(const RequantizeParams& p) {
  if (p.size < 0) return invalid("input.numel", p.size, "must be >= 0");
  if (p.input_offset < -127 || p.input_offset > 128)
    return invalid("input_zero_point", zero_point_of(p.input_offset), "must be in [-128, 127]");
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_zero_point", p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

namespace {

int8_t requantize_one(const RequantizeParams& p, int32_t x) {
  const int32_t scaled =
      requantize((x + p.input_offset) * (1 << kRequantizeLeftShift), p.multiplier, p.shift);
  const int32_t out = wrapping_add(scaled, p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

}  // namespace

void requantize_tensor(const RequantizeParams& params, const int8_t* input, int8_t* output) {
  // The 256 possible outputs once, then a table lookup per element (exactly the same arithmetic).
  const RequantizeParams p = params;
  if (p.size < 256) {
    for (int64_t i = 0; i < p.size; ++i)
      output[i] = requantize_one(p, input[i]);
    return;
  }
  int8_t table[256];
  for (int32_t x = -128; x < 128; ++x)
    table[x + 128] = requantize_one(p, x);
  for (int64_t i = 0; i < p.size; ++i) output[i] = table[input[i] + 128];
}

}  // namespace cortexm
