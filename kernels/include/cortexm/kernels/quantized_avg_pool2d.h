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

// The code paths of quantized_avg_pool2d, for firmware that links only the paths its program
// takes (quantized_avg_pool2d_on_paths): windows of at most 256 taps (int16 sums) or larger.
enum AvgPool2dPath : uint32_t {
  kAvgPool2dNarrowSums = 1u << 0,
  kAvgPool2dWideSums = 1u << 1,
  kAvgPool2dAllPaths = (1u << 2) - 1,
};

// The path a call with these params takes (an AvgPool2dPath bit).
uint32_t quantized_avg_pool2d_paths(const Pool2dParams& params);

// quantized_avg_pool2d with only the code of the AvgPool2dPath bits Paths (0 to
// kAvgPool2dAllPaths): the same results for a call whose quantized_avg_pool2d_paths(params) are
// in Paths; a call taking another path writes nothing. Only the MVE variant has separate paths.
template <uint32_t Paths>
void quantized_avg_pool2d_on_paths(const Pool2dParams& params, const int8_t* input, int8_t* output,
                                   void* scratch);

void quantized_avg_pool2d_reference(const Pool2dParams& params, const int8_t* input,
                                    int8_t* output);

}  // namespace cortexm
