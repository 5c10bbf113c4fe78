// Building graphs in convert_pt2e form by hand: activations behind quantize -> dequantize, int8
// weights and int32 biases as constants behind dequantize_per_channel.
#pragma once

#include <string>
#include <vector>

#include "pass_test_util.h"
#include "passes/qparams_util.h"

namespace cortexm::testing {

constexpr int64_t kInt32Min = -2147483648LL;
constexpr int64_t kInt32Max = 2147483647LL;

inline Attrs qattrs(double scale, int64_t zp, DType dtype = DType::kInt8) {
  const int64_t lo = dtype == DType::kInt16 ? -32768 : -128;
  const int64_t hi = dtype == DType::kInt16 ? 32767 : 127;
  return {{"scale", scale}, {"zero_point", zp}, {"quant_min", lo}, {"quant_max", hi},
          {"dtype", dtype}};
}

inline ValueId quantize(Graph& g, ValueId x, double scale, int64_t zp) {
  return g.call(kQuantize, {x}, qattrs(scale, zp))[0];
}

inline ValueId dequantize(Graph& g, ValueId q, double scale, int64_t zp) {
  return g.call(kDequantize, {q}, qattrs(scale, zp))[0];
}

inline ValueId qdq(Graph& g, ValueId x, double scale, int64_t zp) {
  return dequantize(g, quantize(g, x, scale, zp), scale, zp);
}

inline QuantParams per_tensor(double scale, int64_t zp) {
  QuantParams q;
  q.scales = {scale};
  q.zero_points = {zp};
  return q;
}

inline std::vector<double> weight_scales(int64_t channels) {
  std::vector<double> s;
  for (int64_t c = 0; c < channels; ++c) s.push_back(0.01 * static_cast<double>(1 + c % 3));
  return s;
}

inline Attrs per_channel_attrs(const std::vector<double>& scales, int64_t axis, int64_t qmin,
                               int64_t qmax, DType dtype) {
  return {{"scales", scales},
          {"zero_points", std::vector<int64_t>(scales.size(), 0)},
          {"axis", axis},
          {"quant_min", qmin},
          {"quant_max", qmax},
          {"dtype", dtype}};
}

// An int8 constant with per-channel qparams along axis (set on the constant unless
// with_qparams is false) behind dequantize_per_channel; returns the dequantized value.
inline ValueId weight(Graph& g, const std::string& name, std::vector<int64_t> shape,
                      int64_t axis = 0, bool with_qparams = true) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  const std::vector<double> scales = weight_scales(info.shape[static_cast<size_t>(axis)]);
  if (with_qparams) {
    QuantParams q;
    q.scales = scales;
    q.zero_points.assign(scales.size(), 0);
    q.axis = axis;
    q.quant_min = -127;
    info.qparams = q;
  }
  Tensor t(info);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<int8_t>()[i] = static_cast<int8_t>((i * 53) % 255 - 127);
  const ValueId c = g.add_constant(name, t);
  return g.call(kDequantizePerChannel, {c},
                per_channel_attrs(scales, axis, -127, 127, DType::kInt8))[0];
}

// An int32 bias [scales.size()] behind an int32 dequantize_per_channel (axis 0).
inline ValueId bias(Graph& g, const std::string& name, const std::vector<double>& scales) {
  TensorInfo info;
  info.dtype = DType::kInt32;
  info.shape = {static_cast<int64_t>(scales.size())};
  QuantParams q;
  q.scales = scales;
  q.zero_points.assign(scales.size(), 0);
  q.axis = 0;
  q.quant_min = kInt32Min;
  q.quant_max = kInt32Max;
  info.qparams = q;
  Tensor t(info);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<int32_t>()[i] = static_cast<int32_t>((i * 37) % 200 - 100) * 40;
  const ValueId c = g.add_constant(name, t);
  return g.call(kDequantizePerChannel, {c},
                per_channel_attrs(scales, 0, kInt32Min, kInt32Max, DType::kInt32))[0];
}

// Bias scales: input scale x weight scales.
inline std::vector<double> bias_scales(double input_scale, int64_t channels) {
  std::vector<double> s = weight_scales(channels);
  for (double& v : s) v *= input_scale;
  return s;
}

inline ValueId conv2d(Graph& g, ValueId x, ValueId w, ValueId b, int64_t padding = 1) {
  return g.call("aten.convolution.default", {x, w, b},
                {{"stride", std::vector<int64_t>{1, 1}},
                 {"padding", std::vector<int64_t>{padding, padding}},
                 {"dilation", std::vector<int64_t>{1, 1}}})[0];
}

inline int64_t count(const Graph& g, const std::string& op) {
  const auto counts = g.op_counts();
  auto it = counts.find(op);
  return it == counts.end() ? 0 : it->second;
}

inline const TensorInfo& info_of(const Graph& g, ValueId v) { return g.value(v).info; }

// The node that produces v (it must have one).
inline const Node& producer_of(const Graph& g, ValueId v) { return g.node(g.producer(v)); }

}  // namespace cortexm::testing
