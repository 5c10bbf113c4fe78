// The params of FloatPool2d <-> fb::FloatPool2dParams: the window of portable::Pool2dParams (and
// AvgPool2dParams' divisor fields); the input shape, and an adaptive pool's output size, come from
// the tensors.
#pragma once

#include <cstdint>

#include "cortexm/portable/pool2d.h"
#include "ops/conv/runtime/float_convolution_codec.h"
#include "program/program_generated.h"

namespace cortexm::program {

// false: a field does not fit the table's int32.
inline bool encode_float_pool2d(flatbuffers::FlatBufferBuilder& b, fb::Pool2dKind kind,
                                const portable::AvgPool2dParams& p,
                                flatbuffers::Offset<fb::FloatPool2dParams>* out) {
  const portable::Pool2dParams& w = p.pool;
  const int64_t fields[] = {w.kernel_h, w.kernel_w,   w.stride_h,   w.stride_w,        w.pad_h,
                            w.pad_w,    w.dilation_h, w.dilation_w, p.divisor_override};
  for (int64_t v : fields)
    if (!fits_int32(v)) return false;
  *out = fb::CreateFloatPool2dParams(
      b, kind, static_cast<int32_t>(w.kernel_h), static_cast<int32_t>(w.kernel_w), static_cast<int32_t>(w.stride_h),
      static_cast<int32_t>(w.stride_w), static_cast<int32_t>(w.pad_h), static_cast<int32_t>(w.pad_w),
      static_cast<int32_t>(w.dilation_h), static_cast<int32_t>(w.dilation_w), w.ceil_mode, p.count_include_pad,
      static_cast<int32_t>(p.divisor_override));
  return true;
}

// Fills p but its input shape; the portable prepare functions validate the values.
inline void decode_float_pool2d(const fb::FloatPool2dParams& t, portable::AvgPool2dParams* p) {
  portable::Pool2dParams& w = p->pool;
  w.kernel_h = t.kernel_h(), w.kernel_w = t.kernel_w();
  w.stride_h = t.stride_h(), w.stride_w = t.stride_w();
  w.pad_h = t.pad_h(), w.pad_w = t.pad_w();
  w.dilation_h = t.dilation_h(), w.dilation_w = t.dilation_w();
  w.ceil_mode = t.ceil_mode();
  p->count_include_pad = t.count_include_pad();
  p->divisor_override = t.divisor_override();
}

}  // namespace cortexm::program
