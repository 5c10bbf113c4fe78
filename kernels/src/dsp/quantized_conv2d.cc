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

  // Two filter rows by two columns per pass: each weight word and column word feeds two SMLADs.
  static void dots(const int8_t* const* weights, int32_t rows, const int16_t* const* columns,
                   int32_t count, int32_t length, int32_t (*sums)[kConvBlockPixels]) {
    int32_t j = 0;
    for (; j + 2 <= count; j += 2) {
      if (rows == 2) {
        dot_2x2(weights[0], weights[1], columns[j], columns[j + 1], length, sums, j);
      } else {
        dot2(weights[0], columns[j], columns[j + 1], length, sums[0] + j);
      }
    }
    for (; j < count; ++j)
      for (int32_t r = 0; r < rows; ++r) sums[r][j] = dot1(weights[r], columns[j], length);
  }

  __attribute__((noinline)) static void dot_2x2(const int8_t* __restrict w0, const int8_t* __restrict w1,
                      const int16_t* __restrict c0, const int16_t* __restrict c1, int32_t length,
                      int32_t (*sums)[kConvBlockPixels], int32_t j) {
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    int32_t k = 0;
    for (; k + 4 <= length; k += 4) {
      const uint32_t x0 = load_u32(c0 + k), x1 = load_u32(c1 + k);
      const uint32_t a = load_u32(w0 + k), b = load_u32(w1 + k);
      const uint32_t a02 = sxtb16(a), b02 = sxtb16(b);
      s00 = smlad(a02, x0, s00);
      s01 = smlad(a02, x1, s01);
      s10 = smlad(b02, x0, s10);
      s11 = smlad(b02, x1, s11);
      const uint32_t y0 = load_u32(c0 + k + 2), y1 = load_u32(c1 + k + 2);
      const uint32_t a13 = sxtb16_ror8(a), b13 = sxtb16_ror8(b);
      s00 = smlad(a13, y0, s00);
      s01 = smlad(a13, y1, s01);
      s10 = smlad(b13, y0, s10);
      s11 = smlad(b13, y1, s11);
    }
    for (; k < length; ++k) {
      const int32_t a = w0[k], b = w1[k];
      s00 = static_cast<int32_t>(static_cast<uint32_t>(s00) + static_cast<uint32_t>(c0[k] * a));
      s01 = static_cast<int32_t>(static_cast<uint32_t>(s01) + static_cast<uint32_t>(c1[k] * a));
      s10 = static_cast<int32_t>(static_cast<uint32_t>(s10) + static_cast<uint32_t>(c0[k] * b));
      s11 = static_cast<int32_t>(static_cast<uint32_t>(s11) + static_cast<uint32_t>(c1[k] * b));
    }
    sums[0][j] = s00;
    sums[0][j + 1] = s01;
    sums[1][j] = s10;
    sums[1][j + 1] = s11;
  }

  __attribute__((noinline)) static void dot2(const int8_t* __restrict weights, const int16_t* __restrict c0,
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
