// DSP variant of quantized_linear: reads the int8 input row in place (no scratch). Per 4 features
// one LDR of the row, SXTAB16 / SXTAB16 ROR #8 widen it with the input offset added to (x0, x2) and
// (x1, x3) (with the folded bias the offset is 0), shared by 4 weight rows: per row one LDR,
// SXTB16 gives (w0, w2) and SXTB16 ROR #8 (w1, w3), two SMLADs. Four channels per pass over the
// row, 2 quads per loop step, in inline assembly (GCC spills): 2 x (3 + 4 x 5) + 3 = 49
// instructions for 32 MACs. The filter offset is fo * sum (x + io), once per row.
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

// One quad of 4 features: x (4 input bytes) widened with the offsets against 4 weight rows.
inline void quad_4rows(uint32_t x, uint32_t offsets, const int8_t* w, int32_t depth, int32_t* acc) {
  const uint32_t x02 = sxtab16(offsets, x), x13 = sxtab16_ror8(offsets, x);
  for (int32_t r = 0; r < 4; ++r) {
    const uint32_t v = load_u32(w + r * depth);
    acc[r] = smlad(sxtb16_ror8(v), x13, smlad(sxtb16(v), x02, acc[r]));
  }
}

// Sums of 4 weight rows (depth bytes apart, from w) with the first 4 * quads input bytes x, each
// plus the input offset (splat in offsets). Not inlined: its assembly needs 13 registers.
__attribute__((noinline)) void dot_4rows(const int8_t* x, uint32_t offsets, const int8_t* w, int32_t depth, int32_t quads,
                      int32_t* sums) {
  int32_t acc[4] = {0, 0, 0, 0};
  if (quads % 2 != 0) {
    quad_4rows(load_u32(x), offsets, w, depth, acc);
    x += 4;
    w += 4;
  }
  const int32_t pairs = quads / 2;
#if defined(CORTEXM_EMULATE_DSP)
  for (int32_t q = 0; q < 2 * pairs; ++q, x += 4, w += 4) quad_4rows(load_u32(x), offsets, w, depth, acc);
#else
  if (pairs > 0) {
    // Two pointers walk rows 0 and 2; rows 1 and 3 are read at + depth - 4 (after the post-increment).
    const int8_t* w2 = w + 2 * depth;
    const int32_t d = depth - 4;
    const int8_t* const end = x + 8 * pairs;
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    uint32_t x02, x13, v, t;
#define CORTEXM_DSP_ROW(a, at)                    \
  "ldr    %[v], " at "\n\t"                       \
  "sxtb16 %[t], %[v]\n\t"                         \
  "sxtb16 %[v], %[v], ror #8\n\t"                 \
  "smlad  %[" a "], %[t], %[x02], %[" a "]\n\t"   \
  "smlad  %[" a "], %[v], %[x13], %[" a "]\n\t"
#define CORTEXM_DSP_QUAD                            \
  "ldr    %[t], [%[x]], #4\n\t"                     \
  "sxtab16 %[x02], %[offsets], %[t]\n\t"            \
  "sxtab16 %[x13], %[offsets], %[t], ror #8\n\t"    \
  CORTEXM_DSP_ROW("a0", "[%[w]], #4")               \
  CORTEXM_DSP_ROW("a1", "[%[w], %[d]]")             \
  CORTEXM_DSP_ROW("a2", "[%[w2]], #4")              \
  CORTEXM_DSP_ROW("a3", "[%[w2], %[d]]")
    __asm__ volatile(
        "1:\n\t"
        CORTEXM_DSP_QUAD
        CORTEXM_DSP_QUAD
        "ldr    %[t], %[end]\n\t"
        "cmp    %[x], %[t]\n\t"
        "bne    1b"
        : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),
          [w2] "+r"(w2), [x02] "=&r"(x02), [x13] "=&r"(x13), [v] "=&r"(v), [t] "=&r"(t)
        : [d] "r"(d), [offsets] "r"(offsets), [end] "m"(end)
        : "cc", "memory");
#undef CORTEXM_DSP_QUAD
#undef CORTEXM_DSP_ROW
    acc[0] = a0;
    acc[1] = a1;
    acc[2] = a2;
    acc[3] = a3;
  }
#endif
  for (int32_t r = 0; r < 4; ++r) sums[r] = acc[r];
}

}  // namespace

void quantized_linear(const LinearParams& p, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* /*scratch*/) {
  const int32_t depth = p.input_features;
  const int32_t channels = p.output_features;
  const int32_t quads = depth / 4;
  const int32_t grouped = quads * 4;
  const uint32_t offsets = splat16(p.input_offset);
  const bool per_channel = p.num_multipliers != 1;
  // The bias goes through the stage only on the 4-channel path (per_channel picks its index).
  const Stage stage = {nullptr, p.multipliers, p.shifts, p.output_offset, p.activation_min, p.activation_max,
                       splat8(p.activation_min), splat8(p.activation_max)};
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* __restrict x = input + int64_t{b} * depth;
    int8_t* out_row = output + int64_t{b} * channels;
    // sum (x + io) by SMLADs with (1, 1), only when the filter offset needs it.
    int32_t x_sum = 0;
    if (p.filter_offset != 0) {
      for (int32_t k = 0; k < grouped; k += 4) {
        const uint32_t v = load_u32(x + k);
        x_sum = smlad(sxtab16_ror8(offsets, v), 0x00010001u, smlad(sxtab16(offsets, v), 0x00010001u, x_sum));
      }
      for (int32_t k = grouped; k < depth; ++k) x_sum = static_cast<int32_t>(wrap(x_sum) + wrap(x[k] + p.input_offset));
    }
    const uint32_t filter_term = wrap(p.filter_offset) * wrap(x_sum);

    int32_t oc = 0;
    if (quads > 0) {
      for (; oc + 4 <= channels; oc += 4) {
        const int8_t* w = weights + int64_t{oc} * depth;
        int32_t sums[4];
        dot_4rows(x, offsets, w, depth, quads, sums);
        int32_t v[4];
        for (int32_t r = 0; r < 4; ++r) {
          uint32_t acc = wrap(sums[r]) + filter_term + (bias ? wrap(bias[oc + r]) : 0u);
          const int8_t* tail = w + int64_t{r} * depth;
          for (int32_t k = grouped; k < depth; ++k) acc += wrap((x[k] + p.input_offset) * tail[k]);
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
        const uint32_t a = load_u32(w + k), v = load_u32(x + k);
        s = smlad(sxtb16(a), sxtab16(offsets, v), s);
        s = smlad(sxtb16_ror8(a), sxtab16_ror8(offsets, v), s);
      }
      uint32_t acc = wrap(s);
      for (; k < depth; ++k) acc += wrap((x[k] + p.input_offset) * w[k]);
      acc += (bias ? wrap(bias[oc]) : 0u) + filter_term;
      out_row[oc] = requantize_output(p, acc, oc);
    }
  }
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
