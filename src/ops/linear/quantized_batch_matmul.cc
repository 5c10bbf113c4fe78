// cortex_m.quantized_batch_matmul: lhs [B, M, K] x rhs [B, N, K] (transposed) -> [B, M, N] int8,
// arm_batch_matmul_s8 arithmetic; the kernel's prepare step is the validation.
// cortex_m.quantized_batch_matmul_s16: the same shapes in symmetric int16 (arm_batch_matmul_s16).
#include "cortexm/kernels/quantized_batch_matmul.h"

#include "ops/cortex_m_util.h"
#include "ops/linear/runtime/batch_matmul_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

BatchMatmulParams decode(const OpArgs& args, const TensorInfo& lhs, const TensorInfo& rhs) {
  const bool int16 = lhs.dtype == DType::kInt16;
  BatchMatmulParams p;
  p.batch = static_cast<int32_t>(lhs.shape[0]);
  p.lhs_rows = static_cast<int32_t>(lhs.shape[1]);
  p.rhs_rows = static_cast<int32_t>(rhs.shape[1]);
  p.cols = static_cast<int32_t>(lhs.shape[2]);
  p.lhs_offset = int32_attr(args, "lhs_offset", int16 ? 0 : -127, int16 ? 0 : 128);
  p.rhs_offset = int32_attr(args, "rhs_offset", int16 ? 0 : -127, int16 ? 0 : 128);
  p.output_offset = int32_attr(args, "output_offset", int16 ? 0 : -128, int16 ? 0 : 127);
  p.multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.shift = int32_attr(args, "output_shift", -31, 30);
  p.activation_min = int32_attr(args, "activation_min", int16 ? -32768 : -128, int16 ? 32767 : 127);
  p.activation_max = int32_attr(args, "activation_max", int16 ? -32768 : -128, int16 ? 32767 : 127);
  return p;
}

template <class T>
constexpr DType kDType = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class T, Error (*Prepare)(const BatchMatmulParams&)>
std::vector<TensorInfo> infer(const InferContext& ctx) {
  check_scratch_bytes(ctx);
  for (size_t i = 0; i < 2; ++i) {
    require_rank(ctx, i, {3});
    require_dtype(ctx, i, {kDType<T>});
    for (int64_t d : ctx.input(i).shape)
      if (d < 1 || d > INT32_MAX)
        ctx.fail("input " + std::to_string(i) + " shape " + shape_to_string(ctx.input(i).shape) +
                 " has an extent outside [1, 2^31)");
  }
  const auto& a = ctx.input(0).shape;
  const auto& b = ctx.input(1).shape;
  if (a[0] != b[0] || a[2] != b[2])
    ctx.fail("lhs " + shape_to_string(a) + " and rhs " + shape_to_string(b) +
             " must be [B, M, K] and [B, N, K]");
  check_kernel(ctx, Prepare(decode(ctx, ctx.input(0), ctx.input(1))));
  return {make_info(kDType<T>, {a[0], a[1], b[1]})};
}

void kernel(const KernelContext& ctx) {
  const BatchMatmulParams p = decode(ctx, ctx.input(0).info(), ctx.input(1).info());
  std::vector<uint8_t> scratch(quantized_batch_matmul_scratch_size(p, Isa::kScalar) + 4);
  void* aligned = scratch.data() + (4 - reinterpret_cast<uintptr_t>(scratch.data()) % 4) % 4;
  quantized_batch_matmul(p, ctx.input(0).data<int8_t>(), ctx.input(1).data<int8_t>(),
                         ctx.output().data<int8_t>(), aligned);
}

void kernel_s16(const KernelContext& ctx) {
  const BatchMatmulParams p = decode(ctx, ctx.input(0).info(), ctx.input(1).info());
  quantized_batch_matmul_s16(p, ctx.input(0).data<int16_t>(), ctx.input(1).data<int16_t>(),
                             ctx.output().data<int16_t>());
}

template <class T>
OpSchema batch_matmul_schema(const char* name, fb::KernelId kernel_id) {
  constexpr bool kInt16 = sizeof(T) == 2;
  OpSchema s;
  s.name = name;
  s.inputs = {{"lhs"}, {"rhs"}};
  for (const char* attr :
       {"lhs_offset", "rhs_offset", "output_offset", "output_multiplier", "output_shift"})
    s.attrs.push_back({attr, AttrKind::kInt});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false, AttrValue(int64_t{kInt16 ? -32768 : -128})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false, AttrValue(int64_t{kInt16 ? 32767 : 127})});
  s.attrs.push_back(scratch_bytes_attr());
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    return program::encoded(kernel_id,
                            program::encode_batch_matmul(b.fbb(), decode(node, node.input(0), node.input(1))));
  };
  return s;
}

}  // namespace

void register_cortex_m_quantized_batch_matmul(OpRegistry& registry) {
  OpSchema s = batch_matmul_schema<int8_t>("cortex_m.quantized_batch_matmul.default",
                                           fb::KernelId_QuantizedBatchMatmul);
  s.infer = infer<int8_t, quantized_batch_matmul_prepare>;
  s.kernel = kernel;
  s.scratch = [](const NodeContext& node, Isa isa) {
    return quantized_batch_matmul_scratch_size(decode(node, node.input(0), node.input(1)), isa);
  };
  registry.add(std::move(s));
}

void register_cortex_m_quantized_batch_matmul_s16(OpRegistry& registry) {
  OpSchema s = batch_matmul_schema<int16_t>("cortex_m.quantized_batch_matmul_s16.default",
                                            fb::KernelId_QuantizedBatchMatmulS16);
  s.infer = infer<int16_t, quantized_batch_matmul_s16_prepare>;
  s.kernel = kernel_s16;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
