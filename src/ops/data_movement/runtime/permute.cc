// Permute (permute_copy and _clone_dim_order): output dim i holds input dim dims[i]; the output's
// own dim order decides its bytes, so a clone to channels-last is a permute with identity dims.
// Runs as one portable permute between the two memory orders; a permute the planner aliased (it
// keeps every element's bytes) runs as nothing.
#include "cortexm/portable/permute.h"

#include "runtime/ops/portable_layout.h"

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

// Memory position k of the output holds output dim order_out[k] = input dim dims[order_out[k]],
// which sits at the input's memory position position_in[...].
bool portable_params(const OpContext& ctx, portable::PermuteParams* p) {
  Physical in, out;
  if (!physical(ctx, ctx.op.inputs()->Get(0), &in) || !physical(ctx, ctx.op.outputs()->Get(0), &out))
    return false;
  const auto* dims = ctx.op.params_as_PermuteParams()->dims();
  p->input = in.shape;
  p->element_size = in.element_size;
  for (int32_t k = 0; k < out.shape.rank; ++k) p->perm[k] = in.position[dims->Get(out.order[k])];
  return true;
}

}  // namespace

Status prepare_permute(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const auto* dims = ctx.op.params_as_PermuteParams()->dims();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  const int64_t count = dims ? dims->size() : 0;
  if (count != in.rank) return ctx.fail("params.dims.size", count, "must equal the input rank");
  bool seen[kMaxRank] = {};
  for (int32_t i = 0; i < in.rank; ++i) {
    const uint8_t d = dims->Get(i);
    if (d >= in.rank || seen[d]) return ctx.fail("params.dims", d, "must be a permutation of the input dims", i);
    seen[d] = true;
  }
  CORTEXM_RETURN_IF_STATUS(require_same_shape(ctx, "output", out, permuted_input(ctx)));
  portable::PermuteParams p;
  if (portable_params(ctx, &p)) {
    const Error error = portable::permute_prepare(p);
    if (!error.ok()) return ctx.fail(error);
  }
  return kStatusOk;
}

namespace {

using PermuteState = LayoutState<portable::PermuteParams>;

void init_permute(const OpContext& ctx, PermuteState* s) {
  // On its input's bytes only when it keeps every element in place (the loader checks): nothing moves.
  if (bind_layout(ctx, s))
    s->mode = PermuteState::kNothing;
  else if (portable_params(ctx, &s->params))
    s->mode = PermuteState::kPortable;
}

}  // namespace

extern const OpState permute_state = kOpState<PermuteState, init_permute, 112>;

void run_permute(const OpContext& ctx) {
  const auto& s = state_of<PermuteState>(ctx);
  if (s.mode == PermuteState::kNothing) return;
  if (s.mode == PermuteState::kPortable)
    portable::permute(s.params, ctx.data(s.input), ctx.data(s.output));
  else
    copy_logical(permuted_input(ctx), ctx.output());
}

}  // namespace cortexm::runtime
