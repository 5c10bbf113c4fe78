// The host's x86 depthwise conv (depth multiplier 1), bit for bit the scalar kernel. Built only
// for x86-64 hosts (CORTEXM_HOST_X86).
#pragma once

#include "cortexm/kernels/quantized_depthwise_conv2d.h"

namespace cortexm::x86 {

void depthwise_s8_avx2(const DepthwiseConv2dParams& p, const int8_t* input, const int8_t* filter,
                       const int32_t* bias, int8_t* output);

}  // namespace cortexm::x86
