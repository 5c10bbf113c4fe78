// Data movement through the portable kernels (shared with the interpreter): they take contiguous
// row-major tensors, so an op runs on them over the tensors' memory-order ("physical") shapes when
// its tensors share one dim order; other layouts take the strided path of each op.
#pragma once

#include "cortexm/portable/shape.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

struct Physical {
  portable::Shape shape;            // extents in memory order
  int32_t order[kMaxRank] = {};     // memory position -> logical dim
  int32_t position[kMaxRank] = {};  // logical dim -> memory position
  int32_t element_size = 1;
};

inline bool physical(const OpContext& ctx, int32_t tensor, Physical* out) {
  const TensorView v = ctx.program.tensor(tensor, nullptr);
  if (v.rank > portable::kMaxDims) return false;
  ctx.program.dim_order(tensor, out->order);
  out->shape.rank = v.rank;
  for (int32_t k = 0; k < v.rank; ++k) {
    out->shape.dims[k] = v.shape[out->order[k]];
    out->position[out->order[k]] = k;
  }
  out->element_size = static_cast<int32_t>(v.element_size());
  return true;
}

inline bool same_order(const Physical& a, const Physical& b) {
  if (a.shape.rank != b.shape.rank) return false;
  for (int32_t k = 0; k < a.shape.rank; ++k)
    if (a.order[k] != b.order[k]) return false;
  return true;
}

inline bool is_identity(const Physical& p) {
  for (int32_t k = 0; k < p.shape.rank; ++k)
    if (p.order[k] != k) return false;
  return true;
}

// Every input and output contiguous, of rank <= 6: the portable kernel runs on the tensors as is.
inline bool all_contiguous(const OpContext& ctx) {
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView t = ctx.input(i);
    if (t.rank > portable::kMaxDims || !t.is_contiguous()) return false;
  }
  for (int32_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorView t = ctx.output(i);
    if (t.rank > portable::kMaxDims || !t.is_contiguous()) return false;
  }
  return true;
}

// A float fallback kernel's check: every input (present) and output float32, contiguous and of
// rank <= 6.
inline Status require_contiguous_float(const OpContext& ctx) {
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorView t = ctx.input(i);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", t, DType::kFloat32));
    CORTEXM_RETURN_IF_STATUS(require_rank_le(ctx, "input", t, portable::kMaxDims));
    if (!t.is_contiguous()) return ctx.unsupported("input", i, "must be contiguous");
  }
  for (int32_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorView t = ctx.output(i);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", t, DType::kFloat32));
    CORTEXM_RETURN_IF_STATUS(require_rank_le(ctx, "output", t, portable::kMaxDims));
    if (!t.is_contiguous()) return ctx.unsupported("output", i, "must be contiguous");
  }
  return kStatusOk;
}

// A data-movement op's output has its input's dtype.
inline Status require_input_dtype(const OpContext& ctx) {
  const DType dtype = ctx.output().dtype;
  if (dtype != ctx.input(0).dtype)
    return ctx.fail("output.dtype", static_cast<int64_t>(dtype), "must be the input's");
  return kStatusOk;
}

// An op that runs its portable kernel when every tensor is contiguous (all_contiguous) and copies
// views otherwise checks the kernel's params only for the first: `kernel_error()` is the kernel's
// prepare of them.
template <class KernelError>
Status check_contiguous_kernel(const OpContext& ctx, KernelError kernel_error) {
  if (!all_contiguous(ctx)) return kStatusOk;
  const Error error = kernel_error();
  return error.ok() ? kStatusOk : ctx.fail(error);
}

inline portable::Shape logical_shape(const TensorView& t) {
  portable::Shape s;
  s.rank = t.rank;
  for (int32_t d = 0; d < t.rank && d < portable::kMaxDims; ++d) s.dims[d] = t.shape[d];
  return s;
}

// The params of a portable data-movement kernel with input 0's logical shape and element size; the
// op's own fields are the caller's.
template <class Params>
Params moved_bytes_params(const OpContext& ctx) {
  Params p;
  p.input = logical_shape(ctx.input(0));
  p.element_size = static_cast<int32_t>(ctx.input(0).element_size());
  return p;
}

// The output's shape must be what the kernel computes.
inline Status require_output_shape(const OpContext& ctx, const portable::Shape& want) {
  const TensorView out = ctx.output();
  if (out.rank != want.rank) return ctx.fail("output.rank", out.rank, "must be the kernel's output rank");
  for (int32_t d = 0; d < want.rank; ++d)
    if (out.shape[d] != want.dims[d]) return ctx.fail("output.shape", out.shape[d], "must be the kernel's output shape", d);
  return kStatusOk;
}

// The state of a layout op (permute, view): nothing to run when the planner put its output on its
// input's bytes, else the portable kernel with `params` or the op's strided copy.
template <class Params>
struct LayoutState {
  enum Mode : uint8_t { kNothing, kPortable, kStrided };
  Params params;
  DataRef input, output;
  Mode mode = kStrided;
};

// Binds the operands; true when the output starts at the input's first byte.
template <class Params>
bool bind_layout(const OpContext& ctx, LayoutState<Params>* s) {
  s->input = ctx.input_ref(0);
  s->output = ctx.output_ref();
  return s->input.base == s->output.base && s->input.offset == s->output.offset;
}

}  // namespace cortexm::runtime
