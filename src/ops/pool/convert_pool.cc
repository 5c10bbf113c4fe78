// ConvertToCortexM, pooling: aten.max_pool2d.default (dilation 1) and aten.avg_pool2d.default
// (when averaging the valid taps is what torch does: no divisor_override, and no padding or
// count_include_pad False) -> _clone_dim_order to channels-last, cortex_m.quantized_max_pool2d /
// quantized_avg_pool2d, _clone_dim_order back; a symmetric int16 max pool ->
// cortex_m.quantized_max_pool2d_s16 the same way. Input and output qparams must be equal. ceil_mode's
// partial windows become bottom / right padding (padding taps are never read).
#include <algorithm>

#include "cortexm/kernels/shape.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

namespace {

std::vector<int64_t> pair(const OpArgs& args, const char* attr) {
  const std::vector<int64_t>& v = args.ints(attr);
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return v;
  not_lowered(std::string("attribute '") + attr + "' has " + std::to_string(v.size()) + " values");
}

int64_t windows(int64_t in, int64_t kernel, int64_t stride, int64_t before, int64_t after) {
  return window_output_size(static_cast<int32_t>(in), static_cast<int32_t>(kernel),
                            static_cast<int32_t>(stride), 1, static_cast<int32_t>(before),
                            static_cast<int32_t>(after));
}

// Padding after the input along one axis giving `out` windows that start where torch's do: the
// symmetric padding when it does, else what ceil_mode's partial last window needs.
int64_t pad_after(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t out) {
  if (pad < kernel && windows(in, kernel, stride, pad, pad) == out) return pad;
  const int64_t after = std::max<int64_t>(0, (out - 1) * stride + kernel - in - pad);
  if (after >= kernel || pad >= kernel || windows(in, kernel, stride, pad, after) != out)
    not_lowered("its windows do not map onto the kernel's padding");
  return after;
}

void convert_pool(Graph& graph, NodeId id, const TargetConfig&) {
  Rewrite rw(graph, id);
  const Node& node = rw.old();
  const bool is_max = node.op == "aten.max_pool2d.default";
  const ValueId x = node.inputs[0];
  const TensorInfo in = graph.value(x).info;
  const TensorInfo out = graph.value(node.outputs[0]).info;
  if (in.rank() != 4) not_lowered("input rank " + std::to_string(in.rank()) + " (NCHW only)");
  const bool int16 = in.dtype == DType::kInt16;
  if (int16 && !is_max) not_lowered("an int16 average pool (no 16x8 average pool kernel)");
  const auto per_tensor = int16 ? int16_per_tensor : int8_per_tensor;
  const QuantParams q_in = per_tensor(graph, x, "input");
  const QuantParams q_out = per_tensor(graph, node.outputs[0], "output");
  if (q_in != q_out) not_lowered("input and output qparams differ (the pools do not rescale)");
  const OpArgs args(node.op, node.name, node.attrs);
  const std::vector<int64_t> kernel = pair(args, "kernel_size");
  const std::vector<int64_t> stride = args.ints("stride").empty() ? kernel : pair(args, "stride");
  const std::vector<int64_t> padding = pair(args, "padding");
  if (is_max) {
    const std::vector<int64_t> dilation = pair(args, "dilation");
    if (dilation[0] != 1 || dilation[1] != 1) not_lowered("dilation > 1");
  } else {
    if (!args.is_none("divisor_override")) not_lowered("divisor_override");
    if ((padding[0] || padding[1]) && args.b("count_include_pad"))
      not_lowered("count_include_pad with padding (the kernel averages valid taps only)");
  }
  for (int64_t v : {kernel[0], kernel[1], stride[0], stride[1], in.shape[2], in.shape[3]})
    if (v < 1 || v > INT32_MAX) not_lowered("kernel, stride or input extent outside [1, 2^31)");
  const int64_t bottom = pad_after(in.shape[2], kernel[0], stride[0], padding[0], out.shape[2]);
  const int64_t right = pad_after(in.shape[3], kernel[1], stride[1], padding[1], out.shape[3]);
  const std::vector<int64_t> pads =
      bottom == padding[0] && right == padding[1]
          ? padding
          : std::vector<int64_t>{padding[0], padding[1], bottom, right};

  const Attrs attrs = {{"kernel_size", kernel}, {"stride", stride}, {"padding", pads},
                       {"activation_min", q_out.quant_min}, {"activation_max", q_out.quant_max}};
  const ValueId xc = rw.clone_dim_order(x, channels_last_dim_order(4));
  const char* op = !is_max ? "cortex_m.quantized_avg_pool2d.default"
                   : int16 ? "cortex_m.quantized_max_pool2d_s16.default"
                           : "cortex_m.quantized_max_pool2d.default";
  const ValueId y = rw.call(op,
                            {xc}, attrs, true);
  rw.set_qparams(y, q_out);
  rw.commit(rw.clone_dim_order(y, out.effective_dim_order()));
}

}  // namespace

CORTEXM_CONVERTER(pool) {
  static const Converter converter{{"aten.max_pool2d.default", "aten.avg_pool2d.default"}, convert_pool};
  return converter;
}

}  // namespace cortexm::convert
