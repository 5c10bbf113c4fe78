#include "cortexm/kernels/quantized_linear.h"

#include "cortexm/kernels/requantize.h"
#include "linear_checks.h"
#include "variants.h"
#if defined(CORTEXM_HOST_X86)
#include "cortexm/kernels/host_variant.h"
#include "x86/gemm_s8.h"
#include "x86/packed_gemm_s8.h"
#endif

namespace cortexm {


CORTEXM_PREPARE_STEP Error quantized_linear_prepare(const LinearParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_linear_dims(p.batches, p.input_features, p.output_features));
  CORTEXM_RETURN_IF_ERROR(check_input_offset("input_offset", p.input_offset));
  CORTEXM_RETURN_IF_ERROR(check_input_offset("filter_offset", p.filter_offset));
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_offset", p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  CORTEXM_RETURN_IF_ERROR(check_multiplier_count(p.num_multipliers, p.output_features));
  return check_multipliers(p.multipliers, p.shifts, p.num_multipliers, "must be given");
}

// Every variant reads the int8 input row in place.
size_t quantized_linear_scratch_size(const LinearParams& /*params*/, Isa /*isa*/) { return 0; }

void quantized_linear_fold_bias(const LinearParams& p, const int8_t* weights, const int32_t* bias,
                                int32_t* folded) {
  const int32_t depth = p.input_features;
  const uint32_t offset = static_cast<uint32_t>(p.input_offset);
  const uint32_t offsets_term =
      static_cast<uint32_t>(depth) * offset * static_cast<uint32_t>(p.filter_offset);
  for (int32_t oc = 0; oc < p.output_features; ++oc) {
    const int8_t* row = weights + int64_t{oc} * depth;
    uint32_t weight_sum = 0;
    for (int32_t k = 0; k < depth; ++k) weight_sum += static_cast<uint32_t>(row[k]);
    const uint32_t b = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
    folded[oc] = static_cast<int32_t>(b + offset * weight_sum + offsets_term);
  }
}

#if CORTEXM_BUILT_ISA == 0
namespace {

// Dot products run over chunks of at most this many features so their int32 sums cannot overflow:
// 32768 * 255 * 128 < 2^31. Chunk sums, bias and the filter-offset term then add modulo 2^32,
// as the target's 32-bit accumulators do, so any summation order gives the same result.
constexpr int32_t kDotChunk = 32768;

inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

// x is the int8 input row, read in place and offset on the fly; weights stay int8. Written as plain
// reductions so GCC -O3 vectorizes them.
inline int32_t dot1(const int8_t* __restrict x, int32_t offset, const int8_t* __restrict w, int32_t n) {
  int32_t s = 0;
  for (int32_t k = 0; k < n; ++k) s += (x[k] + offset) * w[k];
  return s;
}

// Four weight rows per pass over x: each input load feeds four multiply-adds.
inline void dot4(const int8_t* __restrict x, int32_t offset, const int8_t* __restrict w0,
                 const int8_t* __restrict w1, const int8_t* __restrict w2,
                 const int8_t* __restrict w3, int32_t n, int32_t* __restrict sums) {
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t k = 0; k < n; ++k) {
    const int32_t xk = x[k] + offset;
    s0 += xk * w0[k];
    s1 += xk * w1[k];
    s2 += xk * w2[k];
    s3 += xk * w3[k];
  }
  sums[0] = s0;
  sums[1] = s1;
  sums[2] = s2;
  sums[3] = s3;
}

inline int8_t requantize_output(const LinearParams& p, uint32_t acc, int32_t oc) {
  const int32_t m = p.num_multipliers == 1 ? 0 : oc;
  const int32_t out =
      wrapping_add(requantize(static_cast<int32_t>(acc), p.multipliers[m], p.shifts[m]), p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

// acc = bias + sum (x + io) * (w + fo) = bias + sum (x + io) * w + fo * sum (x + io): the
// filter offset costs one row sum per batch row instead of widening the weights.
void linear_scalar(const LinearParams& p, const int8_t* input, const int8_t* weights,
                   const int32_t* bias, int8_t* output) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const int32_t offset = p.input_offset;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* __restrict x = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    uint32_t x_sum = 0;
    for (int32_t k = 0; k < depth; ++k) x_sum += wrap(x[k] + offset);
    const uint32_t filter_term = wrap(p.filter_offset) * x_sum;

    int32_t oc = 0;
    for (; oc + 4 <= channels; oc += 4) {
      const int8_t* w0 = weights + int64_t{oc} * depth;
      const int8_t* w1 = w0 + depth;
      const int8_t* w2 = w1 + depth;
      const int8_t* w3 = w2 + depth;
      uint32_t acc[4];
      for (int j = 0; j < 4; ++j) acc[j] = (bias ? wrap(bias[oc + j]) : 0u) + filter_term;
      for (int32_t k0 = 0, n = 0; k0 < depth; k0 += n) {
        n = depth - k0 < kDotChunk ? depth - k0 : kDotChunk;
        int32_t sums[4];
        dot4(x + k0, offset, w0 + k0, w1 + k0, w2 + k0, w3 + k0, n, sums);
        for (int j = 0; j < 4; ++j) acc[j] += wrap(sums[j]);
      }
      for (int j = 0; j < 4; ++j) out_row[oc + j] = requantize_output(p, acc[j], oc + j);
    }
    for (; oc < channels; ++oc) {
      const int8_t* w = weights + int64_t{oc} * depth;
      uint32_t acc = (bias ? wrap(bias[oc]) : 0u) + filter_term;
      for (int32_t k0 = 0, n = 0; k0 < depth; k0 += n) {
        n = depth - k0 < kDotChunk ? depth - k0 : kDotChunk;
        acc += wrap(dot1(x + k0, offset, w + k0, n));
      }
      out_row[oc] = requantize_output(p, acc, oc);
    }
  }
}

}  // namespace
#endif

size_t quantized_linear_host_packed_size(const LinearParams& p) {
#if defined(CORTEXM_HOST_X86) && !(defined(CORTEXM_SINGLE_ROUNDING) && CORTEXM_SINGLE_ROUNDING)
  if (p.filter_offset != 0) return 0;
  return x86::packed_weights_size(1, p.input_features, p.output_features, x86::packing_variant(p.host_variant));
#else
  static_cast<void>(p);
  return 0;
#endif
}

void quantized_linear_host_pack(const LinearParams& p, const int8_t* weights, const int32_t* bias, void* packed) {
#if defined(CORTEXM_HOST_X86)
  x86::pack_weights(weights, 1, p.input_features, p.output_features, bias,
                    p.bias_includes_input_offset ? 0 : p.input_offset, x86::packing_variant(p.host_variant), packed);
#else
  static_cast<void>(p);
  static_cast<void>(weights);
  static_cast<void>(bias);
  static_cast<void>(packed);
#endif
}

// With the folded bias, bias + sum x * (w + filter_offset) is the unfolded arithmetic at input
// offset 0: every variant runs that.
void quantized_linear(const LinearParams& params, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* scratch) {
  LinearParams p = params;
  if (p.bias_includes_input_offset) {
    p.input_offset = 0;
    p.bias_includes_input_offset = false;
  }
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_linear(p, input, weights, bias, output, scratch);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_linear(p, input, weights, bias, output, scratch);
#else
  static_cast<void>(scratch);
#if defined(CORTEXM_HOST_X86)
  const HostVariant variant = resolve_host_variant(p.host_variant);  // one for the whole call
  if (p.filter_offset == 0 && variant != HostVariant::kScalar) {
    x86::GemmS8 g{};
    g.a = input;
    g.a_stride = p.input_features;
    g.rows = p.batches;
    g.w = weights;
    g.depth = p.input_features;
    g.cols = p.output_features;
    g.offset = p.input_offset;
    g.bias = bias;
    g.multipliers = p.multipliers;
    g.shifts = p.shifts;
    g.per_channel = p.num_multipliers > 1;
    g.output_offset = p.output_offset;
    g.activation_min = p.activation_min;
    g.activation_max = p.activation_max;
    g.out = output;
    g.out_stride = p.output_features;
    if (const void* packed = x86::packed_group(p.host_packed, 0, p.input_features, p.output_features, variant)) {
      x86::packed_gemm_s8(g, packed, variant);  // (the packing holds the bias and the offset's term)
      return;
    }
    if (x86::gemm_s8(g, variant)) return;
  }
#endif
  linear_scalar(p, input, weights, bias, output);
#endif
}

}  // namespace cortexm
