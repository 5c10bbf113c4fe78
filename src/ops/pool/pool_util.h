// Shared by the cortex_m pooling ops: attribute decoding, NCHW staging and the program encode
// (ops/pool/runtime/pool2d_codec.h).
#pragma once

#include <type_traits>

#include "cortexm/kernels/pool_params.h"
#include "ops/cortex_m_util.h"
#include "ops/pool/runtime/pool2d_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

// The activation range defaults to the element type's (int8, or int16 for the s16 pools).
inline std::vector<AttrSpec> pool_attrs(DType dtype = DType::kInt8) {
  const bool int16 = dtype == DType::kInt16;
  return {{"kernel_size", AttrKind::kInts},
          {"stride", AttrKind::kInts},
          {"padding", AttrKind::kInts},
          {"activation_min", AttrKind::kInt, false, AttrValue(int64_t{int16 ? -32768 : -128})},
          {"activation_max", AttrKind::kInt, false, AttrValue(int64_t{int16 ? 32767 : 127})}};
}

inline Pool2dParams decode_pool(const OpArgs& args, const TensorInfo& input) {
  Pool2dParams p;
  p.input = nchw_dims(input.shape);
  std::tie(p.kernel_h, p.kernel_w) = pair_attr(args, "kernel_size");
  std::tie(p.stride_h, p.stride_w) = pair_attr(args, "stride");
  p.padding = padding_attr(args);
  // The kernel's prepare narrows the range to its element type.
  p.activation_min = int32_attr(args, "activation_min", -32768, 32767);
  p.activation_max = int32_attr(args, "activation_max", -32768, 32767);
  p.output = pool2d_output_dims(p);
  return p;
}

// Validates with the kernel's prepare; output keeps the input's qparams (pools do not rescale).
template <typename Prepare>
std::vector<TensorInfo> infer_pool(const InferContext& ctx, Prepare prepare,
                                   DType dtype = DType::kInt8) {
  require_int8_nchw(ctx, 0, dtype);
  const Pool2dParams p = decode_pool(ctx, ctx.input(0));
  check_kernel(ctx, prepare(p));
  TensorInfo out = make_info(dtype, {p.output.n, p.output.c, p.output.h, p.output.w});
  out.dim_order = channels_last_dim_order(4);
  out.qparams = passthrough_qparams(ctx.input(0));
  return {out};
}

inline EncodeFn encode_pool(fb::KernelId kernel_id) {
  return [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(kernel_id, program::encode_pool2d(b.fbb(), decode_pool(node, node.input(0))));
  };
}

// The descriptor of a cortex_m pool of T (int8 or int16) elements: input `input`, the pool
// attributes, the activation clamp fused, checked by the kernel's `prepare` and encoded as
// `kernel_id`. The interpreter runs `run(params, input, output)` on NHWC copies of its NCHW tensors.
template <typename T, typename Prepare, typename Run>
OpSchema pool_schema(const char* name, Prepare prepare, Run run, fb::KernelId kernel_id) {
  constexpr DType dtype = std::is_same_v<T, int16_t> ? DType::kInt16 : DType::kInt8;
  OpSchema s;
  s.name = name;
  s.fuses_activation = true;
  s.inputs = {{"input"}};
  s.attrs = pool_attrs(dtype);
  s.infer = [prepare](const InferContext& ctx) { return infer_pool(ctx, prepare, dtype); };
  s.kernel = [run](const KernelContext& ctx) {
    const Pool2dParams p = decode_pool(ctx, ctx.input(0).info());
    const std::vector<T> input = nchw_to_nhwc_as<T>(ctx.input(0));
    std::vector<T> output(static_cast<size_t>(p.output.elements()));
    run(p, input.data(), output.data());
    nhwc_to_nchw_as(output, ctx.output());
  };
  s.encode = encode_pool(kernel_id);
  return s;
}

}  // namespace cortexm::ops
