#include "cortexm/kernels/quantized_activation_s16.h"

namespace cortexm {

// Segment and position of each input spelled out, rounding the interpolation half up.
void quantized_activation_s16_reference(const ActivationS16Params& p, const int16_t* input,
                                        int16_t* output) {
  for (int64_t i = 0; i < p.count; ++i) {
    const int32_t from_bottom = int32_t{input[i]} + 32768;  // 0 .. 65535
    const int32_t segment = from_bottom / 128;
    const int32_t position = from_bottom % 128;
    const int32_t lo = p.table[segment], hi = p.table[segment + 1];
    const int32_t scaled = (hi - lo) * position;  // /128, rounded half up
    const int32_t floor_div = scaled >= -64 ? (scaled + 64) / 128 : -((-(scaled + 64) + 127) / 128);
    output[i] = static_cast<int16_t>(lo + floor_div);
  }
}

}  // namespace cortexm
