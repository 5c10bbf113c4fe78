// Running a graph before and after a pass: the outputs must not change.
#pragma once

#include <gtest/gtest.h>

#include <cstring>

#include "graph/interpreter.h"
#include "passes/pass.h"

namespace cortexm::testing {

inline TensorInfo float_info(std::vector<int64_t> shape) {
  TensorInfo info;
  info.shape = std::move(shape);
  return info;
}

inline Tensor ramp(const TensorInfo& info) {
  Tensor t(info);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (info.dtype == DType::kFloat32) t.data<float>()[i] = static_cast<float>((i * 37) % 101) / 25.0f - 2.0f;
    if (info.dtype == DType::kInt8) t.data<int8_t>()[i] = static_cast<int8_t>((i * 37) % 256 - 128);
    if (info.dtype == DType::kInt16)
      t.data<int16_t>()[i] = static_cast<int16_t>((i * 9973) % 65536 - 32768);
  }
  return t;
}

// Runs `pass` on graph and checks the outputs are byte-identical; returns what the pass returned.
inline bool run_and_compare(Graph& graph, PassFn pass) {
  std::vector<Tensor> inputs;
  for (ValueId in : graph.inputs()) inputs.push_back(ramp(graph.value(in).info));
  const std::vector<Tensor> before = run_graph(graph, inputs);
  const bool changed = pass(graph, TargetConfig{});
  graph.verify();
  const std::vector<Tensor> after = run_graph(graph, inputs);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    EXPECT_EQ(before[i].shape(), after[i].shape());
    EXPECT_EQ(std::memcmp(before[i].raw(), after[i].raw(), before[i].nbytes()), 0) << "output " << i;
  }
  return changed;
}

}  // namespace cortexm::testing
