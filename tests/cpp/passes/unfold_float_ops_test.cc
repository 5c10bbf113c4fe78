#include "qdq_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

void fold(Graph& g) { ASSERT_TRUE(run_and_compare(g, fold_and_annotate_qparams)); }

// x -> Q -> DQ -> {gelu, sigmoid} -> Q -> DQ, folded: both ops read the int8 x.
TEST(UnfoldFloatOps, ExplicitDequantizeSharedAndQuantizeAfter) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3, 4}));
  const ValueId xq = qdq(g, x, 0.02, -3);
  const ValueId gelu = g.call("aten.gelu.default", {xq}, {})[0];
  const ValueId sigmoid = g.call("aten.sigmoid.default", {xq}, {})[0];
  const ValueId gelu_q = quantize(g, gelu, 0.015, -20);
  g.set_outputs({dequantize(g, gelu_q, 0.015, -20), qdq(g, sigmoid, 1.0 / 256, -128)});
  fold(g);
  const ValueId x_int8 = producer_of(g, gelu).inputs[0];
  ASSERT_EQ(info_of(g, x_int8).dtype, DType::kInt8);
  ASSERT_EQ(info_of(g, gelu).dtype, DType::kInt8);

  EXPECT_TRUE(run_and_compare(g, unfold_float_ops));
  EXPECT_EQ(count(g, kCortexMDequantize), 1);  // shared by gelu and sigmoid
  EXPECT_EQ(count(g, kCortexMQuantize), 2);
  const Node& dq = producer_of(g, producer_of(g, gelu).inputs[0]);
  EXPECT_EQ(dq.op, kCortexMDequantize);
  EXPECT_EQ(dq.inputs[0], x_int8);
  EXPECT_EQ(dq.attrs, qattrs(0.02, -3));
  EXPECT_EQ(producer_of(g, sigmoid).inputs[0], producer_of(g, gelu).inputs[0]);
  EXPECT_EQ(info_of(g, gelu).dtype, DType::kFloat32);
  EXPECT_FALSE(info_of(g, gelu).qparams.has_value());
  const std::vector<NodeId> readers = g.users(gelu);
  ASSERT_EQ(readers.size(), 1u);
  EXPECT_EQ(g.node(readers[0]).op, kCortexMQuantize);
  EXPECT_EQ(g.node(readers[0]).attrs, qattrs(0.015, -20));
  EXPECT_EQ(producer_of(g, gelu).meta.at("lowering"), "float: not lowered");
  EXPECT_FALSE(unfold_float_ops(g, TargetConfig{}));
}

// A conv ConvertToCortexM left float: per-channel weight and int32 bias become float constants,
// the input gets a cortex_m dequantize, the int8 output a cortex_m quantize; meta stays.
TEST(UnfoldFloatOps, ConvWithPerChannelConstants) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 5, 5}));
  const ValueId conv = conv2d(g, qdq(g, x, 0.02, 3), weight(g, "w", {4, 2, 3, 3}),
                              bias(g, "b", bias_scales(0.02, 4)));
  const ValueId relu = g.call("aten.relu.default", {conv}, {})[0];
  g.set_outputs({qdq(g, relu, 0.03, -128)});
  fold(g);
  g.mutable_node(g.producer(conv)).meta["lowering"] = "float: a reason";

  EXPECT_TRUE(run_and_compare(g, unfold_float_ops));
  const Node& node = producer_of(g, conv);
  EXPECT_EQ(producer_of(g, node.inputs[0]).op, kCortexMDequantize);
  for (size_t i : {1, 2}) {
    const Value& c = g.value(node.inputs[i]);
    EXPECT_EQ(c.kind, ValueKind::kConstant);
    EXPECT_EQ(c.info.dtype, DType::kFloat32);
  }
  EXPECT_EQ(node.meta.at("lowering"), "float: a reason");
  // conv -> Q -> DQ -> relu -> Q: relu is unfolded too.
  EXPECT_EQ(count(g, kCortexMQuantize), 2);
  EXPECT_EQ(count(g, kCortexMDequantize), 2);
  EXPECT_EQ(info_of(g, relu).dtype, DType::kFloat32);
  EXPECT_EQ(producer_of(g, relu).meta.at("lowering"), "float: not lowered");
  g.dead_code_elimination();
  for (ValueId c : g.constants()) EXPECT_EQ(g.value(c).info.dtype, DType::kFloat32);
}

// A folded op whose quantized output is a graph output: the quantize after it takes its place.
TEST(UnfoldFloatOps, QuantizedGraphOutput) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({4, 4}));
  const ValueId tanh = g.call("aten.tanh.default", {x}, {})[0];
  g.mutable_value(tanh).info.dtype = DType::kInt8;
  g.mutable_value(tanh).info.qparams = per_tensor(1.0 / 128, 0);
  g.reinfer(g.producer(tanh));
  g.set_outputs({tanh});

  EXPECT_TRUE(run_and_compare(g, unfold_float_ops));
  const Node& q = producer_of(g, g.outputs()[0]);
  EXPECT_EQ(q.op, kCortexMQuantize);
  EXPECT_EQ(q.inputs[0], tanh);
  EXPECT_EQ(info_of(g, g.outputs()[0]).qparams, per_tensor(1.0 / 128, 0));
}

// After ReplaceQuantNodes: a cortex_m dequantize of the same value with the same qparams
// already there serves the unfolded op.
TEST(UnfoldFloatOps, ReusesAnEqualCortexMDequantize) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({3, 5}));
  const ValueId xq = qdq(g, x, 0.02, -3);
  const ValueId sigmoid = g.call("aten.sigmoid.default", {xq}, {})[0];
  g.set_outputs({xq, qdq(g, sigmoid, 1.0 / 256, -128)});
  fold(g);
  ASSERT_TRUE(run_and_compare(g, replace_quant_nodes));
  ASSERT_EQ(count(g, kCortexMDequantize), 2);

  EXPECT_TRUE(run_and_compare(g, unfold_float_ops));
  EXPECT_EQ(count(g, kCortexMDequantize), 2);
  EXPECT_EQ(producer_of(g, sigmoid).inputs[0], g.outputs()[0]);
}

TEST(UnfoldFloatOps, LeavesDataMovementAndFloatOps) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 6}));
  const ValueId v = g.call("aten.view_copy.default", {quantize(g, x, 0.02, 0)},
                           {{"size", std::vector<int64_t>{3, 4}}})[0];
  const ValueId relu = g.call("aten.relu.default", {x}, {})[0];
  g.set_outputs({v, relu});

  EXPECT_FALSE(run_and_compare(g, unfold_float_ops));
}

}  // namespace
}  // namespace cortexm
