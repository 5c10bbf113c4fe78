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
      for (int32_t c = c0; c < c0 + cg; ++c)
        for (int32_t i = 0; i < s.spatial; ++i) {
          const int32_t q = input[s.offset(n, c, i)];
          sum += q;
          sum_sq += q * q;
        }
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

}  // namespace cortexm
