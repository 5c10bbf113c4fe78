// Folded-form int16 values for the ConvertToCortexM int16 tests (convert_conv_s16,
// convert_magnitude), and the comparison of a lowered graph with its folded form in LSB.
#pragma once

#include "convert_test_util.h"

namespace cortexm::testing {

inline QuantParams qp16(double scale) {
  QuantParams q = qp(scale, 0);
  q.quant_min = -32768;
  q.quant_max = 32767;
  return q;
}

inline TensorInfo int16_info(std::vector<int64_t> shape, QuantParams q) {
  TensorInfo info;
  info.dtype = DType::kInt16;
  info.shape = std::move(shape);
  info.qparams = std::move(q);
  return info;
}

// Makes node output v a quantized value of dtype (the folded form).
inline ValueId quantized_as(Graph& g, ValueId v, DType dtype, QuantParams q) {
  TensorInfo& info = g.mutable_value(v).info;
  info.dtype = dtype;
  info.qparams = std::move(q);
  g.reinfer(g.producer(v));
  return v;
}

// Random int16 inputs of std ~ 2^13, a quarter of them at the range's ends.
inline std::vector<Tensor> random_int16_inputs(const Graph& g, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Tensor> inputs;
  for (ValueId in : g.inputs()) {
    Tensor t(g.value(in).info);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const int v = i % 4 == 0 ? (rng() % 2 ? 32767 : -32768)
                               : static_cast<int>(std::normal_distribution<double>(0, 8192)(rng));
      t.data<int16_t>()[i] = static_cast<int16_t>(std::max(-32768, std::min(32767, v)));
    }
    inputs.push_back(t);
  }
  return inputs;
}

inline int64_t integer_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt16 ? t.data<int16_t>()[i] : t.data<int8_t>()[i];
}

// Runs `pass` and compares the integer outputs with the folded graph's: the largest |difference|.
inline int64_t run_and_compare_int(Graph& g, PassFn pass, uint32_t seed = 7) {
  const std::vector<Tensor> inputs = random_int16_inputs(g, seed);
  const std::vector<Tensor> before = run_graph(g, inputs);
  pass(g, TargetConfig{});
  g.verify();
  const std::vector<Tensor> after = run_graph(g, inputs);
  int64_t worst = 0;
  EXPECT_EQ(before.size(), after.size());
  for (size_t k = 0; k < before.size() && k < after.size(); ++k) {
    EXPECT_EQ(before[k].shape(), after[k].shape());
    EXPECT_EQ(before[k].dtype(), after[k].dtype());
    if (before[k].shape() != after[k].shape() || before[k].dtype() != after[k].dtype()) continue;
    for (int64_t i = 0; i < before[k].numel(); ++i)
      worst = std::max(worst, std::abs(integer_at(before[k], i) - integer_at(after[k], i)));
  }
  return worst;
}

}  // namespace cortexm::testing
