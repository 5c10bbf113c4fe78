// QuantizedBatchMatmul (arm_batch_matmul_s8 arithmetic): lhs [B, M, K], rhs transposed [B, N, K],
// output [B, M, N], all contiguous int8; scratch holds one int32 sum per rhs row.
// QuantizedBatchMatmulS16 (arm_batch_matmul_s16): the same shapes in int16, no scratch.
#include "cortexm/kernels/quantized_batch_matmul.h"

#include "cortexm/kernels/kernel_isa.h"
#include "ops/linear/runtime/batch_matmul_codec.h"
#include "ops/conv/runtime/conv_decode.h"

namespace cortexm::runtime {

namespace {

BatchMatmulParams decode(const OpContext& ctx) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1);
  BatchMatmulParams p;
  p.batch = static_cast<int32_t>(lhs.shape[0]);
  p.lhs_rows = static_cast<int32_t>(lhs.shape[1]);
  p.rhs_rows = static_cast<int32_t>(rhs.shape[1]);
  p.cols = static_cast<int32_t>(lhs.shape[2]);
  program::decode_batch_matmul(*ctx.op.params_as_MulParams(), &p);
  return p;
}

Status require_matrix_batch(const OpContext& ctx, const char* field, const TensorView& t,
                            DType dtype) {
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, dtype));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, field, t, 3));
  for (int32_t d = 0; d < 3; ++d)
    if (t.shape[d] < 1 || t.shape[d] > INT32_MAX) return ctx.fail(field, t.shape[d], "extent must be in [1, 2^31)", d);
  if (!t.is_contiguous()) return ctx.unsupported(field, 0, "must be contiguous");
  return kStatusOk;
}

// The tensors' dtypes, ranks, extents and contiguity, and the shapes agreeing.
Status require_shapes(const OpContext& ctx, DType dtype) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_matrix_batch(ctx, "lhs", lhs, dtype));
  CORTEXM_RETURN_IF_STATUS(require_matrix_batch(ctx, "rhs", rhs, dtype));
  CORTEXM_RETURN_IF_STATUS(require_matrix_batch(ctx, "output", out, dtype));
  if (rhs.shape[0] != lhs.shape[0]) return ctx.fail("rhs.shape", rhs.shape[0], "must be lhs's batch", 0);
  if (rhs.shape[2] != lhs.shape[2]) return ctx.fail("rhs.shape", rhs.shape[2], "must be lhs's columns (K)", 2);
  if (out.shape[0] != lhs.shape[0]) return ctx.fail("output.shape", out.shape[0], "must be lhs's batch", 0);
  if (out.shape[1] != lhs.shape[1]) return ctx.fail("output.shape", out.shape[1], "must be lhs's rows (M)", 1);
  if (out.shape[2] != rhs.shape[1]) return ctx.fail("output.shape", out.shape[2], "must be rhs's rows (N)", 2);
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_batch_matmul(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_shapes(ctx, DType::kInt8));
  const BatchMatmulParams p = decode(ctx);
  const Error error = quantized_batch_matmul_prepare(p);
  if (!error.ok()) return ctx.fail(error);
  return require_scratch(ctx, quantized_batch_matmul_scratch_size(p, kKernelIsa));
}

void run_quantized_batch_matmul(const OpContext& ctx) {
  const BatchMatmulParams p = decode(ctx);
  quantized_batch_matmul(p, reinterpret_cast<const int8_t*>(ctx.input(0).data),
                         reinterpret_cast<const int8_t*>(ctx.input(1).data),
                         reinterpret_cast<int8_t*>(ctx.output().data),
                         ctx.scratch(quantized_batch_matmul_scratch_size(p, kKernelIsa)));
}

Status prepare_quantized_batch_matmul_s16(const OpContext& ctx) {
  CORTEXM_RETURN_IF_STATUS(require_shapes(ctx, DType::kInt16));
  const Error error = quantized_batch_matmul_s16_prepare(decode(ctx));
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_batch_matmul_s16(const OpContext& ctx) {
  quantized_batch_matmul_s16(decode(ctx), reinterpret_cast<const int16_t*>(ctx.input(0).data),
                             reinterpret_cast<const int16_t*>(ctx.input(1).data),
                             reinterpret_cast<int16_t*>(ctx.output().data));
}

}  // namespace cortexm::runtime
