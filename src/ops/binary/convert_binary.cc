// ConvertToCortexM, elementwise binaries: aten.add.Tensor / aten.sub.Tensor (alpha 1) ->
// cortex_m.quantized_add / quantized_sub with TFLite's derivation (inputs shifted left by 20 and
// rescaled to twice the larger input scale), aten.mul.Tensor -> cortex_m.quantized_mul (one multiplier for s_a * s_b / s_out). With both
// inputs and the output symmetric int16 (the 16x8 mode), the same derivations with a left shift of
// 15 give cortex_m.quantized_add_s16 / quantized_mul_s16; int8 mixed with int16 stays float. The
// kernels broadcast.
#include <algorithm>
#include <cstdlib>

#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/requantize.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

// The largest |q| of a value with these qparams (zero point 0).
int64_t magnitude_bound(const QuantParams& q) {
  return std::max(std::abs(q.quant_min), std::abs(q.quant_max));
}

// NotLowered when acc_bound << shift (the requantize's left shift) can leave int32: the kernels
// would wrap where the folded graph saturates.
void check_left_shift(int64_t acc_bound, int64_t shift, const char* what) {
  if (shift > 0 && (acc_bound << shift) > INT32_MAX)
    not_lowered(std::string(what) + " needs a left shift of " + std::to_string(shift) +
                " that overflows int32 (output scale too small for the inputs')");
}

void convert_binary(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const bool is_sub = node.op == "aten.sub.Tensor";
  const bool is_add = node.op == "aten.add.Tensor" || is_sub;
  if (is_add && OpArgs(node.op, node.name, node.attrs).f("alpha") != 1.0) not_lowered("alpha != 1");
  const DType da = graph.value(a).info.dtype, db = graph.value(b).info.dtype;
  const DType dout = graph.value(node.outputs[0]).info.dtype;
  const bool int16 = da == DType::kInt16 && db == DType::kInt16 && dout == DType::kInt16;
  if (!int16 && (da == DType::kInt16 || db == DType::kInt16 || dout == DType::kInt16))
    not_lowered(std::string("self is ") + dtype_name(da) + ", other " + dtype_name(db) +
                ", output " + dtype_name(dout) +
                ": the int16 add / mul kernels take int16 on all three, the int8 ones int8");
  const QuantParams qa = int16 ? int16_per_tensor(graph, a, "self") : int8_per_tensor(graph, a, "self");
  const QuantParams qb = int16 ? int16_per_tensor(graph, b, "other") : int8_per_tensor(graph, b, "other");
  const QuantParams qo = int16 ? int16_per_tensor(graph, node.outputs[0], "output")
                               : int8_per_tensor(graph, node.outputs[0], "output");
  const double sa = qa.scales[0], sb = qb.scales[0], so = qo.scales[0];
  std::vector<int64_t> m, s;
  ValueId y = kNoValue;
  if (is_sub && int16) not_lowered("no int16 sub kernel");
  if (is_add && int16) {
    const double twice_max = 2.0 * std::max(sa, sb);
    requantize_attrs({sa / twice_max, sb / twice_max,
                      twice_max / (static_cast<double>(1 << kAddS16LeftShift) * so)},
                     &m, &s);
    // The largest |sum| the inputs' ranges give (requantize is monotonic in its accumulator).
    const int64_t sum_bound =
        int64_t{requantize(static_cast<int32_t>(magnitude_bound(qa) << kAddS16LeftShift),
                           static_cast<int32_t>(m[0]), static_cast<int32_t>(s[0]))} +
        requantize(static_cast<int32_t>(magnitude_bound(qb) << kAddS16LeftShift),
                   static_cast<int32_t>(m[1]), static_cast<int32_t>(s[1]));
    check_left_shift(sum_bound, s[2], "the sum's requantize");
    y = rw.call("cortex_m.quantized_add_s16.default", {a, b},
                {{"self_multiplier", m[0]}, {"self_shift", s[0]}, {"other_multiplier", m[1]},
                 {"other_shift", s[1]}, {"output_multiplier", m[2]}, {"output_shift", s[2]},
                 {"activation_min", qo.quant_min}, {"activation_max", qo.quant_max}},
                true);
  } else if (int16) {
    requantize_attrs({sa * sb / so}, &m, &s);
    check_left_shift(magnitude_bound(qa) * magnitude_bound(qb), s[0], "the product's requantize");
    y = rw.call("cortex_m.quantized_mul_s16.default", {a, b},
                {{"output_multiplier", m[0]}, {"output_shift", s[0]},
                 {"activation_min", qo.quant_min}, {"activation_max", qo.quant_max}},
                true);
  } else if (is_add) {
    const double twice_max = 2.0 * std::max(sa, sb);
    requantize_attrs({sa / twice_max, sb / twice_max,
                      twice_max / (static_cast<double>(1 << kAddLeftShift) * so)},
                     &m, &s);
    y = rw.call(is_sub ? "cortex_m.quantized_sub.default" : "cortex_m.quantized_add.default", {a, b},
                {{"self_zero_point", qa.zero_points[0]}, {"self_multiplier", m[0]},
                 {"self_shift", s[0]}, {"other_zero_point", qb.zero_points[0]},
                 {"other_multiplier", m[1]}, {"other_shift", s[1]},
                 {"output_zero_point", qo.zero_points[0]}, {"output_multiplier", m[2]},
                 {"output_shift", s[2]}, {"activation_min", qo.quant_min},
                 {"activation_max", qo.quant_max}},
                true);
  } else {
    requantize_attrs({sa * sb / so}, &m, &s);
    y = rw.call("cortex_m.quantized_mul.default", {a, b},
                {{"self_zero_point", qa.zero_points[0]}, {"other_zero_point", qb.zero_points[0]},
                 {"output_zero_point", qo.zero_points[0]}, {"output_multiplier", m[0]},
                 {"output_shift", s[0]}, {"activation_min", qo.quant_min},
                 {"activation_max", qo.quant_max}},
                true);
  }
  rw.set_qparams(y, qo);
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(binary) {
  static const Converter converter{{"aten.add.Tensor", "aten.sub.Tensor", "aten.mul.Tensor"},
                                   convert_binary};
  return converter;
}

}  // namespace cortexm::convert
