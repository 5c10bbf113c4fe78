#include "ops/quant/quant_attrs.h"

#include <cmath>

#include "graph/errors.h"
#include "ops/quant/runtime/quantize_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

void dtype_range(const OpArgs& args, DType dtype, int64_t* lo, int64_t* hi) {
  switch (dtype) {
    case DType::kInt8: *lo = -128; *hi = 127; return;
    case DType::kUInt8: *lo = 0; *hi = 255; return;
    case DType::kInt16: *lo = -32768; *hi = 32767; return;
    case DType::kInt32: *lo = INT32_MIN; *hi = INT32_MAX; return;
    case DType::kInt64: *lo = INT64_MIN; *hi = INT64_MAX; return;  // the 16x16 biases
    default: args.fail(std::string("dtype ") + dtype_name(dtype) + " is not a quantized dtype");
  }
}

void check_scale(const OpArgs& args, const std::string& name, double scale) {
  if (!std::isfinite(scale) || !(scale > 0.0))
    args.fail(name + " = " + std::to_string(scale) + " must be finite and > 0");
}

}  // namespace

QuantParams quant_params_from_attrs(const OpArgs& args, bool per_channel, int64_t rank,
                                    const std::vector<int64_t>& shape) {
  QuantParams q;
  const DType dtype = args.dtype("dtype");
  int64_t lo = 0, hi = 0;
  dtype_range(args, dtype, &lo, &hi);
  q.quant_min = args.i("quant_min");
  q.quant_max = args.i("quant_max");
  if (q.quant_min < lo || q.quant_max > hi || q.quant_min > q.quant_max)
    args.fail("quant range [" + std::to_string(q.quant_min) + ", " + std::to_string(q.quant_max) +
              "] is not within " + dtype_name(dtype) + " or is empty");
  if (per_channel) {
    q.scales = args.floats("scales");
    q.zero_points = args.ints("zero_points");
    q.axis = normalize_dim(args, "axis", args.i("axis"), rank);
    if (q.scales.size() != q.zero_points.size())
      args.fail(std::to_string(q.scales.size()) + " scales but " + std::to_string(q.zero_points.size()) +
                " zero points");
    if (rank > 0 && static_cast<int64_t>(q.scales.size()) != shape[q.axis])
      args.fail(std::to_string(q.scales.size()) + " scales for axis " + std::to_string(q.axis) +
                " of extent " + std::to_string(shape[q.axis]));
    for (size_t c = 0; c < q.scales.size(); ++c) check_scale(args, "scales[" + std::to_string(c) + "]", q.scales[c]);
  } else {
    q.scales = {args.f("scale")};
    q.zero_points = {args.i("zero_point")};
    check_scale(args, "scale", q.scales[0]);
  }
  for (int64_t zp : q.zero_points)
    if (zp < lo || zp > hi)
      args.fail("zero point " + std::to_string(zp) + " is outside " + dtype_name(dtype));
  return q;
}

QuantizeParams quantize_params(const OpArgs& args) {
  const QuantParams q = quant_params_from_attrs(args, false);
  QuantizeParams p;
  p.scale = static_cast<float>(args.f("scale"));
  p.zero_point = static_cast<int32_t>(q.zero_points[0]);
  p.quant_min = static_cast<int32_t>(q.quant_min);
  p.quant_max = static_cast<int32_t>(q.quant_max);
  p.dtype = args.dtype("dtype") == DType::kInt16 ? QuantDtype::kInt16 : QuantDtype::kInt8;
  return p;
}

void for_each_channel_run(const OpArgs& args, const std::vector<int64_t>& shape, QuantDtype dtype,
                          const std::function<void(const ChannelRun&)>& run) {
  const int64_t axis = normalize_dim(args, "axis", args.i("axis"), static_cast<int64_t>(shape.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t channels = shape[axis];
  const std::vector<double>& scales = args.floats("scales");
  const std::vector<int64_t>& zero_points = args.ints("zero_points");
  ChannelRun r;
  r.params.quant_min = static_cast<int32_t>(args.i("quant_min"));
  r.params.quant_max = static_cast<int32_t>(args.i("quant_max"));
  r.params.dtype = dtype;
  r.count = inner;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      r.params.scale = static_cast<float>(scales[c]);
      r.params.zero_point = static_cast<int32_t>(zero_points[c]);
      r.zero_point = zero_points[c];
      r.start = (o * channels + c) * inner;
      run(r);
    }
  }
}

EncodeFn encode_quantize_per_tensor(fb::KernelId kernel_id) {
  return [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const DType dtype = node.dtype("dtype");
    if (dtype != DType::kInt8 && dtype != DType::kInt16)
      throw UnsupportedError("node '" + node.node_name() + "' (" + node.op() + "): dtype " +
                             dtype_name(dtype) + " is not supported by the runtime (int8, int16)");
    return program::encoded(kernel_id, program::encode_quantize(b.fbb(), quantize_params(node)));
  };
}

void register_with_cortex_m_twin(OpRegistry& registry, const std::string& op, OpSchema s,
                                 fb::KernelId kernel_id) {
  s.name = "quantized_decomposed." + op + ".default";
  registry.add(s);
  s.name = "cortex_m." + op + ".default";
  s.encode = encode_quantize_per_tensor(kernel_id);
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
