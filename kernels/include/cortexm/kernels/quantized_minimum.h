// cortex_m.quantized_minimum: elementwise minimum of two int8 tensors with numpy broadcasting, inputs
// rescaled to the output's qparams (see minmax_params.h for the arithmetic).
#pragma once

#include "cortexm/kernels/minmax_params.h"

namespace cortexm {

inline Error quantized_minimum_prepare(const MinMaxParams& params) { return minmax_prepare(params); }

void quantized_minimum(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                      int8_t* output);

void quantized_minimum_reference(const MinMaxParams& params, const int8_t* lhs, const int8_t* rhs,
                                int8_t* output);

}  // namespace cortexm
