// SVDF's integer kernels (TFLite's SVDF with int8 input / output, int8 feature weights, int16 time
// weights and an int16 activation state), TFLite Micro's two stages as two kernels over explicit
// state tensors: the state is an [B, F * M] int16 tensor (F = filters, M = memory), filter f's M
// entries oldest first. Freestanding.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm {

struct SvdfShape {
  int32_t batches = 1;
  int32_t input_size = 1;  // I
  int32_t filters = 1;     // F = units * rank
  int32_t memory = 1;      // M
  int32_t rank = 1;
  int32_t units() const { return filters / rank; }
};

// Stage 1: the state moved one step older, each filter's newest entry its feature dot product:
// new_state[b, f, m] = state[b, f, m + 1] for m < M - 1;
// new_state[b, f, M - 1] = int16(state_zero_point + clamp(requantize(sum_i w[f, i] * (x[b, i] +
// input_offset)), int16)).
struct SvdfStateParams {
  SvdfShape shape;
  int32_t input_offset = 0;  // -input zero point
  int32_t state_zero_point = 0;
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// Stage 2: out[b, u] = clamp(requantize(bias[u] + sum over the unit's rank filters f and m of
// time_weights[f, m] * (state[b, f, m] - state_zero_point)) + output_offset, int8); sums wrap
// in int32 as TFLite Micro's do.
struct SvdfOutputParams {
  SvdfShape shape;
  int32_t state_zero_point = 0;
  int32_t output_offset = 0;
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// Every extent >= 1, rank dividing filters, B * F * M and F * I within int32; requantization
// multipliers in [0, 2^31) and shifts in [-31, 30]; offsets within their types.
Error svdf_shape_prepare(const SvdfShape& shape);
Error svdf_state_prepare(const SvdfStateParams& params);
Error svdf_output_prepare(const SvdfOutputParams& params);

// input [B, I] int8, state / new_state [B, F * M] int16 (distinct), feature_weights [F, I] int8.
void svdf_state(const SvdfStateParams& params, const int8_t* input, const int16_t* state,
                const int8_t* feature_weights, int16_t* new_state);

// state [B, F * M] int16, time_weights [F, M] int16, bias [F / rank] int32 or nullptr, output
// [B, F / rank] int8.
void svdf_output(const SvdfOutputParams& params, const int16_t* state, const int16_t* time_weights,
                 const int32_t* bias, int8_t* output);

}  // namespace cortexm
