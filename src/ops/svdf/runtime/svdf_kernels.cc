#include "ops/svdf/runtime/svdf_kernels.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

inline int32_t clamp_to(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace

Error svdf_shape_prepare(const SvdfShape& s) {
  if (s.batches < 1) return invalid("input.shape[0]", s.batches, "must be >= 1");
  if (s.input_size < 1) return invalid("input.shape[1]", s.input_size, "must be >= 1");
  if (s.filters < 1) return invalid("filters", s.filters, "must be >= 1");
  if (s.memory < 1) return invalid("memory", s.memory, "must be >= 1");
  if (s.rank < 1 || s.filters % s.rank != 0) return invalid("rank", s.rank, "must be >= 1 and divide the filters");
  if (int64_t{s.batches} * s.filters * s.memory > INT32_MAX)
    return invalid("state.numel", int64_t{s.batches} * s.filters * s.memory, "must be within int32");
  if (int64_t{s.filters} * s.input_size > INT32_MAX)
    return invalid("feature_weights.numel", int64_t{s.filters} * s.input_size, "must be within int32");
  return kOk;
}

Error svdf_state_prepare(const SvdfStateParams& p) {
  CORTEXM_RETURN_IF_ERROR(svdf_shape_prepare(p.shape));
  if (p.input_offset < -127 || p.input_offset > 128) return invalid("input_offset", p.input_offset, "must be in [-127, 128]");
  if (p.state_zero_point < -32768 || p.state_zero_point > 32767)
    return invalid("state_zero_point", p.state_zero_point, "must be in [-32768, 32767]");
  return check_multiplier("multiplier", p.multiplier, "shift", p.shift);
}

Error svdf_output_prepare(const SvdfOutputParams& p) {
  CORTEXM_RETURN_IF_ERROR(svdf_shape_prepare(p.shape));
  if (p.state_zero_point < -32768 || p.state_zero_point > 32767)
    return invalid("state_zero_point", p.state_zero_point, "must be in [-32768, 32767]");
  if (p.output_offset < -128 || p.output_offset > 127) return invalid("output_offset", p.output_offset, "must be in [-128, 127]");
  return check_multiplier("multiplier", p.multiplier, "shift", p.shift);
}

void svdf_state(const SvdfStateParams& p, const int8_t* input, const int16_t* state,
                const int8_t* feature_weights, int16_t* new_state) {
  const SvdfShape& s = p.shape;
  for (int32_t b = 0; b < s.batches; ++b) {
    const int8_t* x = input + int64_t{b} * s.input_size;
    const int8_t* w = feature_weights;
    for (int32_t f = 0; f < s.filters; ++f, w += s.input_size) {
      const int64_t row = (int64_t{b} * s.filters + f) * s.memory;
      for (int32_t m = 0; m + 1 < s.memory; ++m) new_state[row + m] = state[row + m + 1];
      uint32_t dot = 0;  // wraps as TFLite Micro's int32 sum does
      for (int32_t i = 0; i < s.input_size; ++i)
        dot += static_cast<uint32_t>(int32_t{w[i]} * (int32_t{x[i]} + p.input_offset));
      const int32_t scaled = clamp_to(requantize(static_cast<int32_t>(dot), p.multiplier, p.shift), -32768, 32767);
      new_state[row + s.memory - 1] = static_cast<int16_t>(p.state_zero_point + scaled);
    }
  }
}

void svdf_output(const SvdfOutputParams& p, const int16_t* state, const int16_t* time_weights,
                 const int32_t* bias, int8_t* output) {
  const SvdfShape& s = p.shape;
  const int32_t units = s.units();
  for (int32_t b = 0; b < s.batches; ++b) {
    for (int32_t u = 0; u < units; ++u) {
      uint32_t acc = bias ? static_cast<uint32_t>(bias[u]) : 0u;
      for (int32_t r = 0; r < s.rank; ++r) {
        const int32_t f = u * s.rank + r;
        const int16_t* v = state + (int64_t{b} * s.filters + f) * s.memory;
        const int16_t* w = time_weights + int64_t{f} * s.memory;
        for (int32_t m = 0; m < s.memory; ++m)
          acc += static_cast<uint32_t>(int64_t{w[m]} * (int32_t{v[m]} - p.state_zero_point));
      }
      const int32_t scaled = requantize(static_cast<int32_t>(acc), p.multiplier, p.shift);
      output[int64_t{b} * units + u] = static_cast<int8_t>(
          clamp_to(static_cast<int32_t>(static_cast<uint32_t>(scaled) + static_cast<uint32_t>(p.output_offset)),
                   -128, 127));
    }
  }
}

}  // namespace cortexm
