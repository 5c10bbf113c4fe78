#include "graph/quantized_form.h"

#include <gtest/gtest.h>

#include <cstring>

#include "graph/graph.h"
#include "graph/interpreter.h"

namespace cortexm {
namespace {

QuantParams per_tensor(double scale, int64_t zp) {
  QuantParams q;
  q.scales = {scale};
  q.zero_points = {zp};
  return q;
}

Attrs qattrs(double scale, int64_t zp, DType dtype = DType::kInt8) {
  return {{"scale", scale}, {"zero_point", zp}, {"quant_min", int64_t{-128}},
          {"quant_max", int64_t{127}}, {"dtype", dtype}};
}

// x(int8) -> DQ -> relu -> hardtanh -> Q, and the same with relu folded onto the int8 values.
TEST(QuantizedForm, FoldedNodeEqualsDequantizeOpQuantize) {
  TensorInfo in;
  in.dtype = DType::kInt8;
  in.shape = {2, 3, 4};
  in.qparams = per_tensor(0.05, -7);

  Graph explicit_form;
  const ValueId x = explicit_form.add_input("x", in);
  const ValueId dq = explicit_form.call("quantized_decomposed.dequantize_per_tensor.default", {x}, qattrs(0.05, -7))[0];
  const ValueId r = explicit_form.call("aten.hardtanh.default", {dq}, {{"min_val", -0.3}, {"max_val", 2.0}})[0];
  const ValueId q = explicit_form.call("quantized_decomposed.quantize_per_tensor.default", {r}, qattrs(0.02, 5))[0];
  explicit_form.set_outputs({q});

  Graph folded;
  const ValueId fx = folded.add_input("x", in);
  const ValueId fr = folded.call("aten.hardtanh.default", {fx}, {{"min_val", -0.3}, {"max_val", 2.0}})[0];
  EXPECT_EQ(folded.value(fr).info.dtype, DType::kFloat32);  // float until its output is quantized
  TensorInfo& out = folded.mutable_value(fr).info;
  out.dtype = DType::kInt8;
  out.qparams = per_tensor(0.02, 5);
  folded.set_outputs({fr});
  EXPECT_NO_THROW(folded.verify());
  folded.reinfer(folded.producer(fr));
  EXPECT_EQ(folded.value(fr).info.dtype, DType::kInt8);

  Tensor input(in);
  for (int64_t i = 0; i < input.numel(); ++i) input.data<int8_t>()[i] = static_cast<int8_t>(i * 11 - 128);
  const auto a = run_graph(explicit_form, {input});
  const auto b = run_graph(folded, {input});
  ASSERT_EQ(a[0].dtype(), DType::kInt8);
  ASSERT_EQ(b[0].dtype(), DType::kInt8);
  EXPECT_EQ(std::memcmp(a[0].raw(), b[0].raw(), a[0].nbytes()), 0);
}

TEST(QuantizedForm, PerChannelWeightsAndInt32BiasDequantize) {
  TensorInfo w;
  w.dtype = DType::kInt8;
  w.shape = {2, 3};
  QuantParams q;
  q.scales = {0.5, 0.25};
  q.zero_points = {0, 0};
  q.axis = 0;
  w.qparams = q;
  Tensor t(w);
  for (int i = 0; i < 6; ++i) t.data<int8_t>()[i] = static_cast<int8_t>(i - 3);
  const Tensor f = dequantize_tensor(t);
  const float expected[] = {-1.5f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(f.data<float>()[i], expected[i]);
}

TEST(QuantizedForm, DataMovementOpsStayNative) {
  OpSchema view = OpRegistry::global().get("aten.view_copy.default");
  EXPECT_FALSE(takes_folded_form(view));
  EXPECT_TRUE(takes_folded_form(OpRegistry::global().get("aten.convolution.default")));
  EXPECT_FALSE(takes_folded_form(OpRegistry::global().get("cortex_m.quantized_add.default")));
}

}  // namespace
}  // namespace cortexm
