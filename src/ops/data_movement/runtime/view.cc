// View (view_copy, squeeze_copy, unsqueeze_copy): the same logical elements in a new shape. Both
// contiguous: the portable copy (nothing moves when the planner aliased them); in place on the
// same bytes (an aliased view of another dim order): nothing; else a strided copy.
#include "cortexm/portable/copy.h"

#include "runtime/op_context.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

Status prepare_view(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  if (in.numel() != out.numel()) return ctx.fail("output.numel", out.numel(), "must be the input's");
  return kStatusOk;
}

namespace {

using ViewState = LayoutState<portable::CopyParams>;

// On the same bytes (the planner aliased them; the loader checked they hold the same elements):
// nothing moves.
void init_view(const OpContext& ctx, ViewState* s) {
  const TensorView in = ctx.input(0), out = ctx.output();
  if (bind_layout(ctx, s) && same_bytes(in, out)) {
    s->mode = ViewState::kNothing;
  } else if (in.is_contiguous() && out.is_contiguous()) {
    s->mode = ViewState::kPortable;
    s->params.numel = in.numel();
    s->params.element_size = static_cast<int32_t>(in.element_size());
  }
}

}  // namespace

extern const OpState view_state = kOpState<ViewState, init_view, 40>;

void run_view(const OpContext& ctx) {
  const auto& s = state_of<ViewState>(ctx);
  if (s.mode == ViewState::kNothing) return;
  if (s.mode == ViewState::kPortable)
    portable::copy(s.params, ctx.data(s.input), ctx.data(s.output));
  else
    copy_logical(ctx.input(0), ctx.output());
}

}  // namespace cortexm::runtime
