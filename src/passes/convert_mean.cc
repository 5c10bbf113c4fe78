// ConvertToCortexM, aten.mean.dim: the global average pool when convert_pool takes it (NCHW, H
// and W, equal qparams); otherwise cortex_m.quantized_mean (multiplier s_in / (count * s_out),
// see quantized_mean.h) over any dims that form one block in the input's memory order, any keepdim, any
// input and output qparams. A symmetric int16 mean over dims that all have size 1 (silero's mean
// over one time step) moves its elements unchanged: a view when the qparams agree, else
// cortex_m.requantize_s16 and a view.
#include <algorithm>
#include <limits>

#include "cortexm/kernels/requantize_s16.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

void convert_mean_s16(Graph& graph, NodeId id) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  const QuantParams q_in = int16_per_tensor(graph, x, "input");
  const QuantParams q_out = int16_per_tensor(graph, node.outputs[0], "output");
  std::vector<int64_t> dims = args.ints("dim");
  if (dims.empty())
    for (int64_t d = 0; d < in.rank(); ++d) dims.push_back(d);
  for (int64_t d : dims)
    if (in.shape[static_cast<size_t>(d < 0 ? d + in.rank() : d)] != 1)
      not_lowered("an int16 mean over dim " + std::to_string(d) + " of size " +
                  std::to_string(in.shape[static_cast<size_t>(d < 0 ? d + in.rank() : d)]) +
                  " (int16 means lower over size-1 dims only)");
  std::vector<int64_t> identity(static_cast<size_t>(in.rank()));
  for (size_t k = 0; k < identity.size(); ++k) identity[k] = static_cast<int64_t>(k);
  if (in.effective_dim_order() != identity) not_lowered("the int16 input is not contiguous");
  ValueId y = x;
  const bool same = q_in.scales[0] == q_out.scales[0] && q_in.quant_min >= q_out.quant_min &&
                    q_in.quant_max <= q_out.quant_max;
  if (!same) {
    std::vector<int64_t> m, s;
    requantize_attrs({q_in.scales[0] / (q_out.scales[0] * (1 << kRequantizeS16LeftShift))}, &m, &s);
    y = rw.call("cortex_m.requantize_s16.default", {x},
                {{"input_zero_point", int64_t{0}},
                 {"output_zero_point", int64_t{0}},
                 {"output_multiplier", m[0]},
                 {"output_shift", s[0]},
                 {"output_dtype", DType::kInt16},
                 {"activation_min", q_out.quant_min},
                 {"activation_max", q_out.quant_max}},
                true);
    rw.set_qparams(y, q_out);
  }
  y = rw.view(y, out.shape);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

}  // namespace

void convert_mean(Graph& graph, NodeId id, const TargetConfig& target) {
  if (graph.value(graph.node(id).inputs[0]).info.dtype == DType::kInt16)
    return convert_mean_s16(graph, id);
  try {
    convert_pool(graph, id, target);
    return;
  } catch (const NotLowered&) {
    // Not a global pool: the mean kernel below.
  }
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const OpArgs args(node.op, node.name, node.attrs);
  const ValueId x = node.inputs[0];
  const TensorInfo in = graph.value(x).info;
  const QuantParams q_in = int8_per_tensor(graph, x, "input");
  const QuantParams q_out = int8_per_tensor(graph, node.outputs[0], "output");
  std::vector<int64_t> dims = args.ints("dim");
  if (dims.empty())
    for (int64_t d = 0; d < in.rank(); ++d) dims.push_back(d);
  double count = 1.0;
  for (int64_t d : dims)  // aten.mean.dim's inference checked them
    count *= static_cast<double>(in.shape[static_cast<size_t>(d < 0 ? d + in.rank() : d)]);
  if (count < 1.0) not_lowered("an empty mean");
  std::vector<int64_t> m, s;
  requantize_attrs({q_in.scales[0] / (count * q_out.scales[0])}, &m, &s);
  // The kernel's extents are int32; the elements after the reduced block in the input's memory
  // order are one of them.
  std::vector<int64_t> normalized;
  for (int64_t d : dims) normalized.push_back(d < 0 ? d + in.rank() : d);
  const std::vector<int64_t> order = in.effective_dim_order();
  int64_t inner = 1;
  for (size_t k = order.size(); k-- > 0;) {
    if (std::find(normalized.begin(), normalized.end(), order[k]) != normalized.end()) break;
    inner *= in.shape[static_cast<size_t>(order[k])];
  }
  if (inner > std::numeric_limits<int32_t>::max())
    not_lowered("more than 2^31 elements after the reduced dims (the kernel's int32 extents)");
  const ValueId y = rw.call("cortex_m.quantized_mean.default", {x},
                            {{"dim", dims},
                             {"keepdim", args.b("keepdim")},
                             {"input_offset", -q_in.zero_points[0]},
                             {"output_offset", q_out.zero_points[0]},
                             {"output_multiplier", m[0]},
                             {"output_shift", s[0]},
                             {"activation_min", q_out.quant_min},
                             {"activation_max", q_out.quant_max}},
                            true);
  rw.set_qparams(y, q_out);
  rw.commit(y);
}

}  // namespace cortexm::convert
