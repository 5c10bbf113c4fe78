// Checks shared by the op prepare functions.
#include "cortexm/kernels/kernel_isa.h"
#include "ops/conv/runtime/conv_decode.h"

namespace cortexm::runtime {

Status require_dtype(const OpContext& ctx, const char* field, const TensorView& t, DType dtype) {
  if (t.dtype != dtype)
    return ctx.fail(field, static_cast<int64_t>(t.dtype), "has the wrong dtype for this kernel");
  return kStatusOk;
}

Status require_rank(const OpContext& ctx, const char* field, const TensorView& t, int32_t rank) {
  if (t.rank != rank) return ctx.fail(field, t.rank, "has the wrong rank for this kernel");
  return kStatusOk;
}

Status require_rank_le(const OpContext& ctx, const char* field, const TensorView& t, int32_t rank) {
  if (t.rank > rank) return ctx.fail(field, t.rank, "has a rank this kernel does not support");
  return kStatusOk;
}

Status require_same_shape(const OpContext& ctx, const char* field, const TensorView& t,
                          const TensorView& like) {
  if (t.rank != like.rank) return ctx.fail(field, t.rank, "rank must match the op's input");
  for (int32_t d = 0; d < t.rank; ++d)
    if (t.shape[d] != like.shape[d])
      return ctx.fail(field, t.shape[d], "shape must match the op's input", d);
  return kStatusOk;
}

Status require_input_dtype(const OpContext& ctx, bool integer) {
  const TensorView in = ctx.input(0);
  if (!integer) return require_dtype(ctx, "input", in, DType::kFloat32);
  if (in.dtype != DType::kInt8 && in.dtype != DType::kInt16)
    return ctx.unsupported("input.dtype", static_cast<int64_t>(in.dtype), "must be int8 or int16");
  return kStatusOk;
}

Status require_contiguous_same_shape(const OpContext& ctx, DType dtype, const char* op) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, dtype));
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, in));
  if (!in.is_contiguous() || !out.is_contiguous()) return ctx.unsupported("input", 0, op);
  return kStatusOk;
}

Status require_row_operand(const OpContext& ctx, int32_t input, const char* field, DType dtype, int64_t row_size) {
  if (!ctx.has_input(input)) return kStatusOk;
  const TensorView t = ctx.input(input);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, dtype));
  if (t.numel() != row_size) return ctx.fail(field, t.numel(), "must have one value per element of a row");
  if (!t.is_contiguous()) return ctx.unsupported(field, 0, "must be contiguous");
  return kStatusOk;
}

Status normalize_dim(const OpContext& ctx, const char* field, int64_t dim, int32_t rank,
                     int32_t* out) {
  if (dim < -rank || dim >= rank || rank == 0)
    return ctx.fail(field, dim, "must be a dim of the input (in [-rank, rank))");
  *out = static_cast<int32_t>(dim < 0 ? dim + rank : dim);
  return kStatusOk;
}

Status require_nhwc(const OpContext& ctx, const char* field, const TensorView& t, DType dtype) {
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, field, t, dtype));
  CORTEXM_RETURN_IF_STATUS(require_rank(ctx, field, t, 4));
  for (int32_t d = 0; d < 4; ++d)
    if (t.shape[d] < 1 || t.shape[d] > INT32_MAX)
      return ctx.fail(field, t.shape[d], "extent must be in [1, 2^31)", d);
  if (!t.is_channels_last())
    return ctx.unsupported(field, 0, "must be laid out channels-last (dim order [0, 2, 3, 1])");
  return kStatusOk;
}

Status require_requantize(const OpContext& ctx, const flatbuffers::Vector<int32_t>* multipliers,
                          const flatbuffers::Vector<int32_t>* shifts, int64_t count) {
  const int64_t m = multipliers ? multipliers->size() : 0, s = shifts ? shifts->size() : 0;
  if (m != count) return ctx.fail("params.multipliers.size", m, "must equal the output channels");
  if (s != count) return ctx.fail("params.shifts.size", s, "must equal the output channels");
  return kStatusOk;
}

Status require_bias(const OpContext& ctx, int32_t input, int64_t count) {
  if (!ctx.has_input(input)) return kStatusOk;
  const TensorView bias = ctx.input(input);
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "bias", bias, DType::kInt32));
  if (bias.rank != 1 || bias.shape[0] != count)
    return ctx.fail("bias.shape", bias.rank == 1 ? bias.shape[0] : bias.rank,
                    "must be [output channels]");
  return kStatusOk;
}

namespace {
constexpr size_t kMaxExtraScratch = size_t{1} << 28;
}  // namespace

// A planned region at least `bytes` long is used in place (4-byte aligned); a shorter one (the
// program was planned for another isa's kernel) makes the op use the region after the arena.
Status require_scratch(const OpContext& ctx, size_t bytes) {
  if (ctx.op.scratch_size() >= bytes) {
    if (bytes && ctx.op.scratch_offset() % 4 != 0)
      return ctx.fail("scratch_offset", static_cast<int64_t>(ctx.op.scratch_offset()), "must be 4-byte aligned");
    return kStatusOk;
  }
  if (bytes > kMaxExtraScratch)
    return ctx.fail("scratch_size", static_cast<int64_t>(ctx.op.scratch_size()),
                    "is smaller than this runtime's kernel needs, by more than it can add after the arena");
  if (ctx.extra_scratch && *ctx.extra_scratch < bytes) *ctx.extra_scratch = bytes;
  return kStatusOk;
}

}  // namespace cortexm::runtime
