// quantized_linear_s16 (int8 weights) and quantized_linear_s16w16 (int16 weights): one loop over
// the weight's element type W; only the dot products (s16_dots.h) and DSP's row order differ.
#include "cortexm/kernels/quantized_linear_s16.h"

#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "cortexm/kernels/requantize.h"
#include "linear_checks.h"
#include "s16_dots.h"

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_linear_s16_prepare(const LinearS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(check_linear_dims(p.batches, p.input_features, p.output_features));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, true));
  CORTEXM_RETURN_IF_ERROR(check_multiplier_count(p.num_multipliers, p.output_features));
  return check_multipliers(p.multipliers, p.shifts, p.num_multipliers, "must be given",
                           kMaxShiftS64);
}

CORTEXM_PREPARE_STEP Error quantized_linear_s16w16_prepare(const LinearS16W16Params& p) {
  CORTEXM_RETURN_IF_ERROR(quantized_linear_s16_prepare(p));
  if (p.input_features > kMaxTapsS16W16)
    return invalid("input_features", p.input_features, "must be <= 2^16 (exact 64-bit sums)");
  return kOk;
}

// Only the DSP variant copies the row (prepare_row); scalar and MVE read the input in place.
size_t quantized_linear_s16_scratch_size(const LinearS16Params& p, Isa isa) {
  if (isa != Isa::kDsp || p.input_features < 1) return 0;
  const size_t bytes = sizeof(int16_t) * static_cast<size_t>(p.input_features);
  return (bytes + 3) & ~size_t{3};
}

size_t quantized_linear_s16w16_scratch_size(const LinearS16W16Params&, Isa) { return 0; }

namespace {

// The variants read the input row in place but DSP's with int8 weights, which copies it to
// scratch reordered for its SMLADs (see s16_dots.h).
template <class W>
const int16_t* prepare_row(const int16_t* row, int32_t length, int16_t* scratch) {
  if constexpr (CORTEXM_BUILT_ISA == 1 && sizeof(W) == 1) {
    int32_t i = 0;
    for (; i + 4 <= length; i += 4) {
      scratch[i] = row[i];
      scratch[i + 1] = row[i + 2];
      scratch[i + 2] = row[i + 1];
      scratch[i + 3] = row[i + 3];
    }
    for (; i < length; ++i) scratch[i] = row[i];
    return scratch;
  } else {
    (void)length;
    (void)scratch;
    return row;
  }
}

inline int16_t finish(const LinearS16Params& p, int64_t sum, const int64_t* bias, int32_t oc) {
  const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                           static_cast<uint64_t>(bias ? bias[oc] : 0));
  const int32_t m = p.num_multipliers == 1 ? 0 : oc;
  const int32_t value = requantize_s64(acc, reduce_multiplier(p.multipliers[m]), p.shifts[m]);
  return static_cast<int16_t>(clamp(value, p.activation_min, p.activation_max));
}

// Four rows per pass on DSP with int8 weights, three on MVE with int16 weights (their 64-bit sums
// take a core register pair each), then two.
template <class W>
void linear_s16(const LinearS16Params& p, const int16_t* input, const W* weights, const int64_t* bias,
                int16_t* output, void* scratch) {
  const int32_t depth = p.input_features, channels = p.output_features;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int16_t* x =
        prepare_row<W>(input + int64_t{b} * depth, depth, static_cast<int16_t*>(scratch));
    int16_t* out = output + int64_t{b} * channels;
    int32_t oc = 0;
#if CORTEXM_BUILT_ISA == 1
    if constexpr (sizeof(W) == 1) {
      for (; oc + 4 <= channels; oc += 4) {
        int64_t sums[4];
        s16::dot4(x, weights + int64_t{oc} * depth, depth, sums);
        for (int32_t j = 0; j < 4; ++j) out[oc + j] = finish(p, sums[j], bias, oc + j);
      }
    }
#elif CORTEXM_BUILT_ISA == 2
    if constexpr (sizeof(W) == 2) {
      for (; oc + 3 <= channels; oc += 3) {
        int64_t sums[3];
        s16::dot3(x, weights + int64_t{oc} * depth, depth, sums);
        for (int32_t j = 0; j < 3; ++j) out[oc + j] = finish(p, sums[j], bias, oc + j);
      }
    }
#endif
    for (; oc + 2 <= channels; oc += 2) {
      const W* w0 = weights + int64_t{oc} * depth;
      int64_t sums[2];
      s16::dot2(x, w0, depth, sums);
      out[oc] = finish(p, sums[0], bias, oc);
      out[oc + 1] = finish(p, sums[1], bias, oc + 1);
    }
    if (oc < channels) out[oc] = finish(p, s16::dot(x, weights + int64_t{oc} * depth, depth), bias, oc);
  }
}

}  // namespace

void quantized_linear_s16(const LinearS16Params& p, const int16_t* input, const int8_t* weights,
                          const int64_t* bias, int16_t* output, void* scratch) {
  linear_s16(p, input, weights, bias, output, scratch);
}

void quantized_linear_s16w16(const LinearS16W16Params& p, const int16_t* input,
                             const int16_t* weights, const int64_t* bias, int16_t* output,
                             void* scratch) {
  linear_s16(p, input, weights, bias, output, scratch);
}

}  // namespace cortexm
