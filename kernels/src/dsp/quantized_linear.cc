// DSP variant of quantized_linear: the input row is widened into scratch as int16 with the input
// offset added, every full group of 4 stored as (x0, x2, x1, x3), so that SXTB16 of 4 weight bytes
// (w0, w2) and SXTB16 ROR #8 (w1, w3) pair with it: two SMLADs per 4 features and output channel,
// two channels per pass over the row. The filter offset is fo * sum (x + io), once per row.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

inline uint32_t wrap(int32_t v) { return static_cast<uint32_t>(v); }

inline int8_t requantize_output(const LinearParams& p, uint32_t acc, int32_t oc) {
  const int32_t m = p.num_multipliers == 1 ? 0 : oc;
  const int32_t out =
      wrapping_add(requantize(static_cast<int32_t>(acc), p.multipliers[m], p.shifts[m]), p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

}  // namespace

void quantized_linear(const LinearParams& p, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const int32_t grouped = depth / 4 * 4;
  int16_t* __restrict x = static_cast<int16_t*>(scratch);
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* __restrict in_row = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    uint32_t x_sum = 0;
    for (int32_t k = 0; k < depth; ++k) {
      const int32_t v = in_row[k] + p.input_offset;
      x_sum += wrap(v);
      // Positions 1 and 2 of each full group of 4 swap places.
      const int32_t lane = k % 4;
      const int32_t at = k < grouped && (lane == 1 || lane == 2) ? k + 3 - 2 * lane : k;
      x[at] = static_cast<int16_t>(v);
    }
    const uint32_t filter_term = wrap(p.filter_offset) * x_sum;

    int32_t oc = 0;
    for (; oc + 2 <= channels; oc += 2) {
      const int8_t* w0 = weights + int64_t{oc} * depth;
      const int8_t* w1 = w0 + depth;
      int32_t s0 = 0, s1 = 0;
      int32_t k = 0;
      for (; k < grouped; k += 4) {
        const uint32_t x02 = load_u32(x + k), x13 = load_u32(x + k + 2);
        const uint32_t a = load_u32(w0 + k), c = load_u32(w1 + k);
        s0 = smlad(sxtb16(a), x02, s0);
        s0 = smlad(sxtb16_ror8(a), x13, s0);
        s1 = smlad(sxtb16(c), x02, s1);
        s1 = smlad(sxtb16_ror8(c), x13, s1);
      }
      uint32_t acc0 = wrap(s0), acc1 = wrap(s1);
      for (; k < depth; ++k) {
        acc0 += wrap(x[k] * w0[k]);
        acc1 += wrap(x[k] * w1[k]);
      }
      acc0 += (bias ? wrap(bias[oc]) : 0u) + filter_term;
      acc1 += (bias ? wrap(bias[oc + 1]) : 0u) + filter_term;
      out_row[oc] = requantize_output(p, acc0, oc);
      out_row[oc + 1] = requantize_output(p, acc1, oc + 1);
    }
    for (; oc < channels; ++oc) {
      const int8_t* w = weights + int64_t{oc} * depth;
      int32_t s = 0;
      int32_t k = 0;
      for (; k < grouped; k += 4) {
        const uint32_t a = load_u32(w + k);
        s = smlad(sxtb16(a), load_u32(x + k), s);
        s = smlad(sxtb16_ror8(a), load_u32(x + k + 2), s);
      }
      uint32_t acc = wrap(s);
      for (; k < depth; ++k) acc += wrap(x[k] * w[k]);
      acc += (bias ? wrap(bias[oc]) : 0u) + filter_term;
      out_row[oc] = requantize_output(p, acc, oc);
    }
  }
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
