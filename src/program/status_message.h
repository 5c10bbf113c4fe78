// Host sentences for runtime Status values: "program file: ops[3] ('conv_2', QuantizedConv2d):
// params.shifts.size = 5: must equal the output channels".
#pragma once

#include <string>

#include "runtime/program.h"

namespace cortexm::program {

// `buffer` is the program the status came from: when its structure verified, ops and tensors
// are named. origin prefixes the sentence (a path, or "program").
std::string status_message(const runtime::Status& status, const void* buffer, size_t size,
                           const std::string& origin);

}  // namespace cortexm::program
