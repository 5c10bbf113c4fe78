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

void run_view(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  if (in.is_contiguous() && out.is_contiguous()) {
    portable::CopyParams p;
    p.numel = in.numel();
    p.element_size = static_cast<int32_t>(in.element_size());
    portable::copy(p, in.data, out.data);
  } else if (in.data != out.data || !same_bytes(in, out)) {
    copy_logical(in, out);
  }
}

}  // namespace cortexm::runtime
