// The ops with only some of their kernels' code paths (quantized_conv2d_on_paths,
// quantized_depthwise_conv2d_on_paths, quantized_avg_pool2d_on_paths): the OpImpls an op table
// names with CORTEXM_OP_PATHS(QuantizedConv2d, paths), as Program.export_c writes for the paths
// its program's ops take (kernel_paths). A program op taking a path the entry lacks is refused at load time
// (StatusCode::kUnsupported), so the code left out is never needed.
#pragma once

#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "runtime/op_context.h"
#include "ops/conv/runtime/conv.h"

namespace cortexm::runtime {

Status prepare_quantized_conv2d(const OpContext& ctx);
Status prepare_quantized_depthwise_conv2d(const OpContext& ctx);
Status prepare_quantized_avg_pool2d(const OpContext& ctx);

// The kernel code paths op `index` of a loaded program takes (Conv2dPath, DepthwiseConv2dPath or
// AvgPool2dPath bits); 0 for a kernel without separate paths.
uint32_t kernel_paths(const Program& program, int32_t index);

// The ops' prepare, then a check that the paths the op takes are all among `registered`.
Status prepare_conv2d_on_paths(const OpContext& ctx, uint32_t registered);
Status prepare_depthwise_conv2d_on_paths(const OpContext& ctx, uint32_t registered);
Status prepare_avg_pool2d_on_paths(const OpContext& ctx, uint32_t registered);

// run_conv_with (ops/conv/runtime/conv.h) for each kernel.
void run_conv2d_with(const OpContext& ctx, ConvKernel<Conv2dParams> kernel);
void run_depthwise_conv2d_with(const OpContext& ctx, ConvKernel<DepthwiseConv2dParams> kernel);
using AvgPool2dKernel = void (*)(const Pool2dParams&, const int8_t*, int8_t*, void*);
void run_avg_pool2d_with(const OpContext& ctx, AvgPool2dKernel kernel);

// An OpImpl's prepare and run with the registered paths bound (the op table's TU instantiates only
// these short templates: the decoding and checks stay in the runtime library, built for size).
template <Status (*Prepare)(const OpContext&, uint32_t), uint32_t Paths>
Status prepare_on_paths(const OpContext& ctx) {
  return Prepare(ctx, Paths);
}

template <class Kernel, void (*RunWith)(const OpContext&, Kernel), Kernel Run>
void run_on_paths(const OpContext& ctx) {
  RunWith(ctx, Run);
}

// Instantiated in op_paths.cc with the runtime (built for size), not in each op table.
extern template bool verify_params<fb::Conv2dParams>(flatbuffers::Verifier&, const void*);
extern template bool verify_params<fb::Pool2dParams>(flatbuffers::Verifier&, const void*);

extern const OpState quantized_conv2d_state;
extern const OpState quantized_depthwise_conv2d_state;
extern const OpState quantized_avg_pool2d_state;

namespace op {
// As op::QuantizedConv2d, op::QuantizedDepthwiseConv2d and op::QuantizedAvgPool2d (ops.def), with
// only the code of Paths.
template <uint32_t Paths>
inline constexpr OpImpl QuantizedConv2dOnPaths{
    fb::OpParams_Conv2dParams, verify_params<fb::Conv2dParams>, 2, 3, 1, 1, "must be 2 to 3 for this kernel", "must be 1 to 1 for this kernel", false,
    prepare_on_paths<prepare_conv2d_on_paths, Paths>,
    run_on_paths<ConvKernel<Conv2dParams>, run_conv2d_with, quantized_conv2d_on_paths<Paths>>,
    in_place_lag_quantized_conv2d, &quantized_conv2d_state};
template <uint32_t Paths>
inline constexpr OpImpl QuantizedDepthwiseConv2dOnPaths{
    fb::OpParams_Conv2dParams, verify_params<fb::Conv2dParams>, 2, 3, 1, 1, "must be 2 to 3 for this kernel", "must be 1 to 1 for this kernel", false,
    prepare_on_paths<prepare_depthwise_conv2d_on_paths, Paths>,
    run_on_paths<ConvKernel<DepthwiseConv2dParams>, run_depthwise_conv2d_with, quantized_depthwise_conv2d_on_paths<Paths>>,
    in_place_lag_quantized_depthwise_conv2d, &quantized_depthwise_conv2d_state};
template <uint32_t Paths>
inline constexpr OpImpl QuantizedAvgPool2dOnPaths{
    fb::OpParams_Pool2dParams, verify_params<fb::Pool2dParams>, 1, 1, 1, 1, "must be 1 to 1 for this kernel", "must be 1 to 1 for this kernel", false,
    prepare_on_paths<prepare_avg_pool2d_on_paths, Paths>,
    run_on_paths<AvgPool2dKernel, run_avg_pool2d_with, quantized_avg_pool2d_on_paths<Paths>>, nullptr,
    &quantized_avg_pool2d_state};
}  // namespace op

// An OpEntry for a kernel with separate paths, built with only `paths`:
// CORTEXM_OP_PATHS(QuantizedDepthwiseConv2d, 1).
#define CORTEXM_OP_PATHS(id, paths)                                               \
  ::cortexm::runtime::OpEntry {                                                   \
    static_cast<uint8_t>(::cortexm::fb::KernelId_##id), &::cortexm::runtime::op::id##OnPaths<paths> \
  }

}  // namespace cortexm::runtime
