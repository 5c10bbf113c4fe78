// Shapes of NHWC tensors as kernel dims and the checks shared by the op prepare functions.
#pragma once

#include "cortexm/kernels/conv_params.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

inline Dims4 nhwc_dims(const TensorView& t) {
  return {static_cast<int32_t>(t.shape[0]), static_cast<int32_t>(t.shape[2]),
          static_cast<int32_t>(t.shape[3]), static_cast<int32_t>(t.shape[1])};
}

inline Dims4 dims4_of(const TensorView& t) {
  return {static_cast<int32_t>(t.shape[0]), static_cast<int32_t>(t.shape[1]),
          static_cast<int32_t>(t.shape[2]), static_cast<int32_t>(t.shape[3])};
}

// Rank-4 NCHW tensor of `dtype` with NHWC bytes, extents within int32.
Status require_nhwc(const OpContext& ctx, const char* field, const TensorView& t, DType dtype);
// Per-channel multipliers and shifts: both present with `count` entries.
Status require_requantize(const OpContext& ctx, const flatbuffers::Vector<int32_t>* multipliers,
                          const flatbuffers::Vector<int32_t>* shifts, int64_t count);
// Weights and bias: int8 constant-or-arena tensor of `shape`, int32 bias [count] when present.
Status require_bias(const OpContext& ctx, int32_t input, int64_t count);
// The op's kernel on this runtime takes `bytes` of scratch (OpContext::scratch).
Status require_scratch(const OpContext& ctx, size_t bytes);

}  // namespace cortexm::runtime
