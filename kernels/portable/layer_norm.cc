#include "cortexm/portable/layer_norm.h"

#include <math.h>

namespace cortexm::portable {

Error layer_norm_prepare(const LayerNormParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "input"));
  if (p.normalized_rank < 1 || p.normalized_rank > p.input.rank)
    return invalid("normalized_shape.length", p.normalized_rank, "must be in [1, input rank]");
  if (!(p.eps >= 0.0f) || isinf(p.eps)) return invalid("eps", 0, "must be finite and >= 0");
  return kOk;
}

void layer_norm_f32(const LayerNormParams& p, const float* x, const float* weight,
                    const float* bias, float* y) {
  const int64_t row_size = dims_product(p.input, p.input.rank - p.normalized_rank, p.input.rank);
  if (row_size == 0) return;
  const int64_t rows = p.input.numel() / row_size;
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * row_size;
    float* out = y + r * row_size;
    double sum = 0.0;
    for (int64_t i = 0; i < row_size; ++i) sum += in[i];
    const double mean = sum / static_cast<double>(row_size);
    double squares = 0.0;
    for (int64_t i = 0; i < row_size; ++i) {
      const double d = in[i] - mean;
      squares += d * d;
    }
    const double rstd = 1.0 / sqrt(squares / static_cast<double>(row_size) + static_cast<double>(p.eps));
    for (int64_t i = 0; i < row_size; ++i) {
      double v = (in[i] - mean) * rstd;
      if (weight) v *= weight[i];
      if (bias) v += bias[i];
      out[i] = static_cast<float>(v);
    }
  }
}

}  // namespace cortexm::portable
