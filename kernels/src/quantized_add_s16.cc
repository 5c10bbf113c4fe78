#include "cortexm/kernels/quantized_add_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

Error check_multiplier(const char* multiplier_name, int32_t multiplier, const char* shift_name,
                       int32_t shift) {
  if (multiplier < 0) return invalid(multiplier_name, multiplier, "must be in [0, 2^31)");
  if (shift < kMinShift || shift > kMaxShift) return invalid(shift_name, shift, "must be in [-31, 30]");
  return kOk;
}

inline int32_t scaled(int32_t x, int32_t multiplier, int32_t shift) {
  return requantize(x * (1 << kAddS16LeftShift), multiplier, shift);
}

inline int16_t add_scaled(const AddS16Params& p, int32_t a, int32_t b) {
  const int32_t sum = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
  return static_cast<int16_t>(
      clamp(requantize(sum, p.output_multiplier, p.output_shift), p.activation_min, p.activation_max));
}

}  // namespace

Error quantized_add_s16_prepare(const AddS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("self_multiplier", p.lhs_multiplier, "self_shift", p.lhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("other_multiplier", p.rhs_multiplier, "other_shift", p.rhs_shift));
  CORTEXM_RETURN_IF_ERROR(
      check_multiplier("output_multiplier", p.output_multiplier, "output_shift", p.output_shift));
  if (p.activation_min < -32768 || p.activation_min > 32767)
    return invalid("activation_min", p.activation_min, "must be in [-32768, 32767]");
  if (p.activation_max < -32768 || p.activation_max > 32767)
    return invalid("activation_max", p.activation_max, "must be in [-32768, 32767]");
  if (p.activation_min > p.activation_max)
    return invalid("activation_min", p.activation_min, "must be <= activation_max");
  return kOk;
}

// A side broadcast along a run (step 0) is rescaled once for the run.
void quantized_add_s16(const AddS16Params& params, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output) {
  const AddS16Params p = params;
  for_each_broadcast_run(p.shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls, int32_t rs) {
    const int16_t* __restrict a = lhs + li;
    const int16_t* __restrict b = rhs + ri;
    int16_t* __restrict out = output;
    output += count;
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_scaled(p, scaled(a[i], p.lhs_multiplier, p.lhs_shift),
                            scaled(b[i], p.rhs_multiplier, p.rhs_shift));
    } else if (rs == 0) {
      const int32_t y = scaled(b[0], p.rhs_multiplier, p.rhs_shift);
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_scaled(p, scaled(a[int64_t{i} * ls], p.lhs_multiplier, p.lhs_shift), y);
    } else if (ls == 0) {
      const int32_t x = scaled(a[0], p.lhs_multiplier, p.lhs_shift);
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_scaled(p, x, scaled(b[int64_t{i} * rs], p.rhs_multiplier, p.rhs_shift));
    } else {
      for (int32_t i = 0; i < count; ++i)
        out[i] = add_scaled(p, scaled(a[int64_t{i} * ls], p.lhs_multiplier, p.lhs_shift),
                            scaled(b[int64_t{i} * rs], p.rhs_multiplier, p.rhs_shift));
    }
  });
}

}  // namespace cortexm
