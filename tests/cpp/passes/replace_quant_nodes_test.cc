#include "qdq_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

TEST(ReplaceQuantNodes, PerTensorBecomeCortexM) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3, 4}));
  const ValueId relu = g.call("aten.relu.default", {qdq(g, x, 0.02, -3)}, {})[0];
  const ValueId out = qdq(g, relu, 0.01, -128);
  g.set_outputs({out});
  const std::string name = g.value(out).name;

  EXPECT_TRUE(run_and_compare(g, replace_quant_nodes));
  EXPECT_EQ(g.op_counts(), (std::map<std::string, int64_t>{{kCortexMQuantize, 2},
                                                          {kCortexMDequantize, 2},
                                                          {"aten.relu.default", 1}}));
  const Node& dq = producer_of(g, g.outputs()[0]);
  EXPECT_EQ(dq.op, kCortexMDequantize);
  EXPECT_EQ(dq.attrs, qattrs(0.01, -128));
  EXPECT_EQ(g.value(g.outputs()[0]).name, name);
  EXPECT_FALSE(replace_quant_nodes(g, TargetConfig{}));
}

TEST(ReplaceQuantNodes, Int16StaysExact) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({5, 7}));
  const ValueId q = g.call(kQuantize, {x}, qattrs(0.001, 12, DType::kInt16))[0];
  g.set_outputs({g.call(kDequantize, {q}, qattrs(0.001, 12, DType::kInt16))[0]});

  EXPECT_TRUE(run_and_compare(g, replace_quant_nodes));
  EXPECT_EQ(count(g, kCortexMQuantize), 1);
  EXPECT_EQ(count(g, kCortexMDequantize), 1);
}

// Per-channel weights and int32 biases left on constants (a float conv) become float constants;
// the output dequantize keeps its name.
TEST(ReplaceQuantNodes, DequantizedConstantsFoldAtCompileTime) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 5, 5}));
  const ValueId w = weight(g, "w", {3, 2, 3, 3});
  const ValueId b = bias(g, "b", bias_scales(0.02, 3));
  TensorInfo b_info;
  b_info.dtype = DType::kInt32;
  b_info.shape = {3};
  Tensor b2(b_info);
  for (int i = 0; i < 3; ++i) b2.data<int32_t>()[i] = 1000 * (i - 1);
  const ValueId b2_int32 = g.add_constant("b2", b2);
  const ValueId b2_dq = g.call(kDequantize, {b2_int32},
                               {{"scale", 0.0004}, {"zero_point", int64_t{0}},
                                {"quant_min", kInt32Min}, {"quant_max", kInt32Max},
                                {"dtype", DType::kInt32}})[0];
  const ValueId conv = conv2d(g, qdq(g, x, 0.02, 0), w, b);
  const ValueId conv2 = conv2d(g, x, w, b2_dq);
  g.set_outputs({conv, conv2, w});
  const std::string w_name = g.value(w).name;

  EXPECT_TRUE(run_and_compare(g, replace_quant_nodes));
  EXPECT_EQ(count(g, kDequantizePerChannel), 0);
  EXPECT_EQ(count(g, kDequantize), 0);
  EXPECT_EQ(count(g, kCortexMDequantize), 1);  // the activation's
  const Node& node = producer_of(g, conv);
  for (size_t i : {1, 2}) {
    const Value& c = g.value(node.inputs[i]);
    EXPECT_EQ(c.kind, ValueKind::kConstant);
    EXPECT_EQ(c.info.dtype, DType::kFloat32);
    EXPECT_FALSE(c.info.qparams.has_value());
  }
  EXPECT_EQ(g.value(producer_of(g, conv2).inputs[2]).kind, ValueKind::kConstant);
  EXPECT_EQ(g.value(g.outputs()[2]).name, w_name);
  EXPECT_EQ(g.value(g.outputs()[2]).kind, ValueKind::kConstant);
}

// A per-channel dequantize of a computed value has no cortex_m twin: it stays.
TEST(ReplaceQuantNodes, PerChannelOnAComputedValueStays) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({6, 4}));
  const ValueId w = weight(g, "w", {4, 6});
  const ValueId w_int8 = producer_of(g, w).inputs[0];
  const ValueId t = g.call("aten.permute_copy.default", {w_int8},
                           {{"dims", std::vector<int64_t>{1, 0}}})[0];
  const ValueId t_dq = g.call(kDequantizePerChannel, {t},
                              per_channel_attrs(weight_scales(4), 1, -127, 127, DType::kInt8))[0];
  g.set_outputs({g.call("aten.mul.Tensor", {x, t_dq}, {})[0]});
  g.dead_code_elimination();

  EXPECT_FALSE(run_and_compare(g, replace_quant_nodes));
  EXPECT_EQ(count(g, kDequantizePerChannel), 1);
}

}  // namespace
}  // namespace cortexm
