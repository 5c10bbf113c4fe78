// Attributes and checks shared by the quantize / dequantize ops.
#pragma once

#include "ops/op_util.h"

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

}  // namespace cortexm::ops
