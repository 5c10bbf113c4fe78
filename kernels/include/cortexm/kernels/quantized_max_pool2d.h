// cortex_m.quantized_max_pool2d: maximum over the valid taps, then the activation clamp
// (arm_max_pool_s8); input and output share qparams. quantized_max_pool2d_s16: the same over int16
// (arm_max_pool_s16), the activation range within int16.
#pragma once

#include "cortexm/kernels/pool_params.h"

namespace cortexm {

Error quantized_max_pool2d_prepare(const Pool2dParams& params);

void quantized_max_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output);

void quantized_max_pool2d_reference(const Pool2dParams& params, const int8_t* input,
                                    int8_t* output);

Error quantized_max_pool2d_s16_prepare(const Pool2dParams& params);

void quantized_max_pool2d_s16(const Pool2dParams& params, const int16_t* input, int16_t* output);

void quantized_max_pool2d_s16_reference(const Pool2dParams& params, const int16_t* input,
                                        int16_t* output);

}  // namespace cortexm
