// ConvertToCortexM, matmuls of two activations: aten.bmm.default (self [B, M, K], mat2 [B, K, N])
// -> cortex_m.quantized_batch_matmul, which takes the rhs transposed ([B, N, K]): mat2's own
// producer when that is permute_copy(x, [0, 2, 1]) (q @ k.transpose(-1, -2)), else an int8
// permute_copy (data movement) of mat2. aten.mm.default goes the same way through views to
// batch 1. One multiplier for s_self * s_mat2 / s_out, as arm_batch_matmul_s8. Symmetric int16
// operands -> cortex_m.quantized_batch_matmul_s16 the same way (arm_batch_matmul_s16: the shift of
// its 64-bit requantize at most 7).
#include "cortexm/kernels/requantize.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

constexpr const char* kPermute = "aten.permute_copy.default";

// x when v is permute_copy(x, dims) with x at v's dtype and qparams, looking through view_copy nodes
// that keep the shape (torch.matmul's decomposition puts one before bmm); else kNoValue.
ValueId permuted_from(const Graph& graph, ValueId v, const std::vector<int64_t>& dims) {
  NodeId p = graph.producer(v);
  while (p != kNoNode && graph.node(p).op == kView &&
         graph.value(graph.node(p).inputs[0]).info.shape == graph.value(v).info.shape)
    p = graph.producer(graph.node(p).inputs[0]);
  if (p == kNoNode || graph.node(p).op != kPermute) return kNoValue;
  const Node& permute = graph.node(p);
  if (OpArgs(permute.op, permute.name, permute.attrs).ints("dims") != dims) return kNoValue;
  const TensorInfo& in = graph.value(permute.inputs[0]).info;
  if (in.dtype != graph.value(v).info.dtype || in.qparams != graph.value(v).info.qparams)
    return kNoValue;
  return permute.inputs[0];
}

void convert_batch_matmul(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const bool batched = node.op == "aten.bmm.default";
  const ValueId a = node.inputs[0], b = node.inputs[1];
  const bool int16 = graph.value(a).info.dtype == DType::kInt16;
  const auto per_tensor = int16 ? int16_per_tensor : int8_per_tensor;
  const QuantParams qa = per_tensor(graph, a, "self");
  const QuantParams qb = per_tensor(graph, b, "mat2");
  const QuantParams qo = per_tensor(graph, node.outputs[0], "output");
  const std::vector<int64_t> as = graph.value(a).info.shape, bs = graph.value(b).info.shape;
  const std::vector<int64_t> out_shape = graph.value(node.outputs[0]).info.shape;
  std::vector<int64_t> m, s;
  requantize_attrs({qa.scales[0] * qb.scales[0] / qo.scales[0]}, &m, &s);
  if (int16 && s[0] > kMaxShiftS64)
    not_lowered("s_self * s_mat2 / s_out >= 2^7 (arm_batch_matmul_s16's requantize shift <= 7)");

  const std::vector<int64_t> transpose = batched ? std::vector<int64_t>{0, 2, 1}
                                                 : std::vector<int64_t>{1, 0};
  ValueId rhs = permuted_from(graph, b, transpose);
  if (rhs == kNoValue) {
    rhs = rw.call(kPermute, {b}, {{"dims", transpose}});
    rw.set_qparams(rhs, qb);
  }
  ValueId lhs = a;
  if (!batched) {
    lhs = rw.view(a, {1, as[0], as[1]});
    rhs = rw.view(rhs, {1, bs[1], bs[0]});
  }
  ValueId y = rw.call(int16 ? "cortex_m.quantized_batch_matmul_s16.default"
                            : "cortex_m.quantized_batch_matmul.default",
                      {lhs, rhs},
                      {{"lhs_offset", -qa.zero_points[0]},
                       {"rhs_offset", -qb.zero_points[0]},
                       {"output_offset", qo.zero_points[0]},
                       {"output_multiplier", m[0]},
                       {"output_shift", s[0]},
                       {"activation_min", qo.quant_min},
                       {"activation_max", qo.quant_max}},
                      true);
  rw.set_qparams(y, qo);
  if (!batched) {
    y = rw.view(y, out_shape);
    rw.set_qparams(y, qo);
  }
  rw.commit(y);
}

}  // namespace

CORTEXM_CONVERTER(batch_matmul) {
  static const Converter converter{{"aten.bmm.default", "aten.mm.default"}, convert_batch_matmul};
  return converter;
}

}  // namespace cortexm::convert
