// cortex_m.quantized_layer_norm: int8 layer norm over contiguous rows, integer statistics in the
// manner of TFLite's integer layer norm (the integer LSTM's ApplyLayerNorm: int64 sums of x and
// x^2, an inverse square root as a multiplier and exponent, weight and bias in the accumulator,
// one requantize), but exact for every row length. Per row of n values q (zero points cancel):
//   S = sum q,  d_j = n * q_j - S = n * (q_j - mean),  V = n * sum q^2 - S^2 = n^2 * var
//   W = V + eps_term (1 if that is 0), eps_term = round(n^2 * eps / s_in^2) (the eps in V's units)
//   z_j = d_j / sqrt(W) in Q.12 (kLayerNormFractionBits): d_j * inv * 2^(k + 12 - 61) rounded
//         half up, where W * 4^k in [2^60, 2^62), r = floor(sqrt(W * 4^k)), inv = round(2^61 / r)
//   t_j = (z_j * weight_j) rounded half up >> product_shift (weight 1 when absent), as int32
//   out_j = clamp(requantize(t_j + bias_j, multiplier, shift) + output_offset)
// so the real output is z_j * s_w * weight_j * 2^(product_shift - 12) + bias_j * (that unit): the
// lowering picks multiplier = s_w * 2^(product_shift - 12) / s_out and the bias at that unit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/requantize.h"

namespace cortexm {

constexpr int32_t kLayerNormMaxRowSize = 1 << 16;  // sum q^2 stays within int32
constexpr int32_t kLayerNormFractionBits = 12;     // z in Q.12
constexpr int64_t kLayerNormMaxEpsTerm = int64_t{1} << 60;

struct LayerNormParams {
  int32_t rows = 1;
  int32_t row_size = 1;      // in [1, kLayerNormMaxRowSize]
  int64_t eps_term = 0;      // in [0, kLayerNormMaxEpsTerm]
  int32_t product_shift = 0;  // in [0, 31]
  int32_t output_offset = 0;  // +output zero point
  int32_t multiplier = 0;
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

// Validates everything the kernel relies on (the runtime calls it when a program is loaded).
Error quantized_layer_norm_prepare(const LayerNormParams& params);

// input, output: rows * row_size int8, rows contiguous; weight: row_size int16 or nullptr (1);
// bias: row_size int32 or nullptr (0).
void quantized_layer_norm(const LayerNormParams& params, const int8_t* input, const int16_t* weight,
                          const int32_t* bias, int8_t* output);

void quantized_layer_norm_reference(const LayerNormParams& params, const int8_t* input,
                                    const int16_t* weight, const int32_t* bias, int8_t* output);

// The kernel's two steps, for kernels that normalize other sets of values the same way (group
// norm: per group of channels, one weight and bias per channel). A set of n values q with
// S = sum q, sum_sq = sum q^2 (n <= kLayerNormMaxRowSize keeps both within int32): z_j = d_j * inv
// rounded half up >> z_shift.
struct LayerNormScale {
  int32_t n = 1;
  int32_t sum = 0;
  int64_t inv = 0;
  int32_t z_shift = 0;
};
LayerNormScale layer_norm_scale(int32_t n, int32_t sum, int32_t sum_sq, int64_t eps_term);

// out for one value q of the set, with its weight (1 when absent) and bias (0 when absent).
inline int8_t layer_norm_output(const LayerNormParams& p, const LayerNormScale& s, int32_t q,
                                int32_t weight, int32_t bias) {
  const int32_t d = s.n * q - s.sum;
  const int64_t z = (d * s.inv + (int64_t{1} << (s.z_shift - 1))) >> s.z_shift;
  const int64_t product = z * weight;
  const int64_t rounded = p.product_shift == 0
                              ? product
                              : (product + (int64_t{1} << (p.product_shift - 1))) >> p.product_shift;
  const int32_t acc = wrapping_add(static_cast<int32_t>(rounded), bias);
  const int32_t v = wrapping_add(requantize(acc, p.multiplier, p.shift), p.output_offset);
  return static_cast<int8_t>(clamp(v, p.activation_min, p.activation_max));
}

}  // namespace cortexm
