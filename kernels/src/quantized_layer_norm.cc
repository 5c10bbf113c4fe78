#include "cortexm/kernels/quantized_layer_norm.h"

namespace cortexm {

namespace {

// floor(sqrt(m)) for m < 2^62, one result bit at a time.
uint32_t floor_sqrt(uint64_t m) {
  uint64_t root = 0;
  for (int32_t bit = 30; bit >= 0; --bit) {
    const uint64_t candidate = root | (uint64_t{1} << bit);
    if (candidate * candidate <= m) root = candidate;
  }
  return static_cast<uint32_t>(root);
}

// 1 / sqrt(w) = inv * 2^(k - 61) for w in [1, 2^62).
void inverse_sqrt(int64_t w, int64_t* inv, int32_t* k) {
  uint64_t m = static_cast<uint64_t>(w);
  int32_t e = 0;
  while (m < (uint64_t{1} << 60)) {
    m <<= 2;
    ++e;
  }
  const uint64_t r = floor_sqrt(m);
  *inv = static_cast<int64_t>(((uint64_t{1} << 62) / r + 1) >> 1);  // round(2^61 / r)
  *k = e;
}

}  // namespace

LayerNormScale layer_norm_scale(int32_t n, int32_t sum, int32_t sum_sq, int64_t eps_term) {
  int64_t w = int64_t{n} * sum_sq - int64_t{sum} * sum + eps_term;
  if (w == 0) w = 1;  // a constant set without eps: every d_j is 0
  LayerNormScale s;
  s.n = n;
  s.sum = sum;
  int32_t k = 0;
  inverse_sqrt(w, &s.inv, &k);
  s.z_shift = 61 - kLayerNormFractionBits - k;
  return s;
}

CORTEXM_PREPARE_STEP Error quantized_layer_norm_prepare(const LayerNormParams& p) {
  if (p.rows < 1) return invalid("rows", p.rows, "must be >= 1");
  if (p.row_size < 1 || p.row_size > kLayerNormMaxRowSize)
    return invalid("row_size", p.row_size, "must be in [1, 65536]");
  if (p.eps_term < 0 || p.eps_term > kLayerNormMaxEpsTerm)
    return invalid("eps_term", p.eps_term, "must be in [0, 2^60]");
  if (p.product_shift < 0 || p.product_shift > 31)
    return invalid("product_shift", p.product_shift, "must be in [0, 31]");
  CORTEXM_RETURN_IF_ERROR(check_output_offset("output_offset", p.output_offset));
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", p.multiplier, "output_shift", p.shift));
  CORTEXM_RETURN_IF_ERROR(check_activation_range(p.activation_min, p.activation_max));
  return kOk;
}

void quantized_layer_norm(const LayerNormParams& params, const int8_t* input, const int16_t* weight,
                          const int32_t* bias, int8_t* output) {
  const LayerNormParams p = params;  // a local copy: output stores cannot alias it
  const int32_t n = p.row_size;
  for (int32_t r = 0; r < p.rows; ++r) {
    const int8_t* in = input + int64_t{r} * n;
    int8_t* out = output + int64_t{r} * n;
    int32_t sum = 0, sum_sq = 0;
    for (int32_t j = 0; j < n; ++j) {
      sum += in[j];
      sum_sq += in[j] * in[j];
    }
    const LayerNormScale s = layer_norm_scale(n, sum, sum_sq, p.eps_term);
    for (int32_t j = 0; j < n; ++j)
      out[j] = layer_norm_output(p, s, in[j], weight ? weight[j] : 1, bias ? bias[j] : 0);
  }
}

}  // namespace cortexm
