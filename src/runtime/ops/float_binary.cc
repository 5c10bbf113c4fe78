// FloatBinary (float fallback): an elementwise float32 binary op through the portable kernels the
// interpreter also runs. Contiguous tensors broadcast as numpy does; tensors of one shape and one
// other layout (channels-last) run over their bytes.
#include "cortexm/portable/binary.h"

#include "program/params/float_binary.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::Shape flat(int64_t numel) {
  portable::Shape s;
  s.rank = 1;
  s.dims[0] = numel;
  return s;
}

// The kernel's params for this op's tensors; false: a layout it cannot run.
bool params(const OpContext& ctx, portable::BinaryParams* p) {
  if (!program::decode_float_binary(*ctx.op.params_as_FloatBinaryParams(), p)) return false;
  const TensorView a = ctx.input(0), b = ctx.input(1), out = ctx.output();
  if (all_contiguous(ctx)) return portable::binary_prepare(logical_shape(a), logical_shape(b), p).ok();
  if (!a.same_layout(out) || !b.same_layout(out)) return false;
  return portable::binary_prepare(flat(out.numel()), flat(out.numel()), p).ok();
}

}  // namespace

Status prepare_float_binary(const OpContext& ctx) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", lhs, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", rhs, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  portable::BinaryParams p;
  const auto* table = ctx.op.params_as_FloatBinaryParams();
  if (!program::decode_float_binary(*table, &p)) return ctx.fail("params.fn", table->fn(), "must be a known BinaryFn");
  if (!all_contiguous(ctx)) {
    if (!lhs.same_layout(out) || !rhs.same_layout(out))
      return ctx.unsupported("input", 0, "must be contiguous, or share the output's shape and layout");
    return kStatusOk;
  }
  portable::Shape shape;
  const Error error = portable::binary_prepare(logical_shape(lhs), logical_shape(rhs), &p, &shape);
  if (!error.ok()) return ctx.fail(error);
  if (shape.rank != out.rank) return ctx.fail("output.rank", out.rank, "must be the broadcast rank");
  for (int32_t d = 0; d < out.rank; ++d)
    if (shape.dims[d] != out.shape[d]) return ctx.fail("output.shape", out.shape[d], "must be the broadcast shape", d);
  return kStatusOk;
}

void run_float_binary(const OpContext& ctx) {
  portable::BinaryParams p;
  params(ctx, &p);
  portable::binary_f32(p, reinterpret_cast<const float*>(ctx.input(0).data),
                       reinterpret_cast<const float*>(ctx.input(1).data), reinterpret_cast<float*>(ctx.output().data));
}

}  // namespace cortexm::runtime
