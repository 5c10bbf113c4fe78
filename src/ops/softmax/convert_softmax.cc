// ConvertToCortexM, softmax: aten._softmax.default -> cortex_m.quantized_softmax (output qparams
// must be arm_softmax_s8's 1/256, -128) and aten._log_softmax.default ->
// cortex_m.quantized_log_softmax (output 16/256, 127, TFLite's). The input multiplier, shift,
// diff_min (and log_softmax's reverse scaling) come from the input scale ahead of time. The
// kernels work along the dim innermost in memory: another dim is moved there with
// _clone_dim_order before and moved back after. A symmetric int16 softmax ->
// cortex_m.quantized_softmax_s16 (output 1/32768, 0) the same way, with the multiplier of
// s_in / (10 / 65535) and TFLite's two tables as constants.
#include <algorithm>
#include <cmath>

#include "cortexm/kernels/requantize.h"
#include "cortexm/kernels/quantized_log_softmax.h"
#include "cortexm/kernels/quantized_softmax_s16.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// TFLite's gen_lut (kernels/internal/common.h, the double overload its int16 softmax uses): 513
// Q15 entries of f over [lo, hi], entry i at lo + i * step less half the error of interpolating the
// segment's midpoint, the last f(hi); each rounded half away from zero and saturated to int16.
template <class F>
Tensor q15_table(F f, double lo, double hi) {
  TensorInfo info;
  info.dtype = DType::kInt16;
  info.shape = {kSoftmaxS16TableSize};
  Tensor table(info);
  int16_t* lut = table.data<int16_t>();
  const int num = kSoftmaxS16TableSize;
  const double step = (hi - lo) / (num - 1), half_step = step / 2.0;
  const auto saturate = [](double v) { return static_cast<int16_t>(std::min(std::max(v, -32768.0), 32767.0)); };
  for (int i = 0; i < num - 1; ++i) {
    const double sample_val = std::round(f(lo + i * step) * 32768.0);
    const double midpoint_interp_val =
        std::round((f(lo + (i + 1) * step) * 32768.0 + std::round(f(lo + i * step) * 32768.0)) / 2.0);
    const double midpoint_val = std::round(f(lo + i * step + half_step) * 32768.0);
    const double bias = std::round((midpoint_interp_val - midpoint_val) / 2.0);
    lut[i] = saturate(sample_val - bias);
  }
  lut[num - 1] = saturate(std::round(f(hi) * 32768.0));
  return table;
}

// The dim innermost in memory: x itself, or a clone moving dim there (the other dims keep their
// order); *order is the layout the kernel's output has.
ValueId rows_innermost(Rewrite& rw, const Graph& graph, ValueId x, int64_t dim,
                       std::vector<int64_t>* order) {
  *order = graph.value(x).info.effective_dim_order();
  if (order->back() == dim) return x;
  order->erase(std::find(order->begin(), order->end(), dim));
  order->push_back(dim);
  return rw.clone_dim_order(x, *order);
}

void convert_softmax_s16(Graph& graph, NodeId id) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  if (node.op != "aten._softmax.default") not_lowered("an int16 log_softmax (no 16x8 kernel)");
  if (args.b("half_to_float")) not_lowered("half_to_float = True");
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int16_per_tensor(graph, x, "input");
  const QuantParams q_out = int16_per_tensor(graph, node.outputs[0], "output");
  if (q_out.scales[0] != 1.0 / 32768.0 || q_out.zero_points[0] != 0 || q_out.quant_min != -32768 ||
      q_out.quant_max != 32767)
    not_lowered("output qparams must be 1/32768, 0 over [-32768, 32767] (the kernel's)");
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  if (in.rank() < 1) not_lowered("input is a scalar");
  const int64_t dim = args.i("dim") < 0 ? args.i("dim") + in.rank() : args.i("dim");
  // TFLite: input_scale * beta / (10 / 65535), so that diffs of [-65535, 0] span exp's [-10, 0].
  const double rescale = q_in.scales[0] / (10.0 / 65535.0);
  int exponent = 0;
  std::frexp(rescale, &exponent);
  if (!std::isfinite(rescale) || exponent > 15)
    not_lowered("input scale " + std::to_string(q_in.scales[0]) + " is too large (the kernel's shift <= 15)");
  const QuantizedMultiplier m = quantize_multiplier(rescale);
  std::vector<int64_t> order;
  const ValueId rows = rows_innermost(rw, graph, x, dim, &order);
  const ValueId exp_table =
      rw.constant("exp_table", q15_table([](double v) { return std::exp(v); }, -10.0, 0.0));
  const ValueId reciprocal_table = rw.constant(
      "reciprocal_table", q15_table([](double v) { return 1.0 / (1.0 + v); }, 0.0, 1.0));
  ValueId y = rw.call("cortex_m.quantized_softmax_s16.default", {rows, exp_table, reciprocal_table},
                      {{"dim", dim},
                       {"input_multiplier", int64_t{m.multiplier}},
                       {"input_shift", int64_t{m.shift}}},
                      true);
  rw.set_qparams(y, q_out);
  if (order != out.effective_dim_order()) y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y);
}

void convert_softmax(Graph& graph, NodeId id, const TargetConfig&) {
  if (graph.value(graph.node(id).inputs[0]).info.dtype == DType::kInt16)
    return convert_softmax_s16(graph, id);
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const bool log = node.op == "aten._log_softmax.default";
  const OpArgs args(node.op, node.name, node.attrs);
  if (args.b("half_to_float")) not_lowered("half_to_float = True");
  const ValueId x = node.inputs[0];
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  const double scale = log ? 16.0 / 256.0 : 1.0 / 256.0;
  const int64_t zero_point = log ? 127 : -128;
  if (q_out.scales[0] != scale || q_out.zero_points[0] != zero_point || q_out.quant_min != -128 ||
      q_out.quant_max != 127)
    not_lowered(std::string("output qparams must be ") + (log ? "16/256, 127" : "1/256, -128") +
                " over [-128, 127] (the kernel's)");

  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const int64_t rank = in.rank();
  if (rank < 1) not_lowered("input is a scalar");
  int64_t dim = args.i("dim");
  dim = dim < 0 ? dim + rank : dim;
  std::vector<int64_t> order;
  const ValueId rows = rows_innermost(rw, graph, x, dim, &order);

  LogSoftmaxScaling s;
  SoftmaxScaling softmax;
  const Error e = log ? log_softmax_scaling(q_in.scales[0], &s)
                      : softmax_scaling(q_in.scales[0], &softmax);
  if (!log) {
    s.input_multiplier = softmax.input_multiplier;
    s.input_left_shift = softmax.input_left_shift;
    s.diff_min = softmax.diff_min;
  }
  if (!e.ok()) not_lowered(std::string("input scale: ") + e.argument + " " + e.requirement);
  Attrs attrs = {{"dim", dim},
                 {"input_multiplier", int64_t{s.input_multiplier}},
                 {"input_shift", int64_t{s.input_left_shift}},
                 {"diff_min", int64_t{s.diff_min}}};
  if (log) {
    attrs.push_back({"reverse_scaling_divisor", int64_t{s.reverse_scaling_divisor}});
    attrs.push_back({"reverse_scaling_right_shift", int64_t{s.reverse_scaling_right_shift}});
  }
  ValueId y = rw.call(log ? "cortex_m.quantized_log_softmax.default"
                          : "cortex_m.quantized_softmax.default",
                      {rows}, std::move(attrs), true);
  rw.set_qparams(y, q_out);
  if (order != out.effective_dim_order()) y = rw.clone_dim_order(y, out.effective_dim_order());
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(softmax) {
  static const Converter converter{{"aten._softmax.default", "aten._log_softmax.default"},
                                   convert_softmax};
  return converter;
}

}  // namespace cortexm::convert
