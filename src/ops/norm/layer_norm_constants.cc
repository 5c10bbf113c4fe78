#include "ops/norm/layer_norm_constants.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cortexm/kernels/quantized_layer_norm.h"

namespace cortexm::convert {

std::vector<double> float_constant(const Graph& graph, ValueId v, int64_t n, const std::string& what,
                                   const std::string& per) {
  if (v == kNoValue) return {};
  const Value& value = graph.value(v);
  if (value.kind != ValueKind::kConstant || value.info.dtype != DType::kFloat32 || value.info.qparams)
    not_lowered(what + " '" + value.name + "' is not a float32 constant");
  if (value.info.numel() != n) not_lowered(what + " '" + value.name + "' does not have one value per " + per);
  const float* data = value.data.data<float>();
  std::vector<double> out(data, data + n);
  for (double x : out)
    if (!std::isfinite(x)) not_lowered(what + " '" + value.name + "' has a value that is not finite");
  return out;
}

LayerNormConstants layer_norm_constants(int64_t n, const std::vector<double>& w, const std::vector<double>& b,
                                        double eps, double input_scale, double output_scale) {
  LayerNormConstants c;
  // Weight: int16 symmetric per tensor (absent: 1 at scale 1).
  double w_max = 0.0;
  for (double v : w) w_max = std::max(w_max, std::fabs(v));
  const double s_w = w.empty() || w_max == 0.0 ? 1.0 : w_max / 32767.0;
  c.weight_scale = s_w;
  c.weight.resize(w.size());
  for (size_t j = 0; j < w.size(); ++j)
    c.weight[j] = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(w[j] / s_w)), -32767, 32767);
  const double wq_max = w.empty() ? 1.0 : std::ldexp(1.0, 15);

  // The smallest product_shift whose accumulator, |z| * |w| + |bias|, stays within int32.
  const double z_max = (std::sqrt(static_cast<double>(n)) + 1.0) * std::ldexp(1.0, kLayerNormFractionBits);
  const double limit = std::ldexp(1.0, 31) - 1.0;
  int32_t product_shift = 0;
  c.bias.resize(b.size());
  for (;; ++product_shift) {
    if (product_shift > 31) not_lowered("its bias does not fit int32 beside the normalized values");
    const double unit = s_w * std::ldexp(1.0, product_shift - kLayerNormFractionBits);
    double b_max = 0.0;
    for (size_t j = 0; j < b.size(); ++j) {
      const double v = std::nearbyint(b[j] / unit);
      b_max = std::max(b_max, std::fabs(v));
      c.bias[j] = std::fabs(v) <= limit ? static_cast<int64_t>(v) : 0;
    }
    if (std::ldexp(z_max * wq_max, -product_shift) + 1.0 + b_max <= limit) break;
  }
  c.product_shift = product_shift;
  c.unit = s_w * std::ldexp(1.0, product_shift - kLayerNormFractionBits);
  std::vector<int64_t> multiplier, shift;
  requantize_attrs({c.unit / output_scale}, &multiplier, &shift);
  c.multiplier = multiplier[0];
  c.shift = shift[0];

  const double eps_term = std::nearbyint(static_cast<double>(n) * static_cast<double>(n) * eps / (input_scale * input_scale));
  c.eps_term = eps_term >= static_cast<double>(kLayerNormMaxEpsTerm) || std::isnan(eps_term)
                   ? kLayerNormMaxEpsTerm : static_cast<int64_t>(eps_term);
  return c;
}

Tensor layer_norm_constant_tensor(DType dtype, const std::vector<int64_t>& values, double scale) {
  TensorInfo info;
  info.dtype = dtype;
  info.shape = {static_cast<int64_t>(values.size())};
  QuantParams q;
  q.scales = {scale};
  q.zero_points = {0};
  q.quant_min = dtype == DType::kInt16 ? -32767 : std::numeric_limits<int32_t>::min();
  q.quant_max = dtype == DType::kInt16 ? 32767 : std::numeric_limits<int32_t>::max();
  info.qparams = q;
  Tensor t(info);
  if (dtype == DType::kInt16) std::copy(values.begin(), values.end(), t.data<int16_t>());
  else std::copy(values.begin(), values.end(), t.data<int32_t>());
  return t;
}

}  // namespace cortexm::convert
