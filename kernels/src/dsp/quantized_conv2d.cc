// DSP variant of quantized_conv2d: the scalar driver's int16 columns, with every full group of 4
// taps stored as (x0, x2, x1, x3) so that SXTB16 of 4 filter bytes (w0, w2) and SXTB16 ROR #8
// (w1, w3) pair with them directly: two SMLADs per 4 taps and column, no repacking of weights.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "conv_int16_columns.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

struct DspDots {
  static void prepare(int16_t* column, int32_t length) {
    for (int32_t k = 0; k + 4 <= length; k += 4) {
      const int16_t x1 = column[k + 1];
      column[k + 1] = column[k + 2];
      column[k + 2] = x1;
    }
  }

  // Two passes over the filter row, two columns each: four columns at once run out of registers.
  static void dot4(const int8_t* __restrict weights, const int16_t* __restrict c0,
                   const int16_t* __restrict c1, const int16_t* __restrict c2,
                   const int16_t* __restrict c3, int32_t length, int32_t* __restrict sums) {
    dot2(weights, c0, c1, length, sums);
    dot2(weights, c2, c3, length, sums + 2);
  }

  static void dot2(const int8_t* __restrict weights, const int16_t* __restrict c0,
                   const int16_t* __restrict c1, int32_t length, int32_t* __restrict sums) {
    int32_t s0 = 0, s1 = 0;
    int32_t k = 0;
    for (; k + 4 <= length; k += 4) {
      const uint32_t w = load_u32(weights + k);
      const uint32_t w02 = sxtb16(w), w13 = sxtb16_ror8(w);
      s0 = smlad(w02, load_u32(c0 + k), s0);
      s1 = smlad(w02, load_u32(c1 + k), s1);
      s0 = smlad(w13, load_u32(c0 + k + 2), s0);
      s1 = smlad(w13, load_u32(c1 + k + 2), s1);
    }
    for (; k < length; ++k) {
      const int32_t w = weights[k];
      s0 = static_cast<int32_t>(static_cast<uint32_t>(s0) + static_cast<uint32_t>(c0[k] * w));
      s1 = static_cast<int32_t>(static_cast<uint32_t>(s1) + static_cast<uint32_t>(c1[k] * w));
    }
    sums[0] = s0;
    sums[1] = s1;
  }

  static int32_t dot1(const int8_t* __restrict weights, const int16_t* __restrict column,
                      int32_t length) {
    int32_t s = 0;
    int32_t k = 0;
    for (; k + 4 <= length; k += 4) {
      const uint32_t w = load_u32(weights + k);
      s = smlad(sxtb16(w), load_u32(column + k), s);
      s = smlad(sxtb16_ror8(w), load_u32(column + k + 2), s);
    }
    for (; k < length; ++k)
      s = static_cast<int32_t>(static_cast<uint32_t>(s) + static_cast<uint32_t>(column[k] * weights[k]));
    return s;
  }
};

}  // namespace

void quantized_conv2d(const Conv2dParams& p, const int8_t* input, const int8_t* filter,
                      const int32_t* bias, int8_t* output, void* scratch) {
  conv2d_int16_columns<DspDots>(p, input, filter, bias, output, scratch);
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
