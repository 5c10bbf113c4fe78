#include "cortexm/kernels/quantized_softmax_s16.h"

#include "cortexm/kernels/quantized_activation_s16.h"
#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

inline int16_t saturate_int16(int32_t v) {
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

inline int32_t count_leading_zeros(uint32_t v) {
  int32_t n = 0;
  for (uint32_t bit = 0x80000000u; bit != 0 && (v & bit) == 0; bit >>= 1) ++n;
  return n;
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_softmax_s16_prepare(const SoftmaxS16Params& p) {
  if (p.rows < 0) return invalid("rows", p.rows, "must be >= 0");
  if (p.row_size < 1 || p.row_size > kSoftmaxS16MaxRowSize)
    return invalid("row_size", p.row_size, "must be in [1, 65536]");
  if (p.input_multiplier < 0) return invalid("input_multiplier", p.input_multiplier, "must be in [0, 2^31)");
  if (p.input_shift < kMinShift || p.input_shift > 15)
    return invalid("input_shift", p.input_shift, "must be in [-31, 15]");
  if (p.exp_table == nullptr) return invalid("exp_table", 0, "must be given (513 int16 entries)");
  if (p.reciprocal_table == nullptr)
    return invalid("reciprocal_table", 0, "must be given (513 int16 entries)");
  for (int32_t i = 0; i < kSoftmaxS16TableSize; ++i)
    if (p.exp_table[i] < 0) return invalid("exp_table", p.exp_table[i], "must be in [0, 32767]", i);
  for (int32_t i = kSoftmaxS16TableSize - 2; i < kSoftmaxS16TableSize; ++i)
    if (p.exp_table[i] < 1) return invalid("exp_table", p.exp_table[i], "must be >= 1 (exp(0))", i);
  return kOk;
}

// Row by row: the exps are cached in the output row, then scaled by the row's reciprocal.
void quantized_softmax_s16(const SoftmaxS16Params& p, const int16_t* input, int16_t* output) {
  const int16_t* exp_table = p.exp_table;
  for (int32_t r = 0; r < p.rows; ++r) {
    const int16_t* x = input + int64_t{r} * p.row_size;
    int16_t* y = output + int64_t{r} * p.row_size;
    int32_t max = x[0];
    for (int32_t c = 1; c < p.row_size; ++c) max = x[c] > max ? x[c] : max;
    int32_t sum = 0;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int32_t scaled = requantize(x[c] - max, p.input_multiplier, p.input_shift);
      const int16_t e = activation_s16_lookup(exp_table, saturate_int16(scaled + 32767));
      y[c] = e;
      sum += e;
    }
    // sum >= 1 (prepare's exp table), so 1 <= headroom <= 31.
    const int32_t headroom = count_leading_zeros(static_cast<uint32_t>(sum));
    const int32_t shifted_sum =
        static_cast<int32_t>(((int64_t{sum} << (headroom - 1)) + (1 << 13)) >> 14);
    const int32_t reciprocal =
        activation_s16_lookup(p.reciprocal_table, saturate_int16(shifted_sum - 98304));
    const int32_t right_shift = 31 - headroom;
    const int64_t round = right_shift > 0 ? int64_t{1} << (right_shift - 1) : 0;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int64_t v = (int64_t{y[c]} * reciprocal + round) >> right_shift;
      y[c] = static_cast<int16_t>(v < 0 ? 0 : (v > 32767 ? 32767 : v));
    }
  }
}

}  // namespace cortexm
