// FloatBinary (float fallback): an elementwise float32 binary op through the portable kernels the
// interpreter also runs, with numpy broadcasting. Contiguous tensors (or tensors of one shape and
// layout) run the portable loop over their bytes; other layouts walk the output's logical indices
// through the strides, one element per portable call (the same formula).
#include "cortexm/portable/binary.h"

#include "ops/binary/runtime/float_binary_codec.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

portable::Shape flat(int64_t numel) {
  portable::Shape s;
  s.rank = 1;
  s.dims[0] = numel;
  return s;
}

bool one_layout(const OpContext& ctx) {
  return ctx.input(0).same_layout(ctx.output()) && ctx.input(1).same_layout(ctx.output());
}

// Element strides of `in` read at the output's logical index: aligned to the right, 0 where it
// broadcasts.
void broadcast_strides(const TensorView& in, int32_t out_rank, int64_t* strides) {
  for (int32_t d = 0; d < out_rank; ++d) {
    const int32_t k = d - (out_rank - in.rank);
    strides[d] = k < 0 || in.shape[k] == 1 ? 0 : in.strides[k];
  }
}

void run_strided(const OpContext& ctx, const portable::BinaryParams& element) {
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  int64_t ls[kMaxRank], rs[kMaxRank], index[kMaxRank] = {};
  broadcast_strides(lhs, out.rank, ls);
  broadcast_strides(rhs, out.rank, rs);
  const auto* a = reinterpret_cast<const float*>(lhs.data);
  const auto* b = reinterpret_cast<const float*>(rhs.data);
  auto* o = reinterpret_cast<float*>(out.data);
  int64_t la = 0, rb = 0, oc = 0;  // element offsets of the current index
  for (int64_t n = out.numel(); n > 0; --n) {
    portable::binary_f32(element, a + la, b + rb, o + oc);
    for (int32_t d = out.rank - 1; d >= 0; --d) {  // next logical index, last dim fastest
      la += ls[d], rb += rs[d], oc += out.strides[d];
      if (++index[d] < out.shape[d]) break;
      la -= ls[d] * out.shape[d], rb -= rs[d] * out.shape[d], oc -= out.strides[d] * out.shape[d];
      index[d] = 0;
    }
  }
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
  if (lhs.rank > portable::kMaxDims || rhs.rank > portable::kMaxDims || out.rank > portable::kMaxDims)
    return ctx.unsupported("output.rank", out.rank, "float binary ops take at most 6 dims");
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
  program::decode_float_binary(*ctx.op.params_as_FloatBinaryParams(), &p);
  const TensorView lhs = ctx.input(0), rhs = ctx.input(1), out = ctx.output();
  if (all_contiguous(ctx)) {
    portable::binary_prepare(logical_shape(lhs), logical_shape(rhs), &p);
  } else if (one_layout(ctx)) {
    portable::binary_prepare(flat(out.numel()), flat(out.numel()), &p);
  } else {
    portable::binary_prepare(flat(1), flat(1), &p);
    run_strided(ctx, p);
    return;
  }
  portable::binary_f32(p, reinterpret_cast<const float*>(lhs.data), reinterpret_cast<const float*>(rhs.data),
                       reinterpret_cast<float*>(out.data));
}

}  // namespace cortexm::runtime
