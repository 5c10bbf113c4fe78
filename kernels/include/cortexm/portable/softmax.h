// Float32 softmax and log_softmax along any dim (aten._softmax / aten._log_softmax), numerically
// stable: the max along the dim is subtracted first and the exponentials are summed in double.
//   softmax:     y = float(double(expf(x - max)) / sum)
//   log_softmax: y = float(double(x - max) - log(sum))
#pragma once

#include <cstdint>

#include "cortexm/portable/shape.h"

namespace cortexm::portable {

struct SoftmaxParams {
  Shape input;
  int64_t dim = -1;  // negative counts from the end; rank 0 takes 0 or -1
};

Error softmax_prepare(const SoftmaxParams& params);

void softmax_f32(const SoftmaxParams& params, const float* in, float* out);
void log_softmax_f32(const SoftmaxParams& params, const float* in, float* out);

}  // namespace cortexm::portable
