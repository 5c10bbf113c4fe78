// The DSP and MVE variants of the kernels; quantized_conv2d() and the others call the one this
// build selects (cortexm/kernels/kernel_isa.h). Same signatures and results as the scalar kernels.
#pragma once

#include "cortexm/kernels/kernel_isa.h"
#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"

#define CORTEXM_DECLARE_VARIANTS(ns)                                                          \
  namespace cortexm::ns {                                                                     \
  void quantized_conv2d(const Conv2dParams& params, const int8_t* input, const int8_t* filter, \
                        const int32_t* bias, int8_t* output, void* scratch);                  \
  void quantized_depthwise_conv2d(const DepthwiseConv2dParams& params, const int8_t* input,    \
                                  const int8_t* filter, const int32_t* bias, int8_t* output,   \
                                  void* scratch);                                              \
  void quantized_linear(const LinearParams& params, const int8_t* input, const int8_t* weights, \
                        const int32_t* bias, int8_t* output, void* scratch);                  \
  void quantized_add(const AddParams& params, const int8_t* lhs, const int8_t* rhs,            \
                     int8_t* output);                                                          \
  void quantized_mul(const MulParams& params, const int8_t* lhs, const int8_t* rhs,            \
                     int8_t* output);                                                          \
  }

#if CORTEXM_BUILT_ISA == 1
CORTEXM_DECLARE_VARIANTS(dsp)
#elif CORTEXM_BUILT_ISA == 2
CORTEXM_DECLARE_VARIANTS(mve)
#endif
#undef CORTEXM_DECLARE_VARIANTS

// M(paths) for every subset of 2, 3 or 4 path bits: each kernel's *_on_paths is instantiated for
// all of them (firmware links the one its op table names).
#define CORTEXM_EACH_SUBSET_OF_2_BITS(M) M(0) M(1) M(2) M(3)
#define CORTEXM_EACH_SUBSET_OF_3_BITS(M) CORTEXM_EACH_SUBSET_OF_2_BITS(M) M(4) M(5) M(6) M(7)
#define CORTEXM_EACH_SUBSET_OF_4_BITS(M) \
  CORTEXM_EACH_SUBSET_OF_3_BITS(M) M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)

// MVE only: the conv kernels with only some of their code paths (quantized_conv2d_on_paths).
#if CORTEXM_BUILT_ISA == 2
namespace cortexm::mve {
template <uint32_t Paths>
void quantized_conv2d_on_paths(const Conv2dParams& params, const int8_t* input, const int8_t* filter,
                               const int32_t* bias, int8_t* output, void* scratch);
template <uint32_t Paths>
void quantized_depthwise_conv2d_on_paths(const DepthwiseConv2dParams& params, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output,
                                         void* scratch);
}  // namespace cortexm::mve
#endif

// The average pool: MVE, and DSP for windows of at most 256 taps (larger ones run the scalar kernel).
#if CORTEXM_BUILT_ISA == 1
namespace cortexm::dsp {
void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch);
}  // namespace cortexm::dsp
#elif CORTEXM_BUILT_ISA == 2
namespace cortexm::mve {
void quantized_avg_pool2d(const Pool2dParams& params, const int8_t* input, int8_t* output,
                          void* scratch);
template <uint32_t Paths>
void quantized_avg_pool2d_on_paths(const Pool2dParams& params, const int8_t* input, int8_t* output,
                                   void* scratch);
}  // namespace cortexm::mve
#endif

// MVE only: the int16 add and mul (DSP cores run the scalar kernels).
#if CORTEXM_BUILT_ISA == 2
namespace cortexm::mve {
void quantized_add_s16(const AddS16Params& params, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output);
void quantized_mul_s16(const MulS16Params& params, const int16_t* lhs, const int16_t* rhs,
                       int16_t* output);
}  // namespace cortexm::mve
#endif
