#include "qdq_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

bool fold_again(Graph& g) { return fold_and_annotate_qparams(g, TargetConfig{}); }

// x -> Q -> DQ -> conv(DQ w per-channel, DQ b int32) -> relu -> Q -> DQ -> max_pool -> Q -> DQ.
TEST(FoldAndAnnotateQParams, ConvReluChain) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 6, 6}));
  const ValueId conv = conv2d(g, qdq(g, x, 0.02, 3), weight(g, "w", {4, 2, 3, 3}),
                              bias(g, "b", bias_scales(0.02, 4)));
  const ValueId relu = g.call("aten.relu.default", {conv}, {})[0];
  const ValueId pool = g.call("aten.max_pool2d.default", {qdq(g, relu, 0.015, -128)},
                              {{"kernel_size", std::vector<int64_t>{2, 2}}})[0];
  g.set_outputs({qdq(g, pool, 0.015, -128)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_FALSE(fold_again(g));
  // Left: the input's quantize and the output's dequantize.
  EXPECT_EQ(g.op_counts(), (std::map<std::string, int64_t>{{"aten.convolution.default", 1},
                                                          {"aten.relu.default", 1},
                                                          {"aten.max_pool2d.default", 1},
                                                          {kQuantize, 1},
                                                          {kDequantize, 1}}));
  const Node& c = g.node(g.producer(conv));
  EXPECT_EQ(info_of(g, c.inputs[0]).dtype, DType::kInt8);
  EXPECT_EQ(info_of(g, c.inputs[1]).dtype, DType::kInt8);
  EXPECT_EQ(info_of(g, c.inputs[2]).dtype, DType::kInt32);
  EXPECT_EQ(c.meta.at("input_qparams"),
            "0: int8 q(0.02, 3); 1: int8 q(axis 0, 4 scales); 2: int32 q(axis 0, 4 scales)");
  // relu passes its output qparams back: the conv's output is the int8 relu reads.
  EXPECT_EQ(info_of(g, conv).qparams, per_tensor(0.015, -128));
  EXPECT_EQ(c.meta.at("output_qparams"), "int8 q(0.015, -128)");
  EXPECT_EQ(info_of(g, relu).dtype, DType::kInt8);
  EXPECT_EQ(g.node(g.producer(relu)).meta.at("output_qparams"), "int8 q(0.015, -128)");
  EXPECT_EQ(info_of(g, pool).qparams, per_tensor(0.015, -128));
  EXPECT_EQ(g.value(g.outputs()[0]).info.dtype, DType::kFloat32);
}

// linear -> relu -> Q/DQ -> view -> Q/DQ -> permute -> Q/DQ -> view -> Q/DQ -> linear: the
// passthrough chain runs on int8 and the second linear reads it.
TEST(FoldAndAnnotateQParams, PassthroughChainBetweenQuantizedOps) {
  Graph g;
  const double s = 0.03;
  const ValueId x = g.add_input("x", float_info({2, 8}));
  const ValueId l1 = g.call(
      "aten.linear.default",
      {qdq(g, x, 0.02, 0), weight(g, "w1", {6, 8}), bias(g, "b1", bias_scales(0.02, 6))}, {})[0];
  const ValueId relu = g.call("aten.relu.default", {l1}, {})[0];
  const ValueId v1 = g.call("aten.view_copy.default", {qdq(g, relu, s, -128)},
                            {{"size", std::vector<int64_t>{2, 3, 2}}})[0];
  const ValueId p = g.call("aten.permute_copy.default", {qdq(g, v1, s, -128)},
                           {{"dims", std::vector<int64_t>{0, 2, 1}}})[0];
  const ValueId v2 = g.call("aten.view_copy.default", {qdq(g, p, s, -128)},
                            {{"size", std::vector<int64_t>{2, 6}}})[0];
  const ValueId l2 =
      g.call("aten.linear.default", {qdq(g, v2, s, -128), weight(g, "w2", {4, 6})}, {})[0];
  g.set_outputs({qdq(g, l2, 0.05, 1)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_FALSE(fold_again(g));
  EXPECT_EQ(count(g, kQuantize), 1);
  EXPECT_EQ(count(g, kDequantize), 1);
  EXPECT_EQ(count(g, kDequantizePerChannel), 0);
  for (ValueId v : {l1, relu, v1, p, v2}) {
    EXPECT_EQ(info_of(g, v).dtype, DType::kInt8) << g.value(v).name;
    EXPECT_EQ(info_of(g, v).qparams, per_tensor(s, -128)) << g.value(v).name;
  }
  const Node& second = producer_of(g, l2);
  EXPECT_EQ(second.inputs[0], v2);
  EXPECT_EQ(second.meta.at("input_qparams"), "0: int8 q(0.03, -128); 1: int8 q(axis 0, 4 scales)");
  EXPECT_EQ(second.meta.at("output_qparams"), "int8 q(0.05, 1)");
  EXPECT_EQ(producer_of(g, p).meta.at("output_qparams"), "int8 q(0.03, -128)");
}

// gelu left float by the quantizer (no Q after it): it reads the int8 value, its output stays
// float.
TEST(FoldAndAnnotateQParams, FloatOpKeepsFloatOutput) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 4, 4}));
  const ValueId conv = conv2d(g, qdq(g, x, 0.02, 3), weight(g, "w", {3, 2, 3, 3}),
                              bias(g, "b", bias_scales(0.02, 3)));
  const ValueId gelu = g.call("aten.gelu.default", {qdq(g, conv, 0.04, -5)}, {})[0];
  g.set_outputs({gelu});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_EQ(count(g, kDequantize), 0);
  const Node& node = producer_of(g, gelu);
  EXPECT_EQ(node.inputs[0], conv);
  EXPECT_EQ(info_of(g, conv).dtype, DType::kInt8);
  EXPECT_EQ(info_of(g, gelu).dtype, DType::kFloat32);
  EXPECT_FALSE(info_of(g, gelu).qparams.has_value());
  EXPECT_EQ(node.meta.at("input_qparams"), "0: int8 q(0.04, -5)");
  EXPECT_EQ(node.meta.count("output_qparams"), 0u);
}

// cat of two values quantized with the cat's qparams runs on int8.
TEST(FoldAndAnnotateQParams, CatWithSharedQParams) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 3}));
  const ValueId y = g.add_input("y", float_info({1, 4, 3}));
  const ValueId a = g.call("aten.relu.default", {qdq(g, x, 0.02, 0)}, {})[0];
  const ValueId b = g.call("aten.hardtanh.default", {qdq(g, y, 0.025, 2)}, {})[0];
  const ValueId cat = g.call("aten.cat.default", {qdq(g, a, 0.025, 2), qdq(g, b, 0.025, 2)},
                             {{"dim", int64_t{1}}})[0];
  g.set_outputs({qdq(g, cat, 0.025, 2)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_EQ(count(g, kQuantize), 2);    // the inputs'
  EXPECT_EQ(count(g, kDequantize), 1);  // the output's
  const Node& node = producer_of(g, cat);
  EXPECT_EQ(node.inputs, (std::vector<ValueId>{a, b}));
  EXPECT_EQ(info_of(g, cat).qparams, per_tensor(0.025, 2));
  EXPECT_EQ(node.meta.at("input_qparams"), "0: int8 q(0.025, 2); 1: int8 q(0.025, 2)");
}

// Inputs with other qparams than the cat's output (no requantize in between): the cat stays
// float; its producers still fold.
TEST(FoldAndAnnotateQParams, CatWithMismatchedQParamsStaysFloat) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 3}));
  const ValueId a = g.call("aten.relu.default", {qdq(g, x, 0.02, 0)}, {})[0];
  const ValueId b = g.call("aten.sigmoid.default", {qdq(g, x, 0.02, 0)}, {})[0];
  const ValueId cat =
      g.call("aten.cat.default", {qdq(g, a, 0.02, 0), qdq(g, b, 0.01, -128)}, {})[0];
  g.set_outputs({qdq(g, cat, 0.02, 0)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_EQ(info_of(g, cat).dtype, DType::kFloat32);
  EXPECT_EQ(info_of(g, a).dtype, DType::kInt8);
  EXPECT_EQ(info_of(g, b).dtype, DType::kInt8);
  EXPECT_EQ(count(g, kDequantize), 3);  // the cat's two inputs and the output
}

// split: the output read by matching quantizes folds; the one read by a float op gets a
// dequantize, which that op then folds; the one requantized keeps its Q behind a dequantize.
TEST(FoldAndAnnotateQParams, SplitFoldsEachOutput) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 9}));
  const std::vector<ValueId> parts =
      g.call("aten.split_with_sizes_copy.default", {qdq(g, x, 0.02, -4)},
             {{"split_sizes", std::vector<int64_t>{2, 3, 4}}, {"dim", int64_t{1}}});
  const ValueId relu = g.call("aten.relu.default", {qdq(g, parts[0], 0.02, -4)}, {})[0];
  const ValueId gelu = g.call("aten.gelu.default", {parts[1]}, {})[0];
  const ValueId requantized = qdq(g, parts[2], 0.05, 0);
  g.set_outputs({qdq(g, relu, 0.02, -4), gelu, requantized});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_FALSE(fold_again(g));
  for (ValueId part : parts) EXPECT_EQ(info_of(g, part).qparams, per_tensor(0.02, -4));
  EXPECT_EQ(producer_of(g, relu).inputs[0], parts[0]);
  EXPECT_EQ(producer_of(g, gelu).inputs[0], parts[1]);
  EXPECT_EQ(info_of(g, gelu).dtype, DType::kFloat32);
  // parts[2] -> DQ -> Q(0.05) -> DQ: the requantize stays.
  EXPECT_EQ(count(g, kQuantize), 2);
  EXPECT_EQ(count(g, kDequantize), 3);
  EXPECT_EQ(producer_of(g, parts[0]).meta.at("output_qparams"),
            "0: int8 q(0.02, -4); 1: int8 q(0.02, -4); 2: int8 q(0.02, -4)");
}

// A quantize whose output is a graph output stays; so does the float output of a node that is
// itself a graph output.
TEST(FoldAndAnnotateQParams, GraphOutputQuantizeStays) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 4, 4}));
  const ValueId xq = qdq(g, x, 0.02, 3);
  const ValueId conv =
      conv2d(g, xq, weight(g, "w", {2, 2, 3, 3}), bias(g, "b", bias_scales(0.02, 2)));
  const ValueId out_q = quantize(g, conv, 0.05, 0);
  const ValueId tanh = g.call("aten.tanh.default", {xq}, {})[0];
  const ValueId tanh_q = dequantize(g, quantize(g, tanh, 0.01, 0), 0.01, 0);
  g.set_outputs({out_q, tanh, tanh_q});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  EXPECT_EQ(g.outputs()[0], out_q);
  EXPECT_EQ(producer_of(g, out_q).op, kQuantize);
  EXPECT_EQ(info_of(g, conv).dtype, DType::kFloat32);
  EXPECT_EQ(info_of(g, tanh).dtype, DType::kFloat32);
  EXPECT_EQ(count(g, kQuantize), 3);  // the input's, the graph output's and tanh's
  EXPECT_EQ(count(g, kDequantizePerChannel), 0);
}

// The dequantize's attributes are the truth: a constant without qparams takes them; one with
// other qparams does not fold.
TEST(FoldAndAnnotateQParams, ConstantQParamsFromTheDequantize) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 5}));
  const ValueId plain = weight(g, "plain", {3, 5}, 0, /*with_qparams=*/false);
  const ValueId l1 = g.call("aten.linear.default", {qdq(g, x, 0.02, 0), plain}, {})[0];
  // A per-channel DQ along axis 1 of a constant that says axis 0.
  const ValueId other = weight(g, "other", {3, 5});
  const ValueId w = producer_of(g, other).inputs[0];
  const Attrs axis1 = per_channel_attrs(weight_scales(5), 1, -127, 127, DType::kInt8);
  const ValueId other_dq = g.call(kDequantizePerChannel, {w}, axis1)[0];
  const ValueId l2 = g.call("aten.linear.default", {qdq(g, x, 0.02, 0), other_dq}, {})[0];
  g.set_outputs({qdq(g, l1, 0.1, 0), qdq(g, l2, 0.1, 0)});
  const ValueId plain_int8 = producer_of(g, plain).inputs[0];
  g.dead_code_elimination();  // the unused axis-0 dequantize of "other"

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  ASSERT_TRUE(info_of(g, plain_int8).qparams.has_value());
  EXPECT_EQ(info_of(g, plain_int8).qparams->axis, 0);
  EXPECT_EQ(g.value(plain_int8).data.info().qparams, info_of(g, plain_int8).qparams);
  EXPECT_EQ(producer_of(g, l1).inputs[1], plain_int8);
  EXPECT_EQ(producer_of(g, l2).inputs[1], other_dq);  // not folded
  EXPECT_EQ(count(g, kDequantizePerChannel), 1);
}

// Moving integers equals DQ -> op -> Q only inside the quant range: an int8 graph input may
// hold -128 where the qparams say [-127, 127].
TEST(FoldAndAnnotateQParams, DataMovementOnAGraphInputNeedsTheFullRange) {
  for (const int64_t qmin : {-128, -127}) {
    Graph g;
    TensorInfo info;
    info.dtype = DType::kInt8;
    info.shape = {4, 64};
    const ValueId x = g.add_input("x", info);
    Attrs attrs = qattrs(0.1, 0);
    attrs[2].second = qmin;
    const ValueId v = g.call("aten.view_copy.default", {g.call(kDequantize, {x}, attrs)[0]},
                             {{"size", std::vector<int64_t>{256}}})[0];
    g.set_outputs({g.call(kDequantize, {g.call(kQuantize, {v}, attrs)[0]}, attrs)[0]});

    EXPECT_EQ(run_and_compare(g, fold_and_annotate_qparams), qmin == -128) << qmin;
  }
}

// constant_pad_nd on int8 pads with the quantized pad value.
TEST(FoldAndAnnotateQParams, ConstantPadQuantizesItsValue) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 3}));
  const ValueId pad = g.call("aten.constant_pad_nd.default", {qdq(g, x, 0.02, 5)},
                             {{"pad", std::vector<int64_t>{1, 2}}, {"value", 0.5}})[0];
  g.set_outputs({qdq(g, pad, 0.02, 5)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  const Node& node = producer_of(g, pad);
  EXPECT_EQ(info_of(g, pad).dtype, DType::kInt8);
  EXPECT_EQ(OpArgs(node.op, node.name, node.attrs).f("value"), 30.0);  // 5 + 0.5 / 0.02
}

// Without a value attribute it pads with the real 0.0: the zero point on int8.
TEST(FoldAndAnnotateQParams, ConstantPadWithoutValuePadsWithTheZeroPoint) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 3}));
  const ValueId pad =
      g.call("aten.constant_pad_nd.default", {qdq(g, x, 0.02, 5)}, {{"pad", std::vector<int64_t>{1, 2}}})[0];
  g.set_outputs({qdq(g, pad, 0.02, 5)});

  EXPECT_TRUE(run_and_compare(g, fold_and_annotate_qparams));
  const Node& node = producer_of(g, pad);
  EXPECT_EQ(OpArgs(node.op, node.name, node.attrs).f("value"), 5.0);
}

}  // namespace
}  // namespace cortexm
