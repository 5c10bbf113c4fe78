// What the binary family's ops.def lines name: the binary kernels and binary.h's prepare / run
// over them (the generated runtime/ops/ops.h includes every family's runtime/ops.h).
#pragma once

#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"
#include "ops/binary/runtime/binary.h"
