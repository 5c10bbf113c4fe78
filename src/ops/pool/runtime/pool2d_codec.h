// The params of the pooling kernels (quantized_avg_pool2d, quantized_max_pool2d) <->
// fb::Pool2dParams. The input and output dims are not stored: they come from the tensors.
#pragma once

#include "cortexm/kernels/pool_params.h"
#include "program/program_generated.h"

namespace cortexm::program {

inline flatbuffers::Offset<fb::Pool2dParams> encode_pool2d(flatbuffers::FlatBufferBuilder& b,
                                                           const Pool2dParams& p) {
  fb::Pool2dParamsBuilder t(b);
  t.add_kernel_h(p.kernel_h);
  t.add_kernel_w(p.kernel_w);
  t.add_stride_h(p.stride_h);
  t.add_stride_w(p.stride_w);
  t.add_pad_top(p.padding.top);
  t.add_pad_left(p.padding.left);
  t.add_pad_bottom(p.padding.bottom);
  t.add_pad_right(p.padding.right);
  t.add_activation_min(p.activation_min);
  t.add_activation_max(p.activation_max);
  return t.Finish();
}

// Fills p from the table but its dims.
inline void decode_pool2d(const fb::Pool2dParams& t, Pool2dParams* p) {
  p->kernel_h = t.kernel_h();
  p->kernel_w = t.kernel_w();
  p->stride_h = t.stride_h();
  p->stride_w = t.stride_w();
  p->padding = {t.pad_top(), t.pad_left(), t.pad_bottom(), t.pad_right()};
  p->activation_min = t.activation_min();
  p->activation_max = t.activation_max();
}

}  // namespace cortexm::program
