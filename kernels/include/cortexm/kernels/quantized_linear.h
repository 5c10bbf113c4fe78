// cortex_m.quantized_linear: input [..., K] int8, weights [C_out, K] int8, bias int32 [C_out];
// per-tensor (one multiplier) or per-channel (C_out multipliers) requantize
// (arm_fully_connected_s8 / arm_fully_connected_per_channel_s8 arithmetic).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/host_variant.h"

namespace cortexm {

struct LinearParams {
  int32_t batches = 1;          // product of the input's leading dims
  int32_t input_features = 1;   // K
  int32_t output_features = 1;  // C_out
  int32_t input_offset = 0;     // -input zero point, in [-127, 128]
  int32_t filter_offset = 0;    // -weight zero point, in [-127, 128]
  int32_t output_offset = 0;    // +output zero point, in [-128, 127]
  int32_t activation_min = -128;
  int32_t activation_max = 127;
  const int32_t* multipliers = nullptr;  // num_multipliers entries
  const int32_t* shifts = nullptr;
  int32_t num_multipliers = 1;  // 1 (per-tensor) or output_features (per-channel)
  // The bias already holds bias + input_offset * (sum of the weight row) + K * input_offset *
  // filter_offset, modulo 2^32 (quantized_linear_fold_bias): the kernel then computes
  // bias + sum x * (w + filter_offset), the unfolded sum bit for bit.
  bool bias_includes_input_offset = false;
  // The host only: the x86 variant the kernel runs (one for the whole call; a run of a program
  // passes the one it read at its start), or kHostVariantInUse.
  HostVariant host_variant = kHostVariantInUse;
  // The host only: quantized_linear_host_pack's output for these weights and bias, or null (the
  // kernel then reads the weights). Used only when packed for the variant the kernel runs.
  const void* host_packed = nullptr;
};

Error quantized_linear_prepare(const LinearParams& params);

// Bytes of scratch quantized_linear needs on `isa`: none, every variant reads the int8 input row
// in place (scratch may be null).
size_t quantized_linear_scratch_size(const LinearParams& params, Isa isa);

// The host only (0 elsewhere): bytes of the weights and bias packed for the x86 variant
// params.host_variant (kHostVariantInUse: the one in use; any variant's layout on any CPU), once, at load (0: the kernel reads the weights as they are: the scalar variant, a nonzero filter
// offset); quantized_linear_host_pack writes them to `packed` (64-byte aligned).
size_t quantized_linear_host_packed_size(const LinearParams& params);
void quantized_linear_host_pack(const LinearParams& params, const int8_t* weights, const int32_t* bias,
                                void* packed);

// The variant this build selects (kKernelIsa, cortexm/kernels/kernel_isa.h). bias may be null (zeros). The 32-bit accumulator wraps as on the target.
void quantized_linear(const LinearParams& params, const int8_t* input, const int8_t* weights,
                      const int32_t* bias, int8_t* output, void* scratch);

// folded[oc] = (bias ? bias[oc] : 0) + input_offset * (sum of weight row oc)
// + K * input_offset * filter_offset, modulo 2^32: the bias quantized_linear takes with
// bias_includes_input_offset. folded has output_features entries.
void quantized_linear_fold_bias(const LinearParams& params, const int8_t* weights,
                                const int32_t* bias, int32_t* folded);

// Takes the unfolded bias and does not read bias_includes_input_offset.
void quantized_linear_reference(const LinearParams& params, const int8_t* input,
                                const int8_t* weights, const int32_t* bias, int8_t* output);

}  // namespace cortexm
