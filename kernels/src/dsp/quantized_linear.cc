// DSP variant of quantized_linear: the input row is widened into scratch a word at a time as int16
// with the input offset added (SXTAB16 / SXTAB16 ROR #8), every full group of 4 stored as
// (x0, x2, x1, x3), so that SXTB16 of 4 weight bytes (w0, w2) and SXTB16 ROR #8 (w1, w3) pair with
// it: two SMLADs per 4 features and output channel. Four channels per pass over the row, in inline
// assembly (GCC spills): per 4 features one LDRD of the row, 4 LDRs of weights, 8 SXTB16, 8 SMLADs
// (21 instructions for 16 MACs). The filter offset is fo * sum (x + io), once per row.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "cortexm/kernels/requantize.h"
#include "dsp/dsp_ops.h"

namespace cortexm::dsp {

namespace {

inline int8_t requantize_output(const LinearParams& p, uint32_t acc, int32_t oc) {
  const int32_t m = p.num_multipliers == 1 ? 0 : oc;
  const int32_t out =
      wrapping_add(requantize(static_cast<int32_t>(acc), p.multipliers[m], p.shifts[m]), p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

// Sums of 4 weight rows (depth bytes apart, from w) with the quads of the widened row x; quads >= 1.
inline void dot_4rows(const int16_t* x, const int8_t* w, int32_t depth, int32_t quads, int32_t* sums) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#if defined(CORTEXM_EMULATE_DSP)
  for (int32_t q = 0; q < quads; ++q, x += 4, w += 4) {
    const uint32_t x02 = load_u32(x), x13 = load_u32(x + 2);
    const uint32_t v0 = load_u32(w), v1 = load_u32(w + depth), v2 = load_u32(w + 2 * depth),
                   v3 = load_u32(w + 3 * depth);
    a0 = smlad(sxtb16_ror8(v0), x13, smlad(sxtb16(v0), x02, a0));
    a1 = smlad(sxtb16_ror8(v1), x13, smlad(sxtb16(v1), x02, a1));
    a2 = smlad(sxtb16_ror8(v2), x13, smlad(sxtb16(v2), x02, a2));
    a3 = smlad(sxtb16_ror8(v3), x13, smlad(sxtb16(v3), x02, a3));
  }
#else
  // Rows 1-3 are read at w + k * depth - 4: w has moved past row 0's word by then.
  const int32_t d1 = depth - 4, d2 = 2 * depth - 4, d3 = 3 * depth - 4;
  const int16_t* const end = x + 4 * quads;
  uint32_t x02, x13, v, t;
#define CORTEXM_DSP_ROW(a, at)                    \
  "ldr    %[v], " at "\n\t"                       \
  "sxtb16 %[t], %[v]\n\t"                         \
  "sxtb16 %[v], %[v], ror #8\n\t"                 \
  "smlad  %[" a "], %[t], %[x02], %[" a "]\n\t"   \
  "smlad  %[" a "], %[v], %[x13], %[" a "]\n\t"
  __asm__ volatile(
      "1:\n\t"
      "ldrd   %[x02], %[x13], [%[x]], #8\n\t"
      CORTEXM_DSP_ROW("a0", "[%[w]], #4")
      CORTEXM_DSP_ROW("a1", "[%[w], %[d1]]")
      CORTEXM_DSP_ROW("a2", "[%[w], %[d2]]")
      CORTEXM_DSP_ROW("a3", "[%[w], %[d3]]")
      "ldr    %[t], %[end]\n\t"
      "cmp    %[x], %[t]\n\t"
      "bne    1b"
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),
        [x02] "=&r"(x02), [x13] "=&r"(x13), [v] "=&r"(v), [t] "=&r"(t)
      : [d1] "r"(d1), [d2] "r"(d2), [d3] "r"(d3), [end] "m"(end)
      : "cc", "memory");
#undef CORTEXM_DSP_ROW
#endif
  sums[0] = a0;
  sums[1] = a1;
  sums[2] = a2;
  sums[3] = a3;
}

}  // namespace

void quantized_linear(const LinearParams& p, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* scratch) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const int32_t quads = depth / 4;
  const int32_t grouped = quads * 4;
  const uint32_t offsets = splat16(p.input_offset);
  const bool per_channel = p.num_multipliers != 1;
  // The bias goes through the stage only on the 4-channel path (per_channel picks its index).
  const Stage stage = {nullptr, p.multipliers, p.shifts, p.output_offset, p.activation_min, p.activation_max,
                       splat8(p.activation_min), splat8(p.activation_max)};
  int16_t* __restrict x = static_cast<int16_t*>(scratch);
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* __restrict in_row = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    // Widened a word at a time; sum (x + io) by SMLADs with (1, 1) when the filter offset needs it.
    int32_t x_sum = 0;
    const bool summed = p.filter_offset != 0;
    for (int32_t k = 0; k < grouped; k += 4) {
      const uint32_t v = load_u32(in_row + k);
      const uint32_t x02 = sxtab16(offsets, v), x13 = sxtab16_ror8(offsets, v);
      store_u32(x + k, x02);
      store_u32(x + k + 2, x13);
      if (summed) x_sum = smlad(x13, 0x00010001u, smlad(x02, 0x00010001u, x_sum));
    }
    for (int32_t k = grouped; k < depth; ++k) {
      const int32_t v = in_row[k] + p.input_offset;
      x_sum = static_cast<int32_t>(wrap(x_sum) + wrap(v));
      x[k] = static_cast<int16_t>(v);
    }
    const uint32_t filter_term = wrap(p.filter_offset) * wrap(x_sum);

    int32_t oc = 0;
    if (quads > 0) {
      for (; oc + 4 <= channels; oc += 4) {
        const int8_t* w = weights + int64_t{oc} * depth;
        int32_t sums[4];
        dot_4rows(x, w, depth, quads, sums);
        int32_t v[4];
        for (int32_t r = 0; r < 4; ++r) {
          uint32_t acc = wrap(sums[r]) + filter_term + (bias ? wrap(bias[oc + r]) : 0u);
          const int8_t* tail = w + int64_t{r} * depth;
          for (int32_t k = grouped; k < depth; ++k) acc += wrap(x[k] * tail[k]);
          v[r] = requantized(static_cast<int32_t>(acc), channel(stage, per_channel ? oc + r : 0), stage);
        }
        store_u32(out_row + oc, clamped_bytes(v[0], v[1], v[2], v[3], stage));
      }
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
