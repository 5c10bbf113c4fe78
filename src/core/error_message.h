// Host-side sentence for a kernel Error: "quantized_conv2d: requantize_shifts[3] = 31 must be in [-31, 30]".
#pragma once

#include <string>

#include "cortexm/kernels/status.h"

namespace cortexm {

std::string error_message(const char* op, const Error& error);

}  // namespace cortexm
