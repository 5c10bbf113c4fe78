// The params of FloatConvolution <-> fb::FloatConvolutionParams: stride, padding, dilation and
// groups of portable::ConvolutionParams; the input and weight shapes come from the tensors.
#pragma once

#include <cstdint>

#include "cortexm/portable/convolution.h"
#include "program/program_generated.h"

namespace cortexm::program {

inline bool fits_int32(int64_t v) { return v >= INT32_MIN && v <= INT32_MAX; }

// false: a field does not fit the table's int32.
inline bool encode_float_convolution(flatbuffers::FlatBufferBuilder& b, const portable::ConvolutionParams& p,
                                     flatbuffers::Offset<fb::FloatConvolutionParams>* out) {
  const int64_t fields[] = {p.stride[0], p.stride[1], p.padding[0], p.padding[1],
                            p.dilation[0], p.dilation[1], p.groups};
  for (int64_t v : fields)
    if (!fits_int32(v)) return false;
  *out = fb::CreateFloatConvolutionParams(
      b, static_cast<int32_t>(p.stride[0]), static_cast<int32_t>(p.stride[1]), static_cast<int32_t>(p.padding[0]),
      static_cast<int32_t>(p.padding[1]), static_cast<int32_t>(p.dilation[0]), static_cast<int32_t>(p.dilation[1]),
      static_cast<int32_t>(p.groups));
  return true;
}

// Fills p but its shapes; portable::convolution_prepare validates the values.
inline void decode_float_convolution(const fb::FloatConvolutionParams& t, portable::ConvolutionParams* p) {
  p->stride[0] = t.stride_h(), p->stride[1] = t.stride_w();
  p->padding[0] = t.pad_h(), p->padding[1] = t.pad_w();
  p->dilation[0] = t.dilation_h(), p->dilation[1] = t.dilation_w();
  p->groups = t.groups();
}

}  // namespace cortexm::program
