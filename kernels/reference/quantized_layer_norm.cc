#include "cortexm/kernels/quantized_layer_norm.h"

namespace cortexm {

namespace {

// floor(sqrt(m)) by bisection over [2^30, 2^31) (m in [2^60, 2^62)).
int64_t reference_floor_sqrt(uint64_t m) {
  uint64_t lo = uint64_t{1} << 30, hi = uint64_t{1} << 31;  // lo^2 <= m < hi^2
  while (hi - lo > 1) {
    const uint64_t mid = (lo + hi) / 2;
    if (mid * mid <= m) lo = mid; else hi = mid;
  }
  return static_cast<int64_t>(lo);
}

}  // namespace

void quantized_layer_norm_reference(const LayerNormParams& p, const int8_t* input,
                                    const int16_t* weight, const int32_t* bias, int8_t* output) {
  const int64_t n = p.row_size;
  for (int64_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + r * n;
    int64_t sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += in[j];
    // V = sum_j d_j^2 / n (an exact division: sum_j d_j^2 = n * (n * sum q^2 - S^2)).
    int64_t centered_squares = 0;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t d = n * in[j] - sum;
      centered_squares += d * d;
    }
    int64_t w = centered_squares / n + p.eps_term;
    if (w == 0) w = 1;
    // w * 4^k in [2^60, 2^62).
    int32_t k = 0;
    while ((static_cast<uint64_t>(w) << (2 * k)) < (uint64_t{1} << 60)) ++k;
    const int64_t root = reference_floor_sqrt(static_cast<uint64_t>(w) << (2 * k));
    const int64_t inv = ((int64_t{1} << 61) + root / 2) / root;  // round(2^61 / root), halves up
    const int32_t z_shift = 61 - kLayerNormFractionBits - k;
    for (int64_t j = 0; j < n; ++j) {
      const int64_t d = n * in[j] - sum;
      const int64_t z = (d * inv + (int64_t{1} << (z_shift - 1))) >> z_shift;
      int64_t product = z * (weight ? weight[j] : 1);
      if (p.product_shift > 0)
        product = (product + (int64_t{1} << (p.product_shift - 1))) >> p.product_shift;
      const int32_t acc = wrapping_add(static_cast<int32_t>(product), bias ? bias[j] : 0);
      int32_t v = wrapping_add(requantize(acc, p.multiplier, p.shift), p.output_offset);
      v = v < p.activation_min ? p.activation_min : (v > p.activation_max ? p.activation_max : v);
      output[r * n + j] = static_cast<int8_t>(v);
    }
  }
}

}  // namespace cortexm
