#include "cortexm/kernels/quantized_softmax_s16.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

// TFLite's generic_int16_table_lookup for a value in int16.
int64_t lookup(const int16_t* table, int64_t x) {
  const int64_t index = 256 + (x >> 7);  // arithmetic shift: floor
  const int64_t offset = x - (x >> 7) * 128;
  const int64_t base = table[index];
  return base + (((table[index + 1] - base) * offset + 64) >> 7);
}

int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace

// Plain loops in int64 after TFLite's reference SoftmaxInt16; each exp is computed twice (for the
// sum, then for the output), so output must not be input.
void quantized_softmax_s16_reference(const SoftmaxS16Params& p, const int16_t* input,
                                     int16_t* output) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const int16_t* x = input + r * p.row_size;
    int16_t* y = output + r * p.row_size;
    int64_t max = -32768;
    for (int32_t c = 0; c < p.row_size; ++c) max = x[c] > max ? x[c] : max;
    int64_t sum = 0;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int64_t scaled = requantize(static_cast<int32_t>(x[c] - max), p.input_multiplier, p.input_shift);
      sum += lookup(p.exp_table, clamp64(scaled + 32767, -32768, 32767));
    }
    int64_t headroom_plus_one = 0;  // leading zeros of sum as a uint32
    while (headroom_plus_one < 32 && ((sum >> (31 - headroom_plus_one)) & 1) == 0) ++headroom_plus_one;
    const int64_t shifted_sum = ((sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14;
    const int64_t reciprocal =
        lookup(p.reciprocal_table, clamp64(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767));
    const int64_t right_shift = 31 - headroom_plus_one;
    for (int32_t c = 0; c < p.row_size; ++c) {
      const int64_t scaled = requantize(static_cast<int32_t>(x[c] - max), p.input_multiplier, p.input_shift);
      const int64_t e = lookup(p.exp_table, clamp64(scaled + 32767, -32768, 32767));
      const int64_t round = right_shift > 0 ? int64_t{1} << (right_shift - 1) : 0;
      y[c] = static_cast<int16_t>(clamp64((e * reciprocal + round) >> right_shift, 0, 32767));
    }
  }
}

}  // namespace cortexm
