// cortex_m.quantized_batch_matmul (arm_batch_matmul_s8 with the rhs transposed): per batch b,
// out[b, m, n] = clamp(requantize(sum_k (lhs[b, m, k] + lhs_offset) * (rhs[b, n, k] + rhs_offset),
// multiplier, shift) + output_offset). lhs [B, M, K], rhs [B, N, K], out [B, M, N], per-tensor
// requantization; sums wrap modulo 2^32 as the target's 32-bit adds do.
// quantized_batch_matmul_s16 (arm_batch_matmul_s16): symmetric int16 lhs and rhs (offsets 0), each
// dot summed in int64 and requantized by arm_nn_requantize_s64 with the reduced 16-bit multiplier
// of `multiplier` (requantize_s64, shift <= 7), int16 output clamped to the activation range.
#pragma once

#include "cortexm/kernels/conv_params.h"

namespace cortexm {

struct BatchMatmulParams {
  int32_t batch = 1;
  int32_t lhs_rows = 1;  // M
  int32_t rhs_rows = 1;  // N
  int32_t cols = 1;      // K, shared by lhs and rhs
  int32_t lhs_offset = 0;     // -lhs zero point, in [-127, 128]
  int32_t rhs_offset = 0;     // -rhs zero point, in [-127, 128]
  int32_t output_offset = 0;  // +output zero point
  int32_t multiplier = 0;     // s_lhs * s_rhs / s_out
  int32_t shift = 0;
  int32_t activation_min = -128;
  int32_t activation_max = 127;
};

Error quantized_batch_matmul_prepare(const BatchMatmulParams& params);

// Bytes of scratch the kernel for `isa` needs (4-byte aligned): one int32 row sum per rhs row,
// with which the offsets are applied once per output instead of once per product.
size_t quantized_batch_matmul_scratch_size(const BatchMatmulParams& params, Isa isa);

void quantized_batch_matmul(const BatchMatmulParams& params, const int8_t* lhs, const int8_t* rhs,
                            int8_t* output, void* scratch);

void quantized_batch_matmul_reference(const BatchMatmulParams& params, const int8_t* lhs,
                                      const int8_t* rhs, int8_t* output);

// Offsets 0, shift in [-31, 7], cols <= 2^17 (the int64 sums stay within requantize_s64's exact
// +-2^47), an int16 activation range.
Error quantized_batch_matmul_s16_prepare(const BatchMatmulParams& params);

void quantized_batch_matmul_s16(const BatchMatmulParams& params, const int16_t* lhs,
                                const int16_t* rhs, int16_t* output);

void quantized_batch_matmul_s16_reference(const BatchMatmulParams& params, const int16_t* lhs,
                                          const int16_t* rhs, int16_t* output);

}  // namespace cortexm
