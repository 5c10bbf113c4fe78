// Permute (permute_copy and _clone_dim_order): output dim i holds input dim dims[i]; the output's
// own dim order decides its bytes, so a clone to channels-last is a permute with identity dims.
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

TensorView permuted_input(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  const auto* dims = ctx.op.params_as_PermuteParams()->dims();
  TensorView v = in;
  for (int32_t i = 0; i < in.rank; ++i) {
    v.shape[i] = in.shape[dims->Get(i)];
    v.strides[i] = in.strides[dims->Get(i)];
  }
  return v;
}

}  // namespace

Status prepare_permute(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const auto* dims = ctx.op.params_as_PermuteParams()->dims();
  if (in.dtype != out.dtype) return ctx.fail("output.dtype", static_cast<int64_t>(out.dtype), "must be the input's");
  const int64_t count = dims ? dims->size() : 0;
  if (count != in.rank) return ctx.fail("params.dims.size", count, "must equal the input rank");
  bool seen[kMaxRank] = {};
  for (int32_t i = 0; i < in.rank; ++i) {
    const uint8_t d = dims->Get(i);
    if (d >= in.rank || seen[d]) return ctx.fail("params.dims", d, "must be a permutation of the input dims", i);
    seen[d] = true;
  }
  return require_same_shape(ctx, "output", out, permuted_input(ctx));
}

void run_permute(const OpContext& ctx) { copy_logical(permuted_input(ctx), ctx.output()); }

}  // namespace cortexm::runtime
