// Max / min over a set of dims (aten.amax / aten.amin) with MeanParams' dims and keepdim, the
// output contiguous over the kept dims. float32: a NaN in a reduction gives NaN, as torch. int8 /
// int16: the stored integers compared (input and output share their qparams: exact).
// Argmax / argmin (aten.argmax / aten.argmin): the int64 index of the first max / min within the
// reduced elements, row-major over the reduced dims (one dim, or every dim: the flat index);
// float32: the first NaN's, as torch. int8 / int16 with a positive scale: the same index as on
// the dequantized values (dequantizing keeps order and ties).
#pragma once

#include <cstdint>

#include "cortexm/portable/mean.h"

namespace cortexm::portable {

enum class Extremum : int32_t { kMax = 0, kMin = 1 };

// mean_prepare's checks, and no reduced dim may be empty (torch refuses an empty max).
Error extremum_prepare(const MeanParams& params, Shape* output = nullptr);

void extremum_f32(const MeanParams& params, Extremum kind, const float* in, float* out);
void extremum_s8(const MeanParams& params, Extremum kind, const int8_t* in, int8_t* out);
void extremum_s16(const MeanParams& params, Extremum kind, const int16_t* in, int16_t* out);

void arg_extremum_f32(const MeanParams& params, Extremum kind, const float* in, int64_t* out);
void arg_extremum_s8(const MeanParams& params, Extremum kind, const int8_t* in, int64_t* out);
void arg_extremum_s16(const MeanParams& params, Extremum kind, const int16_t* in, int64_t* out);

}  // namespace cortexm::portable
