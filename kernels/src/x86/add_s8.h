// The host's x86 quantized add over contiguous runs, bit for bit the scalar add_one. Built only for
// x86-64 hosts (CORTEXM_HOST_X86).
#pragma once

#include "cortexm/kernels/quantized_add.h"

namespace cortexm::x86 {

// out[i] = add(a[i], b[i]) for i in [0, count).
void add_s8_avx512(const AddParams& p, const int8_t* a, const int8_t* b, int8_t* out, int32_t count);

}  // namespace cortexm::x86
