// Attributes and checks shared by the quantize / dequantize ops.
#pragma once

#include <functional>

#include "cortexm/kernels/quantize_per_tensor.h"
#include "ops/op_util.h"
#include "program/program_generated.h"

namespace cortexm::ops {

inline std::vector<AttrSpec> per_tensor_quant_attrs() {
  return {{"scale", AttrKind::kFloat},     {"zero_point", AttrKind::kInt},
          {"quant_min", AttrKind::kInt},   {"quant_max", AttrKind::kInt},
          {"dtype", AttrKind::kDType}};
}

inline std::vector<AttrSpec> per_channel_quant_attrs() {
  return {{"scales", AttrKind::kFloats},   {"zero_points", AttrKind::kInts},
          {"axis", AttrKind::kInt},        {"quant_min", AttrKind::kInt},
          {"quant_max", AttrKind::kInt},   {"dtype", AttrKind::kDType}};
}

// Checks dtype / range / scales and returns the qparams the attributes describe.
QuantParams quant_params_from_attrs(const OpArgs& args, bool per_channel, int64_t rank = 0,
                                    const std::vector<int64_t>& shape = {});

// Kernel params from the per-tensor attributes (checked by quant_params_from_attrs).
QuantizeParams quantize_params(const OpArgs& args);

// One run of a per-channel (de)quantize: `count` elements from `start` (the flat index) of one
// channel, with the kernel params of that channel (float32 scale, int32 zero point) and its zero
// point as given (int32 / int64 biases take it whole).
struct ChannelRun {
  QuantizeParams params;
  int64_t zero_point = 0;
  int64_t start = 0, count = 0;
};
// Calls run(ChannelRun) for each run of one channel along the per-channel attribute axis of a
// tensor of `shape`, in memory order: the one walk of quantize_per_channel and
// dequantize_per_channel. The params' quant_min / quant_max are the attributes', dtype `dtype`.
void for_each_channel_run(const OpArgs& args, const std::vector<int64_t>& shape, QuantDtype dtype,
                          const std::function<void(const ChannelRun&)>& run);

// The program encode of cortex_m.quantize_per_tensor / dequantize_per_tensor
// (ops/quant/runtime/quantize_codec.h); the runtime's kernels take int8 and int16 only.
EncodeFn encode_quantize_per_tensor(fb::KernelId kernel_id);

// The descriptor of a quantize / dequantize: input `input` and the per-tensor attributes (an
// elementwise op) or the per-channel ones. Named by the caller; infer and kernel are each op's.
inline OpSchema quant_schema(bool per_channel) {
  OpSchema s;
  s.inputs = {{"input"}};
  s.attrs = per_channel ? per_channel_quant_attrs() : per_tensor_quant_attrs();
  s.is_unary_elementwise = !per_channel;
  return s;
}

// Registers per-tensor `s` as quantized_decomposed.<op>.default and as its cortex_m twin
// cortex_m.<op>.default, which alone a program encodes (as kernel_id): programs hold lowered graphs.
void register_with_cortex_m_twin(OpRegistry& registry, const std::string& op, OpSchema s,
                                 fb::KernelId kernel_id);

}  // namespace cortexm::ops
