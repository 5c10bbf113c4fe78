// The constants the layer-norm kernel's arithmetic (quantized_layer_norm.h) takes for a float
// weight and bias, shared by the lowerings onto it (layer norm, group norm): the weight as int16
// symmetric per tensor (scale max|w| / 32767), the bias as int32 at the accumulator's unit
// s_w * 2^(product_shift - 12), eps as eps_term = round(n^2 * eps / s_in^2); product_shift is the
// smallest that keeps z * w + bias within int32 for a set of n values.
#pragma once

#include <string>
#include <vector>

#include "passes/convert_to_cortex_m.h"

namespace cortexm::convert {

// The float32 data of an optional constant input with `n` elements (empty when v is kNoValue);
// NotLowered naming `what` and `per` (what one value is for) otherwise.
std::vector<double> float_constant(const Graph& graph, ValueId v, int64_t n, const std::string& what,
                                   const std::string& per);

struct LayerNormConstants {
  std::vector<int64_t> weight, bias;  // int16 / int32 values; empty when absent
  double weight_scale = 1.0;          // s_w
  double unit = 1.0;                  // the bias's (and accumulator's) scale
  int64_t product_shift = 0;
  int64_t multiplier = 0, shift = 0;  // unit / s_out
  int64_t eps_term = 0;
};

// For sets of n values (in [1, kLayerNormMaxRowSize]); w, b: the float weight and bias (empty
// when absent). NotLowered when the bias does not fit int32.
LayerNormConstants layer_norm_constants(int64_t n, const std::vector<double>& w, const std::vector<double>& b,
                                        double eps, double input_scale, double output_scale);

// A 1-D constant of `values` as `dtype` (int16 weight, int32 bias) at `scale`, zero point 0.
Tensor layer_norm_constant_tensor(DType dtype, const std::vector<int64_t>& values, double scale);

}  // namespace cortexm::convert
