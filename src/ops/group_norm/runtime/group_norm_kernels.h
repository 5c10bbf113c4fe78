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

}  // namespace cortexm
