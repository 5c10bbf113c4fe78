#include "ops/group_norm/runtime/group_norm_kernels.h"

#include <math.h>

namespace cortexm {

CORTEXM_PREPARE_STEP Error group_norm_shape_prepare(const GroupNormShape& s) {
  if (s.batches < 1) return invalid("batches", s.batches, "must be >= 1");
  if (s.channels < 1) return invalid("channels", s.channels, "must be >= 1");
  if (s.spatial < 1) return invalid("spatial", s.spatial, "must be >= 1");
  if (s.groups < 1 || s.groups > s.channels || s.channels % s.groups != 0)
    return invalid("num_groups", s.groups, "must divide the channel count");
  if (int64_t{s.group_channels()} * s.spatial > kGroupNormMaxGroupSize)
    return invalid("group_size", int64_t{s.group_channels()} * s.spatial,
                   "(channels / num_groups * spatial) must be at most 65536");
  return kOk;
}

CORTEXM_PREPARE_STEP Error group_norm_f32_prepare(const GroupNormShape& shape, float eps) {
  if (shape.batches < 1 || shape.channels < 1 || shape.spatial < 1)
    return invalid("shape", 0, "must not be empty");
  if (shape.groups < 1 || shape.groups > shape.channels || shape.channels % shape.groups != 0)
    return invalid("num_groups", shape.groups, "must divide the channel count");
  if (!(eps >= 0.0f) || isinf(eps)) return invalid("eps", 0, "must be finite and >= 0");
  return kOk;
}

void group_norm_f32(const GroupNormShape& s, float eps, const float* x, const float* weight,
                    const float* bias, float* y) {
  const int32_t cg = s.group_channels();
  const double count = static_cast<double>(cg) * s.spatial;
  for (int32_t n = 0; n < s.batches; ++n) {
    for (int32_t g = 0; g < s.groups; ++g) {
      const int32_t c0 = g * cg;
      double sum = 0.0;
      for (int32_t c = c0; c < c0 + cg; ++c)
        for (int32_t i = 0; i < s.spatial; ++i) sum += x[s.offset(n, c, i)];
      const double mean = sum / count;
      double squares = 0.0;
      for (int32_t c = c0; c < c0 + cg; ++c)
        for (int32_t i = 0; i < s.spatial; ++i) {
          const double d = x[s.offset(n, c, i)] - mean;
          squares += d * d;
        }
      const double rstd = 1.0 / sqrt(squares / count + static_cast<double>(eps));
      for (int32_t c = c0; c < c0 + cg; ++c) {
        const double scale = weight ? rstd * weight[c] : rstd;
        const double shift = (bias ? bias[c] : 0.0) - scale * mean;
        for (int32_t i = 0; i < s.spatial; ++i) {
          const int64_t at = s.offset(n, c, i);
          y[at] = static_cast<float>(x[at] * scale + shift);
        }
      }
    }
  }
}

CORTEXM_PREPARE_STEP Error quantized_group_norm_prepare(const QuantizedGroupNormParams& p) {
  CORTEXM_RETURN_IF_ERROR(group_norm_shape_prepare(p.shape));
  LayerNormParams norm = p.norm;
  norm.rows = 1;
  norm.row_size = p.shape.group_channels() * p.shape.spatial;
  return quantized_layer_norm_prepare(norm);
}

namespace {

// The sum and the sum of squares of the values of batch n's group starting at channel c0, in Acc
// (int32 for int8 values, int64 for int16).
template <class T, class Acc>
void group_sums(const GroupNormShape& s, const T* input, int32_t n, int32_t c0, Acc* sum, Acc* sum_sq) {
  Acc total = 0, squares = 0;
  for (int32_t c = c0; c < c0 + s.group_channels(); ++c)
    for (int32_t i = 0; i < s.spatial; ++i) {
      const int32_t q = input[s.offset(n, c, i)];
      total += q;
      squares += q * q;
    }
  *sum = total;
  *sum_sq = squares;
}

}  // namespace

void quantized_group_norm(const QuantizedGroupNormParams& params, const int8_t* input, const int16_t* weight,
                          const int32_t* bias, int8_t* output) {
  const QuantizedGroupNormParams p = params;  // a local copy: output stores cannot alias it
  const GroupNormShape& s = p.shape;
  const int32_t cg = s.group_channels();
  const int32_t n_values = cg * s.spatial;
  for (int32_t n = 0; n < s.batches; ++n) {
    for (int32_t g = 0; g < s.groups; ++g) {
      const int32_t c0 = g * cg;
      int32_t sum = 0, sum_sq = 0;
      group_sums(s, input, n, c0, &sum, &sum_sq);
      const LayerNormScale scale = layer_norm_scale(n_values, sum, sum_sq, p.norm.eps_term);
      for (int32_t c = c0; c < c0 + cg; ++c) {
        const int32_t w = weight ? weight[c] : 1;
        const int32_t b = bias ? bias[c] : 0;
        for (int32_t i = 0; i < s.spatial; ++i) {
          const int64_t at = s.offset(n, c, i);
          output[at] = layer_norm_output(p.norm, scale, input[at], w, b);
        }
      }
    }
  }
}

namespace {

// 1 / sqrt(w) = inv * 2^(k - 61) for w in [1, 2^62): w * 4^k in [2^60, 2^62), r = floor(sqrt(w * 4^k))
// one result bit at a time, inv = round(2^61 / r) (quantized_layer_norm.h's steps, for int64 sums).
void inverse_sqrt_s16(int64_t w, int64_t* inv, int32_t* k) {
  uint64_t m = static_cast<uint64_t>(w);
  int32_t e = 0;
  while (m < (uint64_t{1} << 60)) {
    m <<= 2;
    ++e;
  }
  uint64_t root = 0;
  for (int32_t bit = 30; bit >= 0; --bit) {
    const uint64_t candidate = root | (uint64_t{1} << bit);
    if (candidate * candidate <= m) root = candidate;
  }
  *inv = static_cast<int64_t>(((uint64_t{1} << 62) / root + 1) >> 1);
  *k = e;
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_group_norm_s16_prepare(const QuantizedGroupNormParams& p) {
  CORTEXM_RETURN_IF_ERROR(group_norm_shape_prepare(p.shape));
  if (int64_t{p.shape.group_channels()} * p.shape.spatial > kGroupNormS16MaxGroupSize)
    return invalid("group_size", int64_t{p.shape.group_channels()} * p.shape.spatial,
                   "(channels / num_groups * spatial) must be at most 32768 for int16");
  const LayerNormParams& n = p.norm;
  if (n.eps_term < 0 || n.eps_term > kLayerNormMaxEpsTerm)
    return invalid("eps_term", n.eps_term, "must be in [0, 2^60]");
  if (n.product_shift < 0 || n.product_shift > 31)
    return invalid("product_shift", n.product_shift, "must be in [0, 31]");
  if (n.output_offset != 0) return invalid("output_offset", n.output_offset, "must be 0 (symmetric int16)");
  CORTEXM_RETURN_IF_ERROR(check_multiplier("output_multiplier", n.multiplier, "output_shift", n.shift));
  return check_activation_range(n.activation_min, n.activation_max, true);
}

void quantized_group_norm_s16(const QuantizedGroupNormParams& params, const int16_t* input, const int16_t* weight,
                              const int32_t* bias, int16_t* output) {
  const QuantizedGroupNormParams p = params;  // a local copy: output stores cannot alias it
  const GroupNormShape& s = p.shape;
  const LayerNormParams& norm = p.norm;
  const int32_t cg = s.group_channels();
  const int32_t n_values = cg * s.spatial;
  for (int32_t n = 0; n < s.batches; ++n) {
    for (int32_t g = 0; g < s.groups; ++g) {
      const int32_t c0 = g * cg;
      int64_t sum = 0, sum_sq = 0;
      group_sums(s, input, n, c0, &sum, &sum_sq);
      int64_t w = n_values * sum_sq - sum * sum + norm.eps_term;
      if (w == 0) w = 1;  // a constant set without eps: every d_j is 0
      int64_t inv = 0;
      int32_t k = 0;
      inverse_sqrt_s16(w, &inv, &k);
      const int32_t z_shift = 61 - kGroupNormS16FractionBits - k;
      for (int32_t c = c0; c < c0 + cg; ++c) {
        const int32_t weight_c = weight ? weight[c] : 1;
        const int32_t bias_c = bias ? bias[c] : 0;
        for (int32_t i = 0; i < s.spatial; ++i) {
          const int64_t at = s.offset(n, c, i);
          const int64_t d = int64_t{n_values} * input[at] - sum;
          const int64_t z = (d * inv + (int64_t{1} << (z_shift - 1))) >> z_shift;
          const int64_t product = z * weight_c;
          const int64_t rounded = norm.product_shift == 0
                                      ? product
                                      : (product + (int64_t{1} << (norm.product_shift - 1))) >> norm.product_shift;
          const int32_t acc = wrapping_add(static_cast<int32_t>(rounded), bias_c);
          const int32_t v = wrapping_add(requantize(acc, norm.multiplier, norm.shift), norm.output_offset);
          output[at] = static_cast<int16_t>(clamp(v, norm.activation_min, norm.activation_max));
        }
      }
    }
  }
}

}  // namespace cortexm
