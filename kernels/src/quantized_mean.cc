#include "cortexm/kernels/quantized_mean.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

template <class T>
inline T finish(const MeanParams& p, int32_t sum) {
  const int32_t v = wrapping_add(requantize(sum, p.multiplier, p.shift), p.output_offset);
  return static_cast<T>(clamp(v, p.activation_min, p.activation_max));
}

template <class T>
void mean_blocks(const MeanParams& params, const T* input, T* output, void* scratch) {
  const MeanParams p = params;  // a local copy: output stores cannot alias it
  const int32_t offset_sum = p.input_offset * p.reduce;  // the offset once per output
  if (p.inner == 1) {
    for (int32_t o = 0; o < p.outer; ++o) {
      const T* row = input + int64_t{o} * p.reduce;
      int32_t sum = 0;
      for (int32_t r = 0; r < p.reduce; ++r) sum += row[r];
      output[o] = finish<T>(p, sum + offset_sum);
    }
    return;
  }
  // Rows of `inner` values summed into int32 accumulators (channels-last spatial means).
  int32_t* sums = static_cast<int32_t*>(scratch);
  for (int32_t o = 0; o < p.outer; ++o) {
    const T* block = input + int64_t{o} * p.reduce * p.inner;
    for (int32_t i = 0; i < p.inner; ++i) sums[i] = offset_sum;
    for (int32_t r = 0; r < p.reduce; ++r) {
      const T* row = block + int64_t{r} * p.inner;
      for (int32_t i = 0; i < p.inner; ++i) sums[i] += row[i];
    }
    T* out = output + int64_t{o} * p.inner;
    for (int32_t i = 0; i < p.inner; ++i) out[i] = finish<T>(p, sums[i]);
  }
}

}  // namespace

QuantizedMultiplier mean_multiplier(QuantizedMultiplier m, int64_t count) {
  int32_t k = 0;  // floor(log2(count))
  while ((count >> (k + 1)) != 0) ++k;
  if (k > 32) k = 32;
  if (k > 31 + m.shift) k = 31 + m.shift;  // keeps the final shift >= -31
  if (k < 0) k = 0;  // a shift below -31 stays one (prepare refuses it)
  return {static_cast<int32_t>((int64_t{m.multiplier} << k) / count), m.shift - k};
}

namespace {

// Extents >= 1, reduce <= max_reduce (so that the int32 sum cannot overflow).
Error check_extents(const MeanParams& p, int32_t max_reduce, const char* reduce_bound) {
  if (p.outer < 1) return invalid("outer", p.outer, "must be >= 1");
  if (p.reduce < 1) return invalid("reduce", p.reduce, "must be >= 1");
  if (p.inner < 1) return invalid("inner", p.inner, "must be >= 1");
  if (p.reduce > max_reduce) return invalid("reduce", p.reduce, reduce_bound);
  return kOk;
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_mean_prepare(const MeanParams& p) {
  // The sum of reduce values in [-255, 255] stays within int32.
  CORTEXM_RETURN_IF_ERROR(check_extents(p, 1 << 23, "must be <= 2^23"));
  CORTEXM_RETURN_IF_ERROR(check_input_offset("input_offset", p.input_offset));
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_offset", p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

size_t quantized_mean_scratch_size(const MeanParams& p, Isa /*isa*/) {
  return p.inner < 1 ? 0 : sizeof(int32_t) * static_cast<size_t>(p.inner);
}

void quantized_mean(const MeanParams& params, const int8_t* input, int8_t* output, void* scratch) {
  mean_blocks(params, input, output, scratch);
}

CORTEXM_PREPARE_STEP Error quantized_mean_s16_prepare(const MeanParams& p) {
  // The sum of reduce values in [-32768, 32767] stays within int32.
  CORTEXM_RETURN_IF_ERROR(check_extents(p, 65535, "must be <= 65535"));
  if (p.input_offset != 0) return invalid("input_offset", p.input_offset, "must be 0 (symmetric int16)");
  if (p.output_offset != 0) return invalid("output_offset", p.output_offset, "must be 0 (symmetric int16)");
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  return check_activation_range(p.activation_min, p.activation_max, /*int16=*/true);
}

void quantized_mean_s16(const MeanParams& params, const int16_t* input, int16_t* output,
                        void* scratch) {
  mean_blocks(params, input, output, scratch);
}

}  // namespace cortexm
