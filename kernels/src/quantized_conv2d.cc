#include "cortexm/kernels/quantized_conv2d.h"

#include "conv_int16_columns.h"
#include "cortexm/kernels/requantize.h"
#include "variants.h"

namespace cortexm {

namespace {

// Plain dot products of a filter row with int16 columns in gather order; GCC -O3 vectorizes
// them (pmaddwd on x86).
struct ScalarDots {
  static void prepare(int16_t*, int32_t) {}

  static void dots(const int8_t* const* weights, int32_t rows, const int16_t* const* columns,
                   int32_t count, int32_t length, int32_t (*sums)[kConvBlockPixels]) {
    for (int32_t r = 0; r < rows; ++r) {
      if (count == kConvBlockPixels) {
        dot4(weights[r], columns[0], columns[1], columns[2], columns[3], length, sums[r]);
      } else {
        for (int32_t j = 0; j < count; ++j) sums[r][j] = dot1(weights[r], columns[j], length);
      }
    }
  }

  static void dot4(const int8_t* __restrict weights, const int16_t* __restrict c0,
                   const int16_t* __restrict c1, const int16_t* __restrict c2,
                   const int16_t* __restrict c3, int32_t length, int32_t* __restrict sums) {
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t i = 0; i < length; ++i) {
      const int16_t w = weights[i];
      s0 += c0[i] * w;
      s1 += c1[i] * w;
      s2 += c2[i] * w;
      s3 += c3[i] * w;
    }
    sums[0] = s0;
    sums[1] = s1;
    sums[2] = s2;
    sums[3] = s3;
  }

  static int32_t dot1(const int8_t* __restrict weights, const int16_t* __restrict column,
                      int32_t length) {
    int32_t sum = 0;
    for (int32_t i = 0; i < length; ++i) sum += column[i] * static_cast<int16_t>(weights[i]);
    return sum;
  }
};

}  // namespace

Dims4 quantized_conv2d_output_dims(const Conv2dParams& p) {
  return conv_output_dims(p.input, p.filter.h, p.filter.w, p.geometry, p.filter.n);
}

Error quantized_conv2d_prepare(const Conv2dParams& p) {
  return validate_grouped_conv(p.quant, p.geometry, p.input, p.filter, p.output);
}

// Scalar: 4 int16 columns. DSP: 2 int16 columns. MVE: 4 int8 columns, none for a 1x1 window
// without padding (read in place).
size_t quantized_conv2d_scratch_size(const Conv2dParams& p, Isa isa) {
  if (p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  const size_t length = static_cast<size_t>(conv_column_length(p));
  if (isa == Isa::kMve) return is_pointwise(p) ? 0 : kConvBlockPixels * length;
  if (isa == Isa::kDsp) return sizeof(int16_t) * 2 * length;
  return sizeof(int16_t) * kConvBlockPixels * length;
}

void quantized_conv2d_fold_bias(const Conv2dParams& p, const int8_t* filter, const int32_t* bias,
                                int32_t* folded) {
  const int32_t length = conv_column_length(p);
  for (int32_t oc = 0; oc < p.filter.n; ++oc) {
    const int8_t* row = filter + int64_t{oc} * length;
    uint32_t weight_sum = 0;
    for (int32_t k = 0; k < length; ++k) weight_sum += static_cast<uint32_t>(row[k]);
    const uint32_t b = bias ? static_cast<uint32_t>(bias[oc]) : 0u;
    folded[oc] = static_cast<int32_t>(b + static_cast<uint32_t>(p.quant.input_offset) * weight_sum);
  }
}

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_conv2d(p, input, filter, bias, output, scratch);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_conv2d(p, input, filter, bias, output, scratch);
#else
  conv2d_int16_columns<ScalarDots>(p, input, filter, bias, output, scratch);
#endif
}

}  // namespace cortexm
