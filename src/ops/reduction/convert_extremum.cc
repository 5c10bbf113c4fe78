// ConvertToCortexM, aten.amax.default / aten.amin.default -> cortex_m.quantized_amax /
// quantized_amin: the max / min of the integers. Both commute with a dequantize of positive scale,
// so with the input's qparams on the output (the quantizer's passthrough pattern) the int8 / int16
// result is exact (TFLite Micro's REDUCE_MAX). aten.argmax.default / aten.argmin.default reading
// int8 / int16 -> cortex_m.quantized_argmax / quantized_argmin: a dequantize of positive scale keeps
// the order and the ties of the integers, so the index is the float op's (TFLite Micro's ARG_MAX).
// A channels-last input is made contiguous first.
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_extremum(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  QuantParams q_out;
  const ValueId source = contiguous_passthrough_input(rw, &q_out);
  const bool max = node.op == "aten.amax.default";
  const ValueId y = rw.call(max ? "cortex_m.quantized_amax.default" : "cortex_m.quantized_amin.default",
                            {source}, node.attrs, true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

void convert_arg_extremum(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const ValueId source = contiguous_quantized_input(rw);
  const bool max = node.op == "aten.argmax.default";
  rw.commit(rw.call(max ? "cortex_m.quantized_argmax.default" : "cortex_m.quantized_argmin.default", {source},
                    node.attrs, true));
}

}  // namespace

CORTEXM_CONVERTER(extremum) {
  static const Converter converter{{"aten.amax.default", "aten.amin.default"}, convert_extremum};
  return converter;
}

CORTEXM_CONVERTER(arg_extremum) {
  static const Converter converter{{"aten.argmax.default", "aten.argmin.default"}, convert_arg_extremum};
  return converter;
}

}  // namespace cortexm::convert
