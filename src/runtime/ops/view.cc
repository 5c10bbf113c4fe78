// View (view_copy, squeeze_copy, unsqueeze_copy): the same logical elements in a new shape. When
// the planner aliases output and input (same bytes, both contiguous) it does nothing.
#include "runtime/op_context.h"

namespace cortexm::runtime {

Status prepare_view(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  if (in.dtype != out.dtype) return ctx.fail("output.dtype", static_cast<int64_t>(out.dtype), "must be the input's");
  if (in.numel() != out.numel()) return ctx.fail("output.numel", out.numel(), "must be the input's");
  return kStatusOk;
}

void run_view(const OpContext& ctx) { copy_logical(ctx.input(0), ctx.output()); }

}  // namespace cortexm::runtime
