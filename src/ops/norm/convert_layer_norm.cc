// ConvertToCortexM, aten.layer_norm.default -> cortex_m.quantized_layer_norm (integer mean and
// variance per row, quantized_layer_norm.h) for a per-tensor int8 input and output. The float
// weight becomes an int16 constant quantized symmetric per tensor (scale max|w| / 32767), the float
// bias an int32 constant at the accumulator's unit s_w * 2^(product_shift - 12), and eps the
// eps_term round(n^2 * eps / s_in^2); product_shift is the smallest that keeps z * w + bias within
// int32. The input zero point cancels in x - mean. A non-contiguous input is made contiguous first.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cortexm/kernels/quantized_layer_norm.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// The float32 data of an optional constant input with `n` elements (empty when absent).
std::vector<double> float_constant(const Graph& graph, ValueId v, int64_t n, const std::string& what) {
  if (v == kNoValue) return {};
  const Value& value = graph.value(v);
  if (value.kind != ValueKind::kConstant || value.info.dtype != DType::kFloat32 || value.info.qparams)
    not_lowered(what + " '" + value.name + "' is not a float32 constant");
  if (value.info.numel() != n) not_lowered(what + " '" + value.name + "' does not have one value per row element");
  const float* data = value.data.data<float>();
  std::vector<double> out(data, data + n);
  for (double x : out)
    if (!std::isfinite(x)) not_lowered(what + " '" + value.name + "' has a value that is not finite");
  return out;
}

Tensor constant_tensor(DType dtype, int64_t n, double scale) {
  TensorInfo info;
  info.dtype = dtype;
  info.shape = {n};
  QuantParams q;
  q.scales = {scale};
  q.zero_points = {0};
  q.quant_min = dtype == DType::kInt16 ? -32767 : std::numeric_limits<int32_t>::min();
  q.quant_max = dtype == DType::kInt16 ? 32767 : std::numeric_limits<int32_t>::max();
  info.qparams = q;
  return Tensor(info);
}

std::vector<int64_t> identity(int64_t rank) {
  std::vector<int64_t> order(static_cast<size_t>(rank));
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int64_t>(k);
  return order;
}

void convert_layer_norm(Graph& graph, NodeId id, const TargetConfig& /*target*/) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const std::vector<int64_t>& normalized = args.ints("normalized_shape");
  int64_t n = 1;
  for (int64_t e : normalized) n *= e;
  if (n < 1 || n > kLayerNormMaxRowSize)
    not_lowered("a row of " + std::to_string(n) + " elements (the kernel takes 1 to 65536)");
  const std::vector<double> w = float_constant(graph, node.inputs.size() > 1 ? node.inputs[1] : kNoValue, n, "weight");
  const std::vector<double> b = float_constant(graph, node.inputs.size() > 2 ? node.inputs[2] : kNoValue, n, "bias");

  // Weight: int16 symmetric per tensor (absent: 1 at scale 1).
  double w_max = 0.0;
  for (double v : w) w_max = std::max(w_max, std::fabs(v));
  const double s_w = w.empty() || w_max == 0.0 ? 1.0 : w_max / 32767.0;
  std::vector<int64_t> wq(w.size());
  for (size_t j = 0; j < w.size(); ++j)
    wq[j] = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(w[j] / s_w)), -32767, 32767);
  const double wq_max = w.empty() ? 1.0 : std::ldexp(1.0, 15);

  // The smallest product_shift whose accumulator, |z| * |w| + |bias|, stays within int32.
  const double z_max = (std::sqrt(static_cast<double>(n)) + 1.0) * std::ldexp(1.0, kLayerNormFractionBits);
  const double limit = std::ldexp(1.0, 31) - 1.0;
  int32_t product_shift = 0;
  std::vector<int64_t> bq(b.size());
  for (;; ++product_shift) {
    if (product_shift > 31) not_lowered("its bias does not fit int32 beside the normalized values");
    const double unit = s_w * std::ldexp(1.0, product_shift - kLayerNormFractionBits);
    double b_max = 0.0;
    for (size_t j = 0; j < b.size(); ++j) {
      const double v = std::nearbyint(b[j] / unit);
      b_max = std::max(b_max, std::fabs(v));
      bq[j] = std::fabs(v) <= limit ? static_cast<int64_t>(v) : 0;
    }
    if (std::ldexp(z_max * wq_max, -product_shift) + 1.0 + b_max <= limit) break;
  }
  const double unit = s_w * std::ldexp(1.0, product_shift - kLayerNormFractionBits);
  std::vector<int64_t> multiplier, shift;
  requantize_attrs({unit / q_out.scales[0]}, &multiplier, &shift);

  const double s_in = q_in.scales[0];
  const double eps_term = std::nearbyint(static_cast<double>(n) * static_cast<double>(n) * args.f("eps") / (s_in * s_in));
  const int64_t eps_int = eps_term >= static_cast<double>(kLayerNormMaxEpsTerm) || std::isnan(eps_term)
                              ? kLayerNormMaxEpsTerm : static_cast<int64_t>(eps_term);

  ValueId rows = x;
  if (!in.contiguous()) rows = rw.clone_dim_order(x, identity(in.rank()));
  ValueId weight = kNoValue, bias = kNoValue;
  if (!w.empty()) {
    Tensor t = constant_tensor(DType::kInt16, n, s_w);
    std::copy(wq.begin(), wq.end(), t.data<int16_t>());
    weight = rw.constant("weight_int16", t);
  }
  if (!b.empty()) {
    Tensor t = constant_tensor(DType::kInt32, n, unit);
    std::copy(bq.begin(), bq.end(), t.data<int32_t>());
    bias = rw.constant("bias_int32", t);
  }
  ValueId y = rw.call("cortex_m.quantized_layer_norm.default", {rows, weight, bias},
                      {{"normalized_rank", static_cast<int64_t>(normalized.size())},
                       {"eps_term", eps_int},
                       {"product_shift", int64_t{product_shift}},
                       {"output_zero_point", q_out.zero_points[0]},
                       {"output_multiplier", multiplier[0]},
                       {"output_shift", shift[0]},
                       {"activation_min", q_out.quant_min},
                       {"activation_max", q_out.quant_max}},
                      true);
  rw.set_qparams(y, q_out);
  if (!out.contiguous()) y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(layer_norm) {
  static const Converter converter{{"aten.layer_norm.default"}, convert_layer_norm};
  return converter;
}

}  // namespace cortexm::convert
