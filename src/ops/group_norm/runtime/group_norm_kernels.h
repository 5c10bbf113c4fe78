// Group norm's kernels (torch.nn.GroupNorm): an [N, C, *] tensor's channels split into `groups`
// groups of C / groups channels; each (batch, group) set of C / groups * spatial values is
// normalized by its own mean and biased variance, then scaled and shifted per channel. The bytes
// are contiguous (N, C, spatial) or channels-last (N, spatial, C). Freestanding.
#pragma once

#include <cstdint>

#include "cortexm/kernels/quantized_layer_norm.h"

namespace cortexm {

// One set's values must fit the layer-norm arithmetic's row (its int32 sums).
constexpr int32_t kGroupNormMaxGroupSize = kLayerNormMaxRowSize;

struct GroupNormShape {
  int32_t batches = 1;
  int32_t channels = 1;
  int32_t spatial = 1;  // the product of the dims after C
  int32_t groups = 1;   // divides channels
  bool channels_last = false;

  int64_t offset(int32_t n, int32_t c, int32_t s) const {
    return channels_last ? (int64_t{n} * spatial + s) * channels + c : (int64_t{n} * channels + c) * spatial + s;
  }
  int32_t group_channels() const { return channels / groups; }
};

// groups in [1, channels] dividing channels, every extent >= 1, a set's size within
// kGroupNormMaxGroupSize.
Error group_norm_shape_prepare(const GroupNormShape& shape);

// Float32: per set, mean and biased variance in double (two passes), rstd = 1 / sqrt(var + eps);
// then, as torch computes it, per channel scale = rstd * weight and shift = bias - scale * mean, and
// y = float(x * scale + shift) (weight 1 / bias 0 when absent). weight, bias: C floats or nullptr.
Error group_norm_f32_prepare(const GroupNormShape& shape, float eps);
void group_norm_f32(const GroupNormShape& shape, float eps, const float* input, const float* weight,
                    const float* bias, float* output);

// cortex_m.quantized_group_norm: int8, quantized_layer_norm.h's arithmetic over each set of
// n = C / groups * spatial values with the weight (int16) and bias (int32) of each value's channel;
// norm.rows and norm.row_size are unused (the shape gives them).
struct QuantizedGroupNormParams {
  GroupNormShape shape;
  LayerNormParams norm;
};

Error quantized_group_norm_prepare(const QuantizedGroupNormParams& params);

// weight: C int16 or nullptr (1); bias: C int32 or nullptr (0).
void quantized_group_norm(const QuantizedGroupNormParams& params, const int8_t* input, const int16_t* weight,
                          const int32_t* bias, int8_t* output);

// cortex_m.quantized_group_norm_s16 (16x8: int16 activations, symmetric): the same steps and
// constants with wider sums, per set of n <= kGroupNormS16MaxGroupSize int16 values q:
//   S = sum q, W = n * sum q^2 - S^2 + eps_term (1 if that is 0) in int64 (W < 2^61)
//   d_j = n * q_j - S (|d_j| < 2^31), z_j = d_j / sqrt(W) in Q.16 (kGroupNormS16FractionBits):
//         d_j * inv rounded half up >> (61 - 16 - k), inv and k as quantized_layer_norm.h has them
//   t_j = (z_j * weight_j) rounded half up >> product_shift, as int32; + bias_j; one requantize;
//   + output_offset (0: symmetric); clamp to [activation_min, activation_max] within int16.
// z has 4 more fraction bits than the int8 kernel's, so the lowering's product_shift is the
// int8 one + 4 for the same unit, bias and requantization (layer_norm_constants.h).
constexpr int32_t kGroupNormS16MaxGroupSize = 1 << 15;  // keeps |d_j| * inv within int64
constexpr int32_t kGroupNormS16FractionBits = 16;

Error quantized_group_norm_s16_prepare(const QuantizedGroupNormParams& params);

// weight: C int16 or nullptr (1); bias: C int32 or nullptr (0).
void quantized_group_norm_s16(const QuantizedGroupNormParams& params, const int16_t* input, const int16_t* weight,
                              const int32_t* bias, int16_t* output);

}  // namespace cortexm
