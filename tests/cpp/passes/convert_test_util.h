// Folded-form graphs for the ConvertToCortexM / ActivationFusion / FuseViewCopy tests, and the
// comparison of a lowered graph with its folded form in LSB.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>

#include "cortexm/kernels/requantize.h"
#include "ops/data_movement/data_movement_op_names.h"
#include "pass_test_util.h"

namespace cortexm::testing {

constexpr const char* kConv = "aten.convolution.default";
constexpr const char* kQConv = "cortex_m.quantized_conv2d.default";
constexpr const char* kQDepthwise = "cortex_m.quantized_depthwise_conv2d.default";

inline QuantParams qp(double scale, int64_t zp) {
  QuantParams q;
  q.scales = {scale};
  q.zero_points = {zp};
  return q;
}

inline QuantParams qp_channels(std::vector<double> scales, int64_t axis) {
  QuantParams q;
  q.zero_points.assign(scales.size(), 0);
  q.scales = std::move(scales);
  q.axis = axis;
  q.quant_min = -127;
  return q;
}

inline TensorInfo int8_info(std::vector<int64_t> shape, QuantParams q) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  info.qparams = std::move(q);
  return info;
}

inline ValueId q_input(Graph& g, const std::string& name, std::vector<int64_t> shape, double scale,
                       int64_t zp) {
  return g.add_input(name, int8_info(std::move(shape), qp(scale, zp)));
}

// Random int8 weights in [-127, 127].
inline ValueId int8_const(Graph& g, const std::string& name, std::vector<int64_t> shape,
                          QuantParams q, uint32_t seed) {
  Tensor t(int8_info(std::move(shape), std::move(q)));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-127, 127);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<int8_t>()[i] = static_cast<int8_t>(dist(rng));
  return g.add_constant(name, t);
}

inline ValueId int32_const(Graph& g, const std::string& name, const std::vector<int32_t>& values,
                           QuantParams q) {
  TensorInfo info;
  info.dtype = DType::kInt32;
  info.shape = {static_cast<int64_t>(values.size())};
  q.quant_min = INT32_MIN;
  q.quant_max = INT32_MAX;
  info.qparams = q;
  Tensor t(info);
  std::copy(values.begin(), values.end(), t.data<int32_t>());
  return g.add_constant(name, t);
}

inline ValueId float_const(Graph& g, const std::string& name, std::vector<int64_t> shape,
                           uint32_t seed, float scale = 1.0f) {
  Tensor t(float_info(std::move(shape)));
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
  return g.add_constant(name, t);
}

inline std::vector<int32_t> random_int32s(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Makes node output v an int8 quantized value (the folded form).
inline ValueId quantized(Graph& g, ValueId v, QuantParams q) {
  TensorInfo& info = g.mutable_value(v).info;
  info.dtype = DType::kInt8;
  info.qparams = std::move(q);
  g.reinfer(g.producer(v));
  return v;
}

inline std::vector<Tensor> random_inputs(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (ValueId in : g.inputs()) {
    Tensor t(g.value(in).info);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (t.dtype() == DType::kInt8)
        t.data<int8_t>()[i] =
            static_cast<int8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
      else
        t.data<float>()[i] = std::normal_distribution<float>(0.0f, 1.0f)(rng);
    }
    inputs.push_back(t);
  }
  return inputs;
}

struct LsbDiff {
  int max = 0;        // largest |before - after|
  int64_t off = 0;    // elements that differ
  int64_t total = 0;  // elements compared
};

// Runs `pass`, verifies the graph and compares its int8 outputs with the graph's before, on
// random inputs: within 1 LSB everywhere and off by one on at most `max_off_fraction`.
inline LsbDiff run_and_compare_lsb(Graph& g, PassFn pass, double max_off_fraction = 0.02,
                                   uint32_t seed = 7) {
  const std::vector<Tensor> inputs = random_inputs(g, seed);
  const std::vector<Tensor> before = run_graph(g, inputs);
  pass(g, TargetConfig{});
  g.verify();
  const std::vector<Tensor> after = run_graph(g, inputs);
  LsbDiff d;
  EXPECT_EQ(before.size(), after.size());
  for (size_t k = 0; k < before.size() && k < after.size(); ++k) {
    EXPECT_EQ(before[k].shape(), after[k].shape());
    EXPECT_EQ(before[k].dtype(), DType::kInt8);
    EXPECT_EQ(after[k].dtype(), DType::kInt8);
    if (before[k].shape() != after[k].shape()) continue;
    for (int64_t i = 0; i < before[k].numel(); ++i) {
      const int diff = std::abs(before[k].data<int8_t>()[i] - after[k].data<int8_t>()[i]);
      d.max = std::max(d.max, diff);
      d.off += diff != 0;
      ++d.total;
    }
  }
  EXPECT_LE(d.max, 1);
  EXPECT_LE(static_cast<double>(d.off), max_off_fraction * static_cast<double>(d.total))
      << d.off << " of " << d.total << " elements differ";
  return d;
}

inline int64_t count(const Graph& g, const std::string& op) {
  const auto counts = g.op_counts();
  const auto it = counts.find(op);
  return it == counts.end() ? 0 : it->second;
}

// The one node running op (fails the test when there is not exactly one).
inline const Node& only(const Graph& g, const std::string& op) {
  const Node* found = nullptr;
  int n = 0;
  for (NodeId id : g.order())
    if (g.node(id).op == op) found = &g.node(id), ++n;
  EXPECT_EQ(n, 1) << op;
  if (!found) throw std::runtime_error("no node runs " + op);
  return *found;
}

inline int64_t attr_i(const Node& n, const std::string& name) {
  return OpArgs(n.op, n.name, n.attrs).i(name);
}

inline std::vector<int64_t> attr_ints(const Node& n, const std::string& name) {
  return OpArgs(n.op, n.name, n.attrs).ints(name);
}

// The node that produced graph output k, whichever op it is.
inline const Node& output_producer(const Graph& g, size_t k = 0) {
  return g.node(g.producer(g.outputs()[k]));
}

}  // namespace cortexm::testing
