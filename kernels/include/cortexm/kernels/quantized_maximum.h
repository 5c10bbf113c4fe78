// cortex_m.quantized_maximum: elementwise maximum of two int8 tensors with numpy broadcasting, inputs
// rescaled to the output's qparams. Declared with its twin in minmax_params.h (the arithmetic is
// described there).
#pragma once

#include "cortexm/kernels/minmax_params.h"

namespace cortexm {

inline Error quantized_maximum_prepare(const MinMaxParams& params) { return minmax_prepare(params); }

}  // namespace cortexm
