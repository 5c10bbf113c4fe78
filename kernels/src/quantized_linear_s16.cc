#include "cortexm/kernels/quantized_linear_s16.h"

#include "cortexm/kernels/requantize.h"
#include "linear_checks.h"
#if CORTEXM_BUILT_ISA == 1
#include "dsp/dsp_ops.h"
#elif CORTEXM_BUILT_ISA == 2
#include <arm_mve.h>
#endif

namespace cortexm {

Error quantized_linear_s16_prepare(const LinearS16Params& p) {
  CORTEXM_RETURN_IF_ERROR(check_linear_dims(p.batches, p.input_features, p.output_features));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max, true));
  CORTEXM_RETURN_IF_ERROR(check_multiplier_count(p.num_multipliers, p.output_features));
  return check_multipliers(p.multipliers, p.shifts, p.num_multipliers, "must be given",
                           kMaxShiftS64);
}

// Only the DSP variant copies the row (prepare_row); scalar and MVE read the input in place.
size_t quantized_linear_s16_scratch_size(const LinearS16Params& p, Isa isa) {
  if (isa != Isa::kDsp || p.input_features < 1) return 0;
  const size_t bytes = sizeof(int16_t) * static_cast<size_t>(p.input_features);
  return (bytes + 3) & ~size_t{3};
}

namespace {

// |int16 * int8| <= 2^22, so 256 products sum exactly in int32 (|sum| <= 2^30); longer rows add
// such blocks into 64 bits.
constexpr int32_t kInt32Taps = 256;

#if CORTEXM_BUILT_ISA == 0

// The scalar variant reads the input row in place.
const int16_t* prepare_row(const int16_t* row, int32_t, int16_t*) { return row; }

// Two weight rows per pass over x: each input load feeds two multiply-adds.
void dot2(const int16_t* __restrict x, const int8_t* __restrict w0, const int8_t* __restrict w1,
          int32_t length, int64_t* sums) {
  int64_t total0 = 0, total1 = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = length - start < kInt32Taps ? length : start + kInt32Taps;
    int32_t s0 = 0, s1 = 0;
    for (int32_t k = start; k < end; ++k) {
      const int32_t xk = x[k];
      s0 += xk * w0[k];
      s1 += xk * w1[k];
    }
    total0 += s0;
    total1 += s1;
  }
  sums[0] = total0;
  sums[1] = total1;
}

int64_t dot1(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  int64_t total = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = length - start < kInt32Taps ? length : start + kInt32Taps;
    int32_t s = 0;
    for (int32_t k = start; k < end; ++k) s += x[k] * w[k];
    total += s;
  }
  return total;
}

#elif CORTEXM_BUILT_ISA == 2

// MVE: the input row read in place, 8 taps per step: VLDRH of x, VLDRB.S16 widening each weight
// row, VMLADAVA into int32 block sums; the last partial step predicated (its off lanes load 0).
const int16_t* prepare_row(const int16_t* row, int32_t, int16_t*) { return row; }

void dot2(const int16_t* __restrict x, const int8_t* __restrict w0, const int8_t* __restrict w1,
          int32_t length, int64_t* sums) {
  int64_t total0 = 0, total1 = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = length - start < kInt32Taps ? length : start + kInt32Taps;
    int32_t s0 = 0, s1 = 0, k = start;
    for (; k + 8 <= end; k += 8) {
      const int16x8_t xv = vldrhq_s16(x + k);
      s0 = vmladavaq_s16(s0, xv, vldrbq_s16(w0 + k));
      s1 = vmladavaq_s16(s1, xv, vldrbq_s16(w1 + k));
    }
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      const int16x8_t xv = vldrhq_z_s16(x + k, lanes);
      s0 = vmladavaq_s16(s0, xv, vldrbq_z_s16(w0 + k, lanes));
      s1 = vmladavaq_s16(s1, xv, vldrbq_z_s16(w1 + k, lanes));
    }
    total0 += s0;
    total1 += s1;
  }
  sums[0] = total0;
  sums[1] = total1;
}

int64_t dot1(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  int64_t total = 0;
  for (int32_t start = 0; start < length; start += kInt32Taps) {
    const int32_t end = length - start < kInt32Taps ? length : start + kInt32Taps;
    int32_t s = 0, k = start;
    for (; k + 8 <= end; k += 8) s = vmladavaq_s16(s, vldrhq_s16(x + k), vldrbq_s16(w + k));
    if (k < end) {
      const mve_pred16_t lanes = vctp16q(static_cast<uint32_t>(end - k));
      s = vmladavaq_s16(s, vldrhq_z_s16(x + k, lanes), vldrbq_z_s16(w + k, lanes));
    }
    total += s;
  }
  return total;
}

#else

// DSP: the row is copied to scratch with each full quad x0 x1 x2 x3 stored x0 x2 x1 x3, so one
// SMLAD pairs SXTB16 of 4 weight bytes (w0, w2) with (x0, x2) and another the ROR #8 form
// (w1, w3) with (x1, x3): the weights are widened in registers, as CMSIS-NN's read_and_pad does
// with two more PKH instructions. The tail stays in order.
const int16_t* prepare_row(const int16_t* row, int32_t length, int16_t* scratch) {
  int32_t i = 0;
  for (; i + 4 <= length; i += 4) {
    scratch[i] = row[i];
    scratch[i + 1] = row[i + 2];
    scratch[i + 2] = row[i + 1];
    scratch[i + 3] = row[i + 3];
  }
  for (; i < length; ++i) scratch[i] = row[i];
  return scratch;
}

// Four weight rows per pass over x (the DSP variant's main loop): each pair of input words
// feeds eight SMLADs.
void dot4(const int16_t* __restrict x, const int8_t* __restrict w0, const int8_t* __restrict w1,
          const int8_t* __restrict w2, const int8_t* __restrict w3, int32_t length,
          int64_t* sums) {
  const int32_t quads_end = length & ~3;
  int64_t total[4] = {0, 0, 0, 0};
  int32_t i = 0;
  while (i < quads_end) {
    const int32_t block_end = quads_end - i < kInt32Taps ? quads_end : i + kInt32Taps;
    int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (; i < block_end; i += 4) {
      const uint32_t x02 = dsp::load_u32(x + i), x13 = dsp::load_u32(x + i + 2);
      const uint32_t a = dsp::load_u32(w0 + i), b = dsp::load_u32(w1 + i);
      s0 = dsp::smlad(dsp::sxtb16(a), x02, s0);
      s0 = dsp::smlad(dsp::sxtb16_ror8(a), x13, s0);
      s1 = dsp::smlad(dsp::sxtb16(b), x02, s1);
      s1 = dsp::smlad(dsp::sxtb16_ror8(b), x13, s1);
      const uint32_t c = dsp::load_u32(w2 + i), d = dsp::load_u32(w3 + i);
      s2 = dsp::smlad(dsp::sxtb16(c), x02, s2);
      s2 = dsp::smlad(dsp::sxtb16_ror8(c), x13, s2);
      s3 = dsp::smlad(dsp::sxtb16(d), x02, s3);
      s3 = dsp::smlad(dsp::sxtb16_ror8(d), x13, s3);
    }
    total[0] += s0;
    total[1] += s1;
    total[2] += s2;
    total[3] += s3;
  }
  int32_t tail[4] = {0, 0, 0, 0};
  for (; i < length; ++i) {
    const int32_t xi = x[i];
    tail[0] += xi * w0[i];
    tail[1] += xi * w1[i];
    tail[2] += xi * w2[i];
    tail[3] += xi * w3[i];
  }
  for (int j = 0; j < 4; ++j) sums[j] = total[j] + tail[j];
}

void dot2(const int16_t* __restrict x, const int8_t* __restrict w0, const int8_t* __restrict w1,
          int32_t length, int64_t* sums) {
  const int32_t quads_end = length & ~3;
  int64_t total0 = 0, total1 = 0;
  int32_t i = 0;
  while (i < quads_end) {
    const int32_t block_end = quads_end - i < kInt32Taps ? quads_end : i + kInt32Taps;
    int32_t s0 = 0, s1 = 0;
    for (; i < block_end; i += 4) {
      const uint32_t x02 = dsp::load_u32(x + i), x13 = dsp::load_u32(x + i + 2);
      const uint32_t a = dsp::load_u32(w0 + i), b = dsp::load_u32(w1 + i);
      s0 = dsp::smlad(dsp::sxtb16(a), x02, s0);
      s0 = dsp::smlad(dsp::sxtb16_ror8(a), x13, s0);
      s1 = dsp::smlad(dsp::sxtb16(b), x02, s1);
      s1 = dsp::smlad(dsp::sxtb16_ror8(b), x13, s1);
    }
    total0 += s0;
    total1 += s1;
  }
  int32_t tail0 = 0, tail1 = 0;
  for (; i < length; ++i) {
    tail0 += x[i] * w0[i];
    tail1 += x[i] * w1[i];
  }
  sums[0] = total0 + tail0;
  sums[1] = total1 + tail1;
}

int64_t dot1(const int16_t* __restrict x, const int8_t* __restrict w, int32_t length) {
  const int32_t quads_end = length & ~3;
  int64_t total = 0;
  int32_t i = 0;
  while (i < quads_end) {
    const int32_t block_end = quads_end - i < kInt32Taps ? quads_end : i + kInt32Taps;
    int32_t s = 0;
    for (; i < block_end; i += 4) {
      const uint32_t a = dsp::load_u32(w + i);
      s = dsp::smlad(dsp::sxtb16(a), dsp::load_u32(x + i), s);
      s = dsp::smlad(dsp::sxtb16_ror8(a), dsp::load_u32(x + i + 2), s);
    }
    total += s;
  }
  int32_t tail = 0;
  for (; i < length; ++i) tail += x[i] * w[i];
  return total + tail;
}

#endif

inline int16_t finish(const LinearS16Params& p, int64_t sum, const int64_t* bias, int32_t oc) {
  const int64_t acc = static_cast<int64_t>(static_cast<uint64_t>(sum) +
                                           static_cast<uint64_t>(bias ? bias[oc] : 0));
  const int32_t m = p.num_multipliers == 1 ? 0 : oc;
  const int32_t value = requantize_s64(acc, reduce_multiplier(p.multipliers[m]), p.shifts[m]);
  return static_cast<int16_t>(clamp(value, p.activation_min, p.activation_max));
}

}  // namespace

void quantized_linear_s16(const LinearS16Params& p, const int16_t* input, const int8_t* weights,
                          const int64_t* bias, int16_t* output, void* scratch) {
  const int32_t depth = p.input_features, channels = p.output_features;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int16_t* x =
        prepare_row(input + int64_t{b} * depth, depth, static_cast<int16_t*>(scratch));
    int16_t* out = output + int64_t{b} * channels;
    int32_t oc = 0;
#if CORTEXM_BUILT_ISA == 1
    for (; oc + 4 <= channels; oc += 4) {
      const int8_t* w0 = weights + int64_t{oc} * depth;
      int64_t sums[4];
      dot4(x, w0, w0 + depth, w0 + 2 * int64_t{depth}, w0 + 3 * int64_t{depth}, depth, sums);
      for (int32_t j = 0; j < 4; ++j) out[oc + j] = finish(p, sums[j], bias, oc + j);
    }
#endif
    for (; oc + 2 <= channels; oc += 2) {
      const int8_t* w0 = weights + int64_t{oc} * depth;
      int64_t sums[2];
      dot2(x, w0, w0 + depth, depth, sums);
      out[oc] = finish(p, sums[0], bias, oc);
      out[oc + 1] = finish(p, sums[1], bias, oc + 1);
    }
    if (oc < channels) out[oc] = finish(p, dot1(x, weights + int64_t{oc} * depth, depth), bias, oc);
  }
}

}  // namespace cortexm
