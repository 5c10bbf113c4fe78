// What the data-movement ops that copy bytes with a portable kernel share (permute, slice, select,
// split, reflection and constant padding, nearest upsampling): one input `self` of any dtype whose
// per-tensor qparams the outputs keep, and a kernel that takes the input's shape and element size.
#pragma once

#include <utility>
#include <vector>

#include "ops/portable_call.h"

namespace cortexm::ops {

// The descriptor: input `self`, `attrs`, data movement at the input's qparams. encode, infer and
// kernel are each op's.
inline OpSchema moved_bytes_schema(const char* name, std::vector<AttrSpec> attrs) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = std::move(attrs);
  s.is_data_movement = true;
  s.keeps_qparams = true;
  return s;
}

// Runs a portable kernel from input 0 to output 0. `params` holds the op's own fields; this sets
// the input's shape and element size, and a prepare error names `kernel` and the node.
template <typename Params>
void run_moved_bytes(const KernelContext& ctx, const char* kernel, Params params,
                     Error (*prepare)(const Params&, portable::Shape*),
                     void (*run)(const Params&, const void*, void*)) {
  const Tensor& in = ctx.input(0);
  params.input = portable_shape(ctx, in.shape());
  params.element_size = element_size(in);
  check_portable(ctx, kernel, prepare(params, nullptr));
  run(params, in.raw(), ctx.output().raw());
}

}  // namespace cortexm::ops
