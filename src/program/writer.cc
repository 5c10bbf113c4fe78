// Lowered graph + arena layout -> program bytes. Each runnable op maps to one kernel id and its
// params table; the bytes are loaded back through the runtime's verifier before they are returned.
#include "program/writer.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>

#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_batch_matmul.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"
#include "graph/errors.h"
#include "graph/layout.h"
#include "program/params_builder.h"
#include "program/program_generated.h"
#include "planner/memory_plan.h"
#include "program/status_message.h"
#include "runtime/program.h"
#include "target/target_config.h"

namespace cortexm::program {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

struct Emitted {
  fb::KernelId kernel;
  fb::OpParams type;
  Offset<void> params;
};

using Emitter = std::function<Emitted(FlatBufferBuilder&, const Graph&, const Node&, const OpArgs&)>;

const TensorInfo& in_info(const Graph& g, const Node& n, size_t i) { return g.value(n.inputs[i]).info; }
const TensorInfo& out_info(const Graph& g, const Node& n, size_t i = 0) { return g.value(n.outputs[i]).info; }

int32_t i32(const OpArgs& args, const std::string& name) {
  const int64_t v = args.i(name);
  if (v < INT32_MIN || v > INT32_MAX) args.fail("attribute '" + name + "' does not fit in int32");
  return static_cast<int32_t>(v);
}

std::vector<int32_t> i32s(const OpArgs& args, const std::string& name) {
  std::vector<int32_t> out;
  for (int64_t v : args.ints(name)) {
    if (v < INT32_MIN || v > INT32_MAX) args.fail("attribute '" + name + "' does not fit in int32");
    out.push_back(static_cast<int32_t>(v));
  }
  return out;
}

std::array<int32_t, 4> padding4(const OpArgs& args) {
  const auto p = i32s(args, "padding");
  if (p.size() == 2) return {p[0], p[1], p[0], p[1]};
  if (p.size() == 4) return {p[0], p[1], p[2], p[3]};
  args.fail("attribute 'padding' must have 2 or 4 values");
}

std::pair<int32_t, int32_t> pair(const OpArgs& args, const std::string& name) {
  const auto v = i32s(args, name);
  if (v.size() != 2) args.fail("attribute '" + name + "' must have 2 values");
  return {v[0], v[1]};
}

int64_t normalized_dim(const OpArgs& args, int64_t dim, int64_t rank) {
  if (dim < -rank || dim >= rank) args.fail("dim " + std::to_string(dim) + " is out of range");
  return dim < 0 ? dim + rank : dim;
}

// Conv2dParams for the convolution kernels; each kernel writes only the fields its op has
// (transposed: no dilation, output padding; s16: no offsets; depthwise: depth multiplier).
Emitted conv(FlatBufferBuilder& b, const OpArgs& args, fb::KernelId kernel) {
  const bool transposed = kernel == fb::KernelId_QuantizedTransposeConv2d;
  const bool has_offsets = kernel != fb::KernelId_QuantizedConv2dS16;
  const auto stride = pair(args, "stride");
  const auto pad = padding4(args);
  const auto multipliers = b.CreateVector(i32s(args, "requantize_multipliers"));
  const auto shifts = b.CreateVector(i32s(args, "requantize_shifts"));
  fb::Conv2dParamsBuilder p(b);
  p.add_stride_h(stride.first);
  p.add_stride_w(stride.second);
  if (!transposed) {
    const auto dilation = pair(args, "dilation");
    p.add_dilation_h(dilation.first);
    p.add_dilation_w(dilation.second);
  }
  p.add_pad_top(pad[0]);
  p.add_pad_left(pad[1]);
  p.add_pad_bottom(pad[2]);
  p.add_pad_right(pad[3]);
  if (has_offsets) {
    p.add_input_offset(i32(args, "input_offset"));
    p.add_output_offset(i32(args, "output_offset"));
  }
  p.add_activation_min(i32(args, "activation_min"));
  p.add_activation_max(i32(args, "activation_max"));
  p.add_multipliers(multipliers);
  p.add_shifts(shifts);
  if (kernel == fb::KernelId_QuantizedDepthwiseConv2d) p.add_depth_multiplier(i32(args, "depth_multiplier"));
  if (transposed) {
    const auto output_padding = pair(args, "output_padding");
    p.add_output_padding_h(output_padding.first);
    p.add_output_padding_w(output_padding.second);
  }
  return {kernel, fb::OpParams_Conv2dParams, p.Finish().Union()};
}

Emitted pool(FlatBufferBuilder& b, const OpArgs& args, fb::KernelId kernel) {
  const auto kernel_size = pair(args, "kernel_size"), stride = pair(args, "stride");
  const auto pad = padding4(args);
  fb::Pool2dParamsBuilder p(b);
  p.add_kernel_h(kernel_size.first);
  p.add_kernel_w(kernel_size.second);
  p.add_stride_h(stride.first);
  p.add_stride_w(stride.second);
  p.add_pad_top(pad[0]);
  p.add_pad_left(pad[1]);
  p.add_pad_bottom(pad[2]);
  p.add_pad_right(pad[3]);
  p.add_activation_min(i32(args, "activation_min"));
  p.add_activation_max(i32(args, "activation_max"));
  return {kernel, fb::OpParams_Pool2dParams, p.Finish().Union()};
}

Emitted quantize(FlatBufferBuilder& b, const OpArgs& args, fb::KernelId kernel) {
  const DType dtype = args.dtype("dtype");
  if (dtype != DType::kInt8 && dtype != DType::kInt16)
    throw UnsupportedError("node '" + args.node_name() + "' (" + args.op() + "): dtype " +
                           dtype_name(dtype) + " is not supported by the runtime (int8, int16)");
  const auto p = fb::CreateQuantizeParams(b, static_cast<float>(args.f("scale")), i32(args, "zero_point"),
                                          i32(args, "quant_min"), i32(args, "quant_max"));
  return {kernel, fb::OpParams_QuantizeParams, p.Union()};
}

// The dims of attribute 'dim' (all when empty), normalized and ascending.
std::vector<uint8_t> reduced_dims(const OpArgs& args, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), args.ints("dim").empty());
  for (int64_t d : args.ints("dim")) reduced[static_cast<size_t>(normalized_dim(args, d, rank))] = true;
  std::vector<uint8_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[static_cast<size_t>(d)]) dims.push_back(static_cast<uint8_t>(d));
  return dims;
}

Emitted view(FlatBufferBuilder& b) {
  return {fb::KernelId_View, fb::OpParams_ViewParams, fb::CreateViewParams(b).Union()};
}

Emitted permute(FlatBufferBuilder& b, const std::vector<uint8_t>& dims) {
  return {fb::KernelId_Permute, fb::OpParams_PermuteParams,
          fb::CreatePermuteParams(b, b.CreateVector(dims)).Union()};
}

Emitter unary(fb::UnaryFn fn) {
  return [fn](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) {
    return Emitted{fb::KernelId_FloatUnary, fb::OpParams_UnaryParams, fb::CreateUnaryParams(b, fn).Union()};
  };
}

const std::map<std::string, Emitter>& emitters() {
  static const std::map<std::string, Emitter> table = {
      {"cortex_m.quantized_conv2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) { return conv(b, a, fb::KernelId_QuantizedConv2d); }},
      {"cortex_m.quantized_depthwise_conv2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) { return conv(b, a, fb::KernelId_QuantizedDepthwiseConv2d); }},
      {"cortex_m.quantized_linear.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto m = b.CreateVector(i32s(a, "requantize_multipliers"));
         const auto s = b.CreateVector(i32s(a, "requantize_shifts"));
         fb::LinearParamsBuilder p(b);
         p.add_input_offset(i32(a, "input_offset"));
         p.add_filter_offset(i32(a, "filter_offset"));
         p.add_output_offset(i32(a, "output_offset"));
         p.add_activation_min(i32(a, "activation_min"));
         p.add_activation_max(i32(a, "activation_max"));
         p.add_multipliers(m);
         p.add_shifts(s);
         return Emitted{fb::KernelId_QuantizedLinear, fb::OpParams_LinearParams, p.Finish().Union()};
       }},
      {"cortex_m.quantized_avg_pool2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         return pool(b, a, fb::KernelId_QuantizedAvgPool2d);
       }},
      {"cortex_m.quantized_max_pool2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         return pool(b, a, fb::KernelId_QuantizedMaxPool2d);
       }},
      {"cortex_m.quantize_per_tensor.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         return quantize(b, a, fb::KernelId_QuantizePerTensor);
       }},
      {"cortex_m.dequantize_per_tensor.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         return quantize(b, a, fb::KernelId_DequantizePerTensor);
       }},
      {"aten.view_copy.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) { return view(b); }},
      {"aten.squeeze_copy.dims",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) { return view(b); }},
      {"aten.unsqueeze_copy.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) { return view(b); }},
      {"dim_order_ops._clone_dim_order.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs&) {
         std::vector<uint8_t> dims(static_cast<size_t>(in_info(g, n, 0).rank()));
         for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<uint8_t>(i);
         return permute(b, dims);
       }},
      {"aten.permute_copy.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t rank = in_info(g, n, 0).rank();
         std::vector<uint8_t> dims;
         for (int64_t d : a.ints("dims")) dims.push_back(static_cast<uint8_t>(normalized_dim(a, d, rank)));
         return permute(b, dims);
       }},
      {"aten.cat.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), out_info(g, n).rank());
         return Emitted{fb::KernelId_Cat, fb::OpParams_CatParams,
                        fb::CreateCatParams(b, static_cast<int32_t>(dim)).Union()};
       }},
      {"aten.slice_copy.Tensor",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const TensorInfo& in = in_info(g, n, 0);
         const int64_t dim = normalized_dim(a, a.i("dim"), in.rank());
         const int64_t extent = in.shape[dim];
         int64_t start = a.is_none("start") ? 0 : a.i("start");
         if (start < 0) start += extent;
         start = std::min(std::max<int64_t>(start, 0), extent);
         return Emitted{fb::KernelId_Slice, fb::OpParams_SliceParams,
                        fb::CreateSliceParams(b, static_cast<int32_t>(dim), start, a.i("step")).Union()};
       }},
      {"aten.select_copy.int",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const TensorInfo& in = in_info(g, n, 0);
         const int64_t dim = normalized_dim(a, a.i("dim"), in.rank());
         int64_t index = a.i("index");
         if (index < 0) index += in.shape[dim];
         return Emitted{fb::KernelId_Select, fb::OpParams_SelectParams,
                        fb::CreateSelectParams(b, static_cast<int32_t>(dim), index).Union()};
       }},
      {"aten.split_with_sizes_copy.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), in_info(g, n, 0).rank());
         return Emitted{fb::KernelId_Split, fb::OpParams_SplitParams,
                        fb::CreateSplitParams(b, static_cast<int32_t>(dim)).Union()};
       }},
      {"aten.constant_pad_nd.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t rank = in_info(g, n, 0).rank();
         const auto& pad = a.ints("pad");
         if (pad.size() % 2 || static_cast<int64_t>(pad.size()) > 2 * rank) a.fail("attribute 'pad' is malformed");
         std::vector<int64_t> per_dim(static_cast<size_t>(2 * rank), 0);
         for (size_t i = 0; i < pad.size() / 2; ++i) {
           const size_t d = static_cast<size_t>(rank) - 1 - i;
           per_dim[2 * d] = pad[2 * i];
           per_dim[2 * d + 1] = pad[2 * i + 1];
         }
         return Emitted{fb::KernelId_ConstantPad, fb::OpParams_ConstantPadParams,
                        fb::CreateConstantPadParams(b, b.CreateVector(per_dim), a.f("value")).Union()};
       }},
      {"aten.reflection_pad1d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto p = pair(a, "padding");
         return Emitted{fb::KernelId_ReflectionPad1d, fb::OpParams_ReflectionPad1dParams,
                        fb::CreateReflectionPad1dParams(b, p.first, p.second).Union()};
       }},
      {"aten.upsample_nearest2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) {
         return Emitted{fb::KernelId_UpsampleNearest2d, fb::OpParams_UpsampleNearest2dParams,
                        fb::CreateUpsampleNearest2dParams(b).Union()};
       }},
      {"aten._softmax.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), in_info(g, n, 0).rank());
         return Emitted{fb::KernelId_Softmax, fb::OpParams_SoftmaxParams,
                        fb::CreateSoftmaxParams(b, static_cast<int32_t>(dim)).Union()};
       }},
      {"aten._log_softmax.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), in_info(g, n, 0).rank());
         return Emitted{fb::KernelId_LogSoftmax, fb::OpParams_SoftmaxParams,
                        fb::CreateSoftmaxParams(b, static_cast<int32_t>(dim)).Union()};
       }},
      {"aten.relu.default", unary(fb::UnaryFn_Relu)},
      {"aten.hardswish.default", unary(fb::UnaryFn_Hardswish)},
      {"aten.silu.default", unary(fb::UnaryFn_Silu)},
      {"aten.sigmoid.default", unary(fb::UnaryFn_Sigmoid)},
      {"aten.tanh.default", unary(fb::UnaryFn_Tanh)},
      {"aten.sqrt.default", unary(fb::UnaryFn_Sqrt)},
      {"aten.hardsigmoid.default", unary(fb::UnaryFn_Hardsigmoid)},
      {"aten.abs.default", unary(fb::UnaryFn_Abs)},
      {"aten.gelu.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const fb::UnaryFn fn = a.s("approximate") == "tanh" ? fb::UnaryFn_GeluTanh : fb::UnaryFn_Gelu;
         return Emitted{fb::KernelId_FloatUnary, fb::OpParams_UnaryParams, fb::CreateUnaryParams(b, fn).Union()};
       }},
      {"cortex_m.quantized_softmax.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), in_info(g, n, 0).rank());
         const auto p = fb::CreateQuantizedSoftmaxParams(b, static_cast<int32_t>(dim), i32(a, "input_multiplier"),
                                                         i32(a, "input_shift"), i32(a, "diff_min"));
         return Emitted{fb::KernelId_QuantizedSoftmax, fb::OpParams_QuantizedSoftmaxParams, p.Union()};
       }},
      {"cortex_m.quantized_log_softmax.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const int64_t dim = normalized_dim(a, a.i("dim"), in_info(g, n, 0).rank());
         const auto p = fb::CreateQuantizedSoftmaxParams(
             b, static_cast<int32_t>(dim), i32(a, "input_multiplier"), i32(a, "input_shift"), i32(a, "diff_min"),
             i32(a, "reverse_scaling_divisor"), i32(a, "reverse_scaling_right_shift"));
         return Emitted{fb::KernelId_QuantizedLogSoftmax, fb::OpParams_QuantizedSoftmaxParams, p.Union()};
       }},
      {"cortex_m.quantized_activation.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) {
         return Emitted{fb::KernelId_QuantizedActivation, fb::OpParams_ActivationParams,
                        fb::CreateActivationParams(b).Union()};
       }},
      {"cortex_m.quantized_activation_s16.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs&) {
         return Emitted{fb::KernelId_QuantizedActivationS16, fb::OpParams_ActivationParams,
                        fb::CreateActivationParams(b).Union()};
       }},
      {"cortex_m.requantize.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto p = fb::CreateRequantizeParams(
             b, -i32(a, "input_zero_point"), i32(a, "output_zero_point"), i32(a, "output_multiplier"),
             i32(a, "output_shift"), i32(a, "activation_min"), i32(a, "activation_max"));
         return Emitted{fb::KernelId_Requantize, fb::OpParams_RequantizeParams, p.Union()};
       }},
      {"cortex_m.quantized_conv2d_s16.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         return conv(b, a, fb::KernelId_QuantizedConv2dS16);
       }},
      {"cortex_m.quantized_linear_s16.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto m = b.CreateVector(i32s(a, "requantize_multipliers"));
         const auto s = b.CreateVector(i32s(a, "requantize_shifts"));
         fb::LinearParamsBuilder p(b);  // offsets 0: symmetric int16 and int8
         p.add_activation_min(i32(a, "activation_min"));
         p.add_activation_max(i32(a, "activation_max"));
         p.add_multipliers(m);
         p.add_shifts(s);
         return Emitted{fb::KernelId_QuantizedLinearS16, fb::OpParams_LinearParams, p.Finish().Union()};
       }},
      {"cortex_m.quantized_magnitude_s16.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto p = fb::CreateRequantizeParams(
             b, 0, i32(a, "output_zero_point"), i32(a, "output_multiplier"), i32(a, "output_shift"),
             i32(a, "activation_min"), i32(a, "activation_max"));
         return Emitted{fb::KernelId_QuantizedMagnitudeS16, fb::OpParams_RequantizeParams, p.Union()};
       }},
      {"cortex_m.requantize_s16.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto p = fb::CreateRequantizeParams(
             b, -i32(a, "input_zero_point"), i32(a, "output_zero_point"), i32(a, "output_multiplier"),
             i32(a, "output_shift"), i32(a, "activation_min"), i32(a, "activation_max"));
         return Emitted{fb::KernelId_RequantizeS16, fb::OpParams_RequantizeParams, p.Union()};
       }},
      {"cortex_m.quantized_mean.default",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const auto dims = b.CreateVector(reduced_dims(a, in_info(g, n, 0).rank()));
         const auto p = fb::CreateQuantizedMeanParams(
             b, dims, i32(a, "input_offset"), i32(a, "output_offset"), i32(a, "output_multiplier"),
             i32(a, "output_shift"), i32(a, "activation_min"), i32(a, "activation_max"));
         return Emitted{fb::KernelId_QuantizedMean, fb::OpParams_QuantizedMeanParams, p.Union()};
       }},
      {"cortex_m.quantized_batch_matmul.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) {
         const auto p = fb::CreateMulParams(
             b, i32(a, "lhs_offset"), i32(a, "rhs_offset"), i32(a, "output_offset"),
             i32(a, "output_multiplier"), i32(a, "output_shift"), i32(a, "activation_min"),
             i32(a, "activation_max"));
         return Emitted{fb::KernelId_QuantizedBatchMatmul, fb::OpParams_MulParams, p.Union()};
       }},
      {"cortex_m.quantized_transpose_conv2d.default",
       [](FlatBufferBuilder& b, const Graph&, const Node&, const OpArgs& a) { return conv(b, a, fb::KernelId_QuantizedTransposeConv2d); }},
      {"aten.mean.dim",
       [](FlatBufferBuilder& b, const Graph& g, const Node& n, const OpArgs& a) {
         const auto dims = b.CreateVector(reduced_dims(a, in_info(g, n, 0).rank()));
         return Emitted{fb::KernelId_Mean, fb::OpParams_MeanParams, fb::CreateMeanParams(b, dims).Union()};
       }},
  };
  return table;
}

bool is_view_op(const std::string& op) { return OpRegistry::global().get(op).is_view; }

// The node's kernel id and params table: from its op's descriptor (OpSchema::encode).
Emitted emit(FlatBufferBuilder& b, const Graph& g, const Node& n) {
  const OpSchema& schema = OpRegistry::global().get(n.op);
  if (schema.encode) {
    ParamsBuilder params(b);
    const EncodedOp e = schema.encode(params, node_context(g, n.id));
    return {static_cast<fb::KernelId>(e.kernel_id), static_cast<fb::OpParams>(e.params_type),
            Offset<void>(e.params)};
  }
  return emitters().at(n.op)(b, g, n, OpArgs(n.op, n.name, n.attrs));
}

bool runnable(const std::string& op) {
  const OpSchema* schema = OpRegistry::global().find(op);
  return (schema && schema->encode) || emitters().count(op);
}

int64_t align16(int64_t v) { return (v + 15) / 16 * 16; }

fb::Isa fb_isa(Isa isa) { return static_cast<fb::Isa>(static_cast<uint8_t>(isa)); }

}  // namespace

void check_runnable(const Graph& graph) {
  for (NodeId id : graph.order()) {
    const Node& node = graph.node(id);
    if (!runnable(node.op)) {
      const auto lowering = node.meta.find("lowering");
      throw UnsupportedError(
          "node '" + node.name + "' (" + node.op + ") cannot run in a cortexm program: the runtime " +
          "has no kernel for it" +
          (lowering != node.meta.end() ? " (lowering: " + lowering->second + ")" : std::string()));
    }
    for (ValueId in : node.inputs) {
      if (in == kNoValue) continue;
      const TensorInfo& info = graph.value(in).info;
      const bool quantized_input = info.qparams && is_integer(info.dtype);
      if (quantized_input && node.op.rfind("aten._", 0) == 0)
        throw UnsupportedError("node '" + node.name + "' (" + node.op +
                               ") reads a quantized value in the folded form; run cortexm.lower first");
    }
  }
}

int64_t required_scratch(const Graph& graph, NodeId id, Isa isa) {
  const Node& n = graph.node(id);
  if (const OpSchema* schema = OpRegistry::global().find(n.op); schema && schema->scratch)
    return static_cast<int64_t>(schema->scratch(node_context(graph, n.id), isa));
  auto nhwc = [](const TensorInfo& t) {
    return Dims4{static_cast<int32_t>(t.shape[0]), static_cast<int32_t>(t.shape[2]),
                 static_cast<int32_t>(t.shape[3]), static_cast<int32_t>(t.shape[1])};
  };
  auto dims = [](const TensorInfo& t) {
    return Dims4{static_cast<int32_t>(t.shape[0]), static_cast<int32_t>(t.shape[1]),
                 static_cast<int32_t>(t.shape[2]), static_cast<int32_t>(t.shape[3])};
  };
  if (n.op == "cortex_m.quantized_conv2d.default") {
    Conv2dParams p;
    p.input = nhwc(in_info(graph, n, 0));
    p.filter = dims(in_info(graph, n, 1));
    p.output = nhwc(out_info(graph, n));
    return static_cast<int64_t>(quantized_conv2d_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_conv2d_s16.default") {
    Conv2dS16Params p;
    p.filter = dims(in_info(graph, n, 1));
    return static_cast<int64_t>(quantized_conv2d_s16_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_depthwise_conv2d.default") {
    DepthwiseConv2dParams p;
    p.input = nhwc(in_info(graph, n, 0));
    p.filter = dims(in_info(graph, n, 1));
    p.output = nhwc(out_info(graph, n));
    return static_cast<int64_t>(quantized_depthwise_conv2d_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_linear.default") {
    LinearParams p;
    p.input_features = static_cast<int32_t>(in_info(graph, n, 1).shape[1]);
    p.output_features = static_cast<int32_t>(in_info(graph, n, 1).shape[0]);
    return static_cast<int64_t>(quantized_linear_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_linear_s16.default") {
    LinearS16Params p;
    p.input_features = static_cast<int32_t>(in_info(graph, n, 1).shape[1]);
    p.output_features = static_cast<int32_t>(in_info(graph, n, 1).shape[0]);
    return static_cast<int64_t>(quantized_linear_s16_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_avg_pool2d.default") {
    Pool2dParams p;
    p.input = nhwc(in_info(graph, n, 0));
    p.output = nhwc(out_info(graph, n));
    return static_cast<int64_t>(quantized_avg_pool2d_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_batch_matmul.default") {
    BatchMatmulParams p;
    p.rhs_rows = static_cast<int32_t>(in_info(graph, n, 1).shape[1]);
    return static_cast<int64_t>(quantized_batch_matmul_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_transpose_conv2d.default") {
    TransposeConv2dParams p;
    p.input = nhwc(in_info(graph, n, 0));
    p.filter = dims(in_info(graph, n, 1));
    p.output = nhwc(out_info(graph, n));
    return static_cast<int64_t>(quantized_transpose_conv2d_scratch_size(p, isa));
  }
  if (n.op == "cortex_m.quantized_mean.default") {
    // inner: the elements after the reduced block in the input's memory order (all the size
    // function reads).
    const TensorInfo& in = in_info(graph, n, 0);
    const OpArgs args(n.op, n.name, n.attrs);
    const std::vector<uint8_t> reduced = reduced_dims(args, in.rank());
    const std::vector<int64_t> order = in.effective_dim_order();
    int64_t inner = 1;
    for (size_t k = order.size(); k-- > 0;) {
      if (std::find(reduced.begin(), reduced.end(), order[k]) != reduced.end()) break;
      inner *= in.shape[static_cast<size_t>(order[k])];
    }
    MeanParams p;
    p.inner = static_cast<int32_t>(inner);
    return static_cast<int64_t>(quantized_mean_scratch_size(p, isa));
  }
  return 0;
}

ArenaLayout sequential_layout(const Graph& graph, Isa isa) {
  ArenaLayout layout;
  int64_t cursor = 0;
  auto place = [&](ValueId v) {
    layout.value_offsets[v] = cursor;
    cursor = align16(cursor + static_cast<int64_t>(graph.value(v).info.nbytes()));
  };
  for (ValueId v : graph.inputs()) place(v);
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& n = graph.node(order[step]);
    const int64_t scratch = required_scratch(graph, n.id, isa);
    if (scratch > 0) {
      layout.scratch[static_cast<int32_t>(step)] = {cursor, scratch};
      cursor = align16(cursor + scratch);
    }
    const bool alias = is_view_op(n.op) && graph.value(n.inputs[0]).kind != ValueKind::kConstant &&
                       same_bytes(graph.value(n.inputs[0]).info, graph.value(n.outputs[0]).info);
    if (alias) {
      layout.value_offsets[n.outputs[0]] = layout.value_offsets.at(n.inputs[0]);
      continue;
    }
    for (ValueId out : n.outputs) place(out);
  }
  layout.arena_size = cursor;
  return layout;
}

ArenaLayout planned_layout(const Graph& graph, Isa isa, int64_t* extra_scratch) {
  const MemoryPlan plan = plan_memory(graph);
  ArenaLayout layout;
  for (const ValueSlot& slot : plan.values) layout.value_offsets[slot.value_id] = slot.offset;
  for (const ScratchSlot& slot : plan.scratch) layout.scratch[slot.node_index] = {slot.offset, slot.size};
  layout.arena_size = plan.arena_size;
  // Scratch the plan does not know about: one region after the arena, reused by every such op.
  int64_t extra = 0;
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const int64_t need = required_scratch(graph, order[step], isa);
    const auto it = layout.scratch.find(static_cast<int32_t>(step));
    if (need > 0 && (it == layout.scratch.end() || it->second.second < need)) {
      layout.scratch[static_cast<int32_t>(step)] = {align16(plan.arena_size), need};
      extra = std::max(extra, need);
    }
  }
  if (extra > 0) layout.arena_size = align16(plan.arena_size) + align16(extra);
  if (extra_scratch) *extra_scratch = extra;
  return layout;
}

std::string write_program(const Graph& graph, const ArenaLayout& layout, const WriteOptions& options) {
  check_runnable(graph);
  const Isa isa = parse_target(options.target).isa;
  FlatBufferBuilder b(1 << 16);

  // Tensors: every value an op or the graph touches, in first-use order.
  std::map<ValueId, int32_t> tensor_index;
  std::vector<ValueId> tensor_values;
  auto use = [&](ValueId v) {
    if (v == kNoValue) return -1;
    auto it = tensor_index.find(v);
    if (it != tensor_index.end()) return it->second;
    const int32_t index = static_cast<int32_t>(tensor_values.size());
    tensor_index[v] = index;
    tensor_values.push_back(v);
    return index;
  };
  for (ValueId v : graph.inputs()) use(v);
  for (NodeId id : graph.order()) {
    for (ValueId v : graph.node(id).inputs) use(v);
    for (ValueId v : graph.node(id).outputs) use(v);
  }
  for (ValueId v : graph.outputs()) use(v);

  // Constants: each 16-byte aligned in one blob.
  std::vector<uint8_t> blob;
  std::vector<fb::ConstantSegment> segments;
  std::map<ValueId, uint32_t> constant_index;
  for (ValueId v : tensor_values) {
    const Value& value = graph.value(v);
    if (value.kind != ValueKind::kConstant) continue;
    const size_t offset = static_cast<size_t>(align16(static_cast<int64_t>(blob.size())));
    const size_t size = value.data.nbytes();
    blob.resize(offset + size, 0);
    if (size) std::memcpy(blob.data() + offset, value.data.raw(), size);
    constant_index[v] = static_cast<uint32_t>(segments.size());
    segments.emplace_back(offset, size);
  }
  blob.resize(static_cast<size_t>(align16(static_cast<int64_t>(blob.size()))), 0);

  std::vector<Offset<fb::Tensor>> tensors;
  for (ValueId v : tensor_values) {
    const Value& value = graph.value(v);
    const TensorInfo& info = value.info;
    Offset<fb::QParams> qparams = 0;
    if (info.qparams) {
      const QuantParams& q = *info.qparams;
      // The program's range is int32: an int64 tensor's (the 16x8 conv bias) saturates.
      const auto int32_range = [](int64_t v) {
        return static_cast<int32_t>(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, v)));
      };
      qparams = fb::CreateQParams(b, b.CreateVector(q.scales), b.CreateVector(q.zero_points),
                                  static_cast<int32_t>(q.axis), int32_range(q.quant_min),
                                  int32_range(q.quant_max));
    }
    const bool constant = value.kind == ValueKind::kConstant;
    std::vector<uint8_t> dim_order;
    if (!constant && !info.contiguous())  // constants hold logical, contiguous bytes
      for (int64_t d : info.dim_order) dim_order.push_back(static_cast<uint8_t>(d));
    int64_t offset = 0;
    if (!constant) {
      const auto it = layout.value_offsets.find(v);
      if (it == layout.value_offsets.end())
        throw GraphError("memory plan has no offset for value '" + value.name + "'");
      offset = it->second;
    }
    const auto name = b.CreateString(value.name);
    const auto shape = b.CreateVector(info.shape);
    const auto order = b.CreateVector(dim_order);
    fb::TensorBuilder t(b);
    t.add_name(name);
    t.add_dtype(static_cast<fb::DType>(static_cast<uint8_t>(info.dtype)));
    t.add_shape(shape);
    t.add_dim_order(order);
    if (info.qparams) t.add_qparams(qparams);
    t.add_location(constant ? fb::Location_Constant : fb::Location_Arena);
    t.add_offset(static_cast<uint64_t>(offset));
    if (constant) t.add_constant(constant_index.at(v));
    tensors.push_back(t.Finish());
  }

  std::vector<Offset<fb::Op>> ops;
  const auto& order = graph.order();
  for (size_t step = 0; step < order.size(); ++step) {
    const Node& node = graph.node(order[step]);
    const Emitted e = emit(b, graph, node);
    std::vector<int32_t> ins, outs;
    for (ValueId v : node.inputs) ins.push_back(v == kNoValue ? -1 : tensor_index.at(v));
    for (ValueId v : node.outputs) outs.push_back(tensor_index.at(v));
    const int64_t need = required_scratch(graph, node.id, isa);
    int64_t scratch_offset = 0, scratch_size = 0;
    const auto it = layout.scratch.find(static_cast<int32_t>(step));
    if (it != layout.scratch.end()) std::tie(scratch_offset, scratch_size) = it->second;
    if (scratch_size < need)
      throw GraphError("memory plan gives node '" + node.name + "' (" + node.op + ") " +
                       std::to_string(scratch_size) + " bytes of scratch, its kernel needs " +
                       std::to_string(need));
    ops.push_back(fb::CreateOp(b, b.CreateString(node.name), e.kernel, e.type, e.params,
                               b.CreateVector(ins), b.CreateVector(outs),
                               static_cast<uint64_t>(scratch_offset), static_cast<uint64_t>(scratch_size)));
  }

  std::vector<int32_t> inputs, outputs;
  for (ValueId v : graph.inputs()) inputs.push_back(tensor_index.at(v));
  for (ValueId v : graph.outputs()) outputs.push_back(tensor_index.at(v));

  auto bundled_tensor = [&](const Tensor& t) {
    b.ForceVectorAlignment(t.nbytes(), 1, runtime::kAlignment);
    return fb::CreateBundledTensor(b, b.CreateVector(static_cast<const uint8_t*>(t.raw()), t.nbytes()));
  };
  std::vector<Offset<fb::BundledCase>> cases;
  for (const BundledCase& c : options.bundled) {
    std::vector<Offset<fb::BundledTensor>> ins, outs;
    for (const Tensor& t : c.inputs) ins.push_back(bundled_tensor(t));
    for (const Tensor& t : c.expected_outputs) outs.push_back(bundled_tensor(t));
    cases.push_back(fb::CreateBundledCase(b, b.CreateVector(ins), b.CreateVector(outs)));
  }

  b.ForceVectorAlignment(blob.size(), 1, runtime::kAlignment);
  const auto constant_data = b.CreateVector(blob);
  const auto program = fb::CreateProgram(
      b, runtime::kSchemaVersion, b.CreateString(options.target), fb_isa(isa), b.CreateVector(tensors),
      b.CreateVector(ops), b.CreateVector(inputs), b.CreateVector(outputs),
      static_cast<uint64_t>(layout.arena_size), b.CreateVectorOfStructs(segments), constant_data,
      b.CreateVector(cases));
  fb::FinishSizePrefixedProgramBuffer(b, program);
  std::string bytes(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());

  // The runtime's own verifier is the last check: what it rejects is never written.
  void* aligned = ::operator new(bytes.size(), std::align_val_t(runtime::kAlignment));
  std::memcpy(aligned, bytes.data(), bytes.size());
  runtime::Program loaded;
  const runtime::Status status = runtime::Program::load(aligned, bytes.size(), &loaded);
  std::string message;
  if (!status.ok()) message = status_message(status, aligned, bytes.size(), "program");
  ::operator delete(aligned, std::align_val_t(runtime::kAlignment));
  if (!status.ok()) throw GraphError("cannot write the program: " + message);
  return bytes;
}

}  // namespace cortexm::program
