#include "graph/quantized_form.h"

#include "cortexm/kernels/quantize_per_tensor.h"
#include "graph/errors.h"

namespace cortexm {

bool is_quantized(const TensorInfo& info) { return info.qparams.has_value() && is_integer(info.dtype); }

bool takes_folded_form(const OpSchema& schema) {
  return schema.name.rfind("aten.", 0) == 0 && !schema.is_data_movement;
}

namespace {

bool folded(const OpSchema& schema, const std::vector<const TensorInfo*>& inputs,
            const std::vector<const TensorInfo*>& outputs);

}  // namespace

bool is_in_folded_form(const Graph& graph, const Node& node) {
  std::vector<const TensorInfo*> inputs, outputs;
  for (ValueId v : node.inputs) inputs.push_back(v == kNoValue ? nullptr : &graph.value(v).info);
  for (ValueId v : node.outputs) outputs.push_back(&graph.value(v).info);
  return folded(OpRegistry::global().get(node.op), inputs, outputs);
}

namespace {

bool folded(const OpSchema& schema, const std::vector<const TensorInfo*>& inputs,
            const std::vector<const TensorInfo*>& outputs) {
  if (!takes_folded_form(schema)) return false;
  for (const TensorInfo* t : inputs)
    if (t && is_quantized(*t)) return true;
  for (const TensorInfo* t : outputs)
    if (t && is_quantized(*t)) return true;
  return false;
}

TensorInfo as_float(const TensorInfo& info) {
  TensorInfo f;
  f.dtype = DType::kFloat32;
  f.shape = info.shape;
  f.dim_order = info.dim_order;
  return f;
}

// Slices of `shape` along `axis`: outer count, channels, inner run length.
void channel_layout(const std::vector<int64_t>& shape, int64_t axis, int64_t* outer, int64_t* channels,
                    int64_t* inner) {
  *outer = 1;
  *inner = 1;
  *channels = shape.empty() ? 1 : shape[static_cast<size_t>(axis)];
  for (int64_t d = 0; d < axis; ++d) *outer *= shape[static_cast<size_t>(d)];
  for (size_t d = static_cast<size_t>(axis) + 1; d < shape.size(); ++d) *inner *= shape[d];
}

template <typename T>
void dequantize_typed(const Tensor& q, float* out) {
  const QuantParams& p = *q.info().qparams;
  const T* in = q.data<T>();
  const int64_t axis = p.per_channel() ? p.axis : -1;
  int64_t outer = 1, channels = 1, inner = q.numel();
  if (axis >= 0) channel_layout(q.shape(), axis, &outer, &channels, &inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float scale = static_cast<float>(p.scales[axis >= 0 ? c : 0]);
      const int64_t zp = p.zero_points[axis >= 0 ? c : 0];
      const int64_t base = (o * channels + c) * inner;
      for (int64_t i = 0; i < inner; ++i)
        out[base + i] = static_cast<float>(int64_t{in[base + i]} - zp) * scale;
    }
}

}  // namespace

Tensor dequantize_tensor(const Tensor& q) {
  Tensor out(as_float(q.info()));
  switch (q.dtype()) {
    case DType::kInt8: dequantize_typed<int8_t>(q, out.data<float>()); break;
    case DType::kInt16: dequantize_typed<int16_t>(q, out.data<float>()); break;
    case DType::kInt32: dequantize_typed<int32_t>(q, out.data<float>()); break;
    case DType::kInt64: dequantize_typed<int64_t>(q, out.data<float>()); break;
    default: throw GraphError(std::string("cannot dequantize ") + dtype_name(q.dtype()));
  }
  return out;
}

QuantizeParams quantize_params_of(const QuantParams& q, DType dtype) {
  QuantizeParams p;
  p.scale = static_cast<float>(q.scales[0]);
  p.zero_point = static_cast<int32_t>(q.zero_points[0]);
  p.quant_min = static_cast<int32_t>(q.quant_min);
  p.quant_max = static_cast<int32_t>(q.quant_max);
  p.dtype = dtype == DType::kInt16 ? QuantDtype::kInt16 : QuantDtype::kInt8;
  return p;
}

int32_t quantize_scalar(float v, const QuantParams& q, DType dtype) {
  const QuantizeParams p = quantize_params_of(q, dtype);
  if (dtype == DType::kInt16) {
    int16_t out = 0;
    quantize_per_tensor(p, &v, &out, 1);
    return out;
  }
  int8_t out = 0;
  quantize_per_tensor(p, &v, &out, 1);
  return out;
}

void quantize_into(const Tensor& real, Tensor& q) {
  const QuantParams& qp = *q.info().qparams;
  if (qp.per_channel()) throw GraphError("folded outputs are quantized per tensor only");
  if (q.dtype() != DType::kInt8 && q.dtype() != DType::kInt16)
    throw GraphError(std::string("cannot quantize to ") + dtype_name(q.dtype()));
  const QuantizeParams p = quantize_params_of(qp, q.dtype());
  const Error e = quantize_per_tensor_prepare(p);
  if (!e.ok()) throw GraphError(std::string("quantized output: ") + e.argument + " " + e.requirement);
  quantize_per_tensor(p, real.data<float>(), q.raw(), static_cast<size_t>(real.numel()));
}

std::vector<TensorInfo> infer_node(const OpSchema& schema, const InferContext& ctx,
                                   const std::vector<const TensorInfo*>& current_outputs) {
  if (!folded(schema, ctx.inputs, current_outputs)) return schema.infer(ctx);
  std::vector<TensorInfo> float_inputs;
  float_inputs.reserve(ctx.inputs.size());
  std::vector<const TensorInfo*> pointers;
  for (const TensorInfo* t : ctx.inputs) {
    if (!t) {
      pointers.push_back(nullptr);
      continue;
    }
    float_inputs.push_back(is_quantized(*t) ? as_float(*t) : *t);
    pointers.push_back(&float_inputs.back());
  }
  std::vector<TensorInfo> out =
      schema.infer(InferContext(ctx.op(), ctx.node_name(), ctx.attrs(), pointers));
  for (size_t k = 0; k < out.size() && k < current_outputs.size(); ++k) {
    const TensorInfo* cur = current_outputs[k];
    if (cur && is_quantized(*cur)) {
      out[k].dtype = cur->dtype;
      out[k].qparams = cur->qparams;
    }
  }
  return out;
}

void run_node(const OpSchema& schema, const KernelContext& ctx) {
  std::vector<const TensorInfo*> in_infos, out_infos;
  for (const Tensor* t : ctx.inputs) in_infos.push_back(t ? &t->info() : nullptr);
  for (const Tensor& t : ctx.outputs) out_infos.push_back(&t.info());
  if (!folded(schema, in_infos, out_infos)) {
    schema.kernel(ctx);
    return;
  }
  std::vector<Tensor> dequantized;
  dequantized.reserve(ctx.inputs.size());
  std::vector<const Tensor*> inputs;
  for (const Tensor* t : ctx.inputs) {
    if (t && is_quantized(t->info())) {
      dequantized.push_back(dequantize_tensor(*t));
      inputs.push_back(&dequantized.back());
    } else {
      inputs.push_back(t);
    }
  }
  std::vector<Tensor> real;
  for (const Tensor& out : ctx.outputs)
    real.emplace_back(is_quantized(out.info()) ? as_float(out.info()) : out.info());
  KernelContext float_ctx(ctx.op(), ctx.node_name(), ctx.attrs(), inputs, real);
  float_ctx.host_variant = ctx.host_variant;
  schema.kernel(float_ctx);
  for (size_t k = 0; k < real.size(); ++k) {
    if (is_quantized(ctx.outputs[k].info())) {
      quantize_into(real[k], ctx.outputs[k]);
    } else {
      ctx.outputs[k] = std::move(real[k]);
    }
  }
}

}  // namespace cortexm
