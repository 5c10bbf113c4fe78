#include "cortexm/kernels/quantized_avg_pool2d.h"

#include "avg_pool.h"
#include "cortexm/kernels/requantize.h"
#include "variants.h"

namespace cortexm {

namespace {

// sum / count rounded halves away from zero (arm_avgpool_s8), then clamped, for one channel row.
template <typename Sum>
void average_and_clamp(const Sum* __restrict sums, int8_t* __restrict out, int32_t channels,
                       int32_t count, const UnsignedDivider& divider, int32_t act_min,
                       int32_t act_max) {
  const uint32_t half = static_cast<uint32_t>(count / 2);
  for (int32_t c = 0; c < channels; ++c) {
    const int32_t sum = sums[c];
    const uint32_t magnitude = static_cast<uint32_t>(sum > 0 ? sum : -sum) + half;
    const int32_t quotient = static_cast<int32_t>(divider.divide(magnitude));
    const int32_t average = sum > 0 ? quotient : -quotient;
    out[c] = static_cast<int8_t>(clamp(average, act_min, act_max));
  }
}

// Sum is int16 when every window holds at most 256 taps (sum in [-2^15, 2^15)), else int32:
// narrower lanes double the channels summed per vector instruction. The sums of up to
// kChannelBlock channels live on the stack: no scratch.
constexpr int32_t kChannelBlock = 64;

template <typename Sum>
void average_pool(const Pool2dParams& p, const int8_t* input, int8_t* output) {
  const int32_t channels = p.input.c;
  const int64_t row_step = int64_t{p.input.w} * channels;
  Sum sums[kChannelBlock];
  int32_t divider_count = 1;  // windows mostly share a tap count: reuse its divider
  UnsignedDivider divider(divider_count);
  for_each_pool_window(p, input, output, [&](const int8_t* window, int32_t rows, int32_t cols, int8_t* out) {
    const int32_t count = rows * cols;
    if (count != divider_count) {
      divider = UnsignedDivider(count);
      divider_count = count;
    }
    for (int32_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
      const int32_t block = channels - c0 < kChannelBlock ? channels - c0 : kChannelBlock;
      for (int32_t c = 0; c < block; ++c) sums[c] = 0;
      for (int32_t ky = 0; ky < rows; ++ky) {
        const int8_t* __restrict tap = window + ky * row_step + c0;
        for (int32_t kx = 0; kx < cols; ++kx, tap += channels)
          for (int32_t c = 0; c < block; ++c) sums[c] = static_cast<Sum>(sums[c] + tap[c]);
      }
      average_and_clamp(sums, out + c0, block, count, divider, p.activation_min, p.activation_max);
    }
  });
}

}  // namespace

CORTEXM_PREPARE_STEP Error quantized_avg_pool2d_prepare(const Pool2dParams& params) {
  CORTEXM_RETURN_IF_ERROR(validate_pool2d(params));
  const int64_t taps = avg_pool_max_window_taps(params);
  if (taps > kMaxAvgPoolWindowTaps)
    return invalid("kernel_size", taps, "covers more than 2^23 input pixels");
  return kOk;
}

// None on every isa: the scalar kernel sums blocks of channels on the stack, the DSP and MVE
// variants in registers (as arm_avgpool_s8 on MVE).
size_t quantized_avg_pool2d_scratch_size(const Pool2dParams& /*params*/, Isa /*isa*/) { return 0; }

void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch) {  // unused: no variant needs scratch
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_avg_pool2d(params, input, output, scratch);
#else
#if CORTEXM_BUILT_ISA == 1
  if (avg_pool_max_window_taps(params) <= 256) {  // int16 lanes: the DSP variant
    dsp::quantized_avg_pool2d(params, input, output, scratch);
    return;
  }
#endif
  if (avg_pool_max_window_taps(params) <= 256)
    average_pool<int16_t>(params, input, output);
  else
    average_pool<int32_t>(params, input, output);
#endif
}

uint32_t quantized_avg_pool2d_paths(const Pool2dParams& p) {
  return avg_pool_max_window_taps(p) <= 256 ? kAvgPool2dNarrowSums : kAvgPool2dWideSums;
}

template <uint32_t Paths>
void quantized_avg_pool2d_on_paths(const Pool2dParams& p, const int8_t* input, int8_t* output,
                                   void* scratch) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_avg_pool2d_on_paths<Paths>(p, input, output, scratch);
#else
  quantized_avg_pool2d(p, input, output, scratch);
#endif
}

#define CORTEXM_AVG_POOL2D_ON_PATHS(paths) \
  template void quantized_avg_pool2d_on_paths<paths>(const Pool2dParams&, const int8_t*, int8_t*, void*);
CORTEXM_EACH_SUBSET_OF_2_BITS(CORTEXM_AVG_POOL2D_ON_PATHS)
#undef CORTEXM_AVG_POOL2D_ON_PATHS
static_assert(kAvgPool2dAllPaths == 3, "instantiate quantized_avg_pool2d_on_paths for every subset");

}  // namespace cortexm
