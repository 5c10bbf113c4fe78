// cortex_m.quantized_avg_pool2d: averages the valid (unpadded) taps only and rounds halves away
// from zero (arm_avgpool_s8 arithmetic); input and output share qparams.
#pragma once

#include <cstddef>

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/pool_params.h"

namespace cortexm {

Error quantized_avg_pool2d_prepare(const Pool2dParams& params);

// Bytes of scratch quantized_avg_pool2d needs: none on every isa (the sums live on the stack or in
// registers). The scratch argument is unused; it may be null.
size_t quantized_avg_pool2d_scratch_size(const Pool2dParams& params, Isa isa);

void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch);

void quantized_avg_pool2d_reference(const Pool2dParams& params, const int8_t* input,
                                    int8_t* output);

}  // namespace cortexm
