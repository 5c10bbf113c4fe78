// cortex_m.quantized_linear_s16: the 16x8 fully connected layer (arm_fully_connected_s16 /
// arm_fully_connected_per_channel_s16 arithmetic). int16 input [batches, K] with zero point 0,
// int8 weights [C_out, K] with zero point 0, int64 bias [C_out], 64-bit accumulator, requantize by
// arm_nn_requantize_s64 with the reduced 16-bit multiplier (requantize.h), one multiplier per tensor
// or per output channel, int16 output with zero point 0 clamped to [activation_min, activation_max].
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/status.h"

namespace cortexm {

struct LinearS16Params {
  int32_t batches = 1;          // product of the input's leading dims
  int32_t input_features = 1;   // K
  int32_t output_features = 1;  // C_out
  int32_t activation_min = -32768;
  int32_t activation_max = 32767;
  const int32_t* multipliers = nullptr;  // num_multipliers entries, in [0, 2^31)
  const int32_t* shifts = nullptr;       // in [-31, 7]
  int32_t num_multipliers = 1;  // 1 (per-tensor) or output_features (per-channel)
};

Error quantized_linear_s16_prepare(const LinearS16Params& params);

// Bytes of scratch quantized_linear_s16 needs on `isa`. Scalar and MVE: 0 (they read the input in
// place). DSP: one input row, input_features int16 values rounded up to 4 bytes, which it reorders
// once per batch row.
size_t quantized_linear_s16_scratch_size(const LinearS16Params& params, Isa isa);

// The variant this build selects (kKernelIsa). bias may be null (zeros). Dot products are exact in
// 64 bits (|x * w| <= 2^22); the bias is added to them modulo 2^64, and requantize_s64 is exact
// while the sum stays within +-2^47 as CMSIS-NN requires. (CMSIS-NN's DSP path sums the first 512
// columns in int32, which differs only when all 512 products are (-2^15) * (-2^7).)
void quantized_linear_s16(const LinearS16Params& params, const int16_t* input,
                          const int8_t* weights, const int64_t* bias, int16_t* output,
                          void* scratch);

// Plain-loop reference the optimized kernel must match bit for bit.
void quantized_linear_s16_reference(const LinearS16Params& params, const int16_t* input,
                                    const int8_t* weights, const int64_t* bias, int16_t* output);

}  // namespace cortexm
