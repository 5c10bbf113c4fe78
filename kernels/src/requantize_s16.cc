#include "cortexm/kernels/requantize_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error requantize_s16_prepare(const RequantizeS16Params& p) {
  if (p.size < 0) return invalid("input.numel", p.size, "must be >= 0");
  if (!p.int16_input && !p.int16_output)
    return invalid("input.dtype", 8, "int8 -> int8 is cortex_m.requantize; one side must be int16");
  if (p.int16_input && p.input_offset != 0)
    return invalid("input_zero_point", zero_point_of(p.input_offset), "must be 0 for int16 input");
  if (!p.int16_input && (p.input_offset < -127 || p.input_offset > 128))
    return invalid("input_zero_point", zero_point_of(p.input_offset), "must be in [-128, 127]");
  const int32_t lo = p.int16_output ? -32768 : -128, hi = p.int16_output ? 32767 : 127;
  const char* range = p.int16_output ? "must be in [-32768, 32767]" : "must be in [-128, 127]";
  if (p.output_offset < lo || p.output_offset > hi)
    return invalid("output_zero_point", p.output_offset, range);
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, p.int16_output));
  return kOk;
}

namespace {

template <typename Out>
inline Out requantize_one(const RequantizeS16Params& p, int32_t left, int32_t x) {
  const int32_t scaled = requantize((x + p.input_offset) * (1 << left), p.multiplier, p.shift);
  const int32_t out =
      static_cast<int32_t>(static_cast<uint32_t>(scaled) + static_cast<uint32_t>(p.output_offset));
  return static_cast<Out>(clamp(out, p.activation_min, p.activation_max));
}

// int16 input: the arithmetic per element (a table of 2^16 outputs would not pay off).
template <typename Out>
void from_int16(const RequantizeS16Params& params, const int16_t* __restrict input,
                Out* __restrict output) {
  const RequantizeS16Params p = params;
  for (int64_t i = 0; i < p.size; ++i)
    output[i] = requantize_one<Out>(p, kRequantizeS16LeftShift, input[i]);
}

}  // namespace

void requantize_s16(const RequantizeS16Params& p, const int16_t* input, int8_t* output) {
  from_int16(p, input, output);
}

void requantize_s16(const RequantizeS16Params& p, const int16_t* input, int16_t* output) {
  from_int16(p, input, output);
}

// int8 input: the 256 possible outputs once, then a lookup per element (same arithmetic).
void requantize_s16(const RequantizeS16Params& params, const int8_t* input, int16_t* output) {
  const RequantizeS16Params p = params;
  if (p.size < 256) {
    for (int64_t i = 0; i < p.size; ++i)
      output[i] = requantize_one<int16_t>(p, kRequantizeLeftShift, input[i]);
    return;
  }
  int16_t table[256];
  for (int32_t x = -128; x < 128; ++x)
    table[x + 128] = requantize_one<int16_t>(p, kRequantizeLeftShift, x);
  for (int64_t i = 0; i < p.size; ++i) output[i] = table[input[i] + 128];
}

}  // namespace cortexm
