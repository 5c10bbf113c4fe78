#include "qdq_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

ValueId permute(Graph& g, ValueId x, std::vector<int64_t> dims) {
  return g.call("aten.permute_copy.default", {x}, {{"dims", dims}})[0];
}

// What linear decomposes into: addmm(DQ(b), DQ(x), permute_copy(DQ(w per-channel axis 0))).
struct Addmm {
  Graph g;
  ValueId w_int8 = kNoValue, t = kNoValue, mm = kNoValue;

  Addmm() {
    const ValueId x = g.add_input("x", float_info({3, 8}));
    const ValueId w = weight(g, "w", {6, 8});
    w_int8 = producer_of(g, w).inputs[0];
    t = permute(g, w, {1, 0});
    mm = g.call("aten.addmm.default", {bias(g, "b", bias_scales(0.02, 6)), qdq(g, x, 0.02, 0), t},
                {})[0];
    g.set_outputs({qdq(g, mm, 0.05, -3)});
  }

  void expect_lowerable() const {
    EXPECT_EQ(count(g, kDequantizePerChannel), 0);
    const Node& node = producer_of(g, mm);
    EXPECT_EQ(node.inputs[2], t);
    EXPECT_EQ(producer_of(g, t).inputs[0], w_int8);  // the permute runs on the int8 weight
    const TensorInfo& info = info_of(g, t);
    EXPECT_EQ(info.dtype, DType::kInt8);
    ASSERT_TRUE(info.qparams.has_value());
    EXPECT_EQ(info.qparams->axis, 1);
    EXPECT_EQ(info.qparams->scales, weight_scales(6));
    EXPECT_EQ(node.meta.at("input_qparams"),
              "0: int32 q(axis 0, 6 scales); 1: int8 q(0.02, 0); 2: int8 q(axis 1, 6 scales)");
    EXPECT_EQ(info_of(g, mm).qparams, per_tensor(0.05, -3));
  }
};

TEST(PropagateQParams, AddmmPermutedWeightAfterFold) {
  Addmm a;
  EXPECT_TRUE(run_and_compare(a.g, fold_and_annotate_qparams));
  EXPECT_EQ(count(a.g, kDequantizePerChannel), 1);  // the weight's, before the permute
  EXPECT_TRUE(run_and_compare(a.g, propagate_qparams));
  a.expect_lowerable();
  EXPECT_FALSE(fold_and_annotate_qparams(a.g, TargetConfig{}));
}

TEST(PropagateQParams, AddmmPermutedWeightBeforeFold) {
  Addmm a;
  EXPECT_TRUE(run_and_compare(a.g, propagate_qparams));
  // The addmm, a reader of the moved dequantize, got the fold step already.
  EXPECT_FALSE(run_and_compare(a.g, fold_and_annotate_qparams));
  a.expect_lowerable();
  EXPECT_FALSE(propagate_qparams(a.g, TargetConfig{}));
}

// squeeze and unsqueeze keep the channel dim: the axis follows it. A view that splits the
// channel dim is left behind the dequantize.
TEST(PropagateQParams, PerChannelAxisThroughReshapes) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 2, 3}));
  const ValueId w = weight(g, "w", {1, 4, 3}, 1);
  const ValueId w_int8 = producer_of(g, w).inputs[0];
  const ValueId sq = g.call("aten.squeeze_copy.dims", {w}, {{"dim", std::vector<int64_t>{0}}})[0];
  const ValueId un = g.call("aten.unsqueeze_copy.default", {sq}, {{"dim", int64_t{2}}})[0];
  const ValueId split = g.call("aten.view_copy.default", {un},
                               {{"size", std::vector<int64_t>{2, 2, 3}}})[0];
  g.set_outputs({g.call("aten.add.Tensor", {x, split}, {})[0]});

  EXPECT_TRUE(run_and_compare(g, propagate_qparams));
  EXPECT_EQ(producer_of(g, sq).inputs[0], w_int8);
  EXPECT_EQ(info_of(g, sq).qparams->axis, 0);
  EXPECT_EQ(info_of(g, un).dtype, DType::kInt8);
  ASSERT_TRUE(info_of(g, un).qparams.has_value());
  EXPECT_EQ(info_of(g, un).qparams->axis, 0);
  const Node& dq = producer_of(g, producer_of(g, split).inputs[0]);
  EXPECT_EQ(dq.op, kDequantizePerChannel);
  EXPECT_EQ(dq.inputs[0], un);
  EXPECT_EQ(OpArgs(dq.op, dq.name, dq.attrs).i("axis"), 0);
  EXPECT_EQ(info_of(g, split).dtype, DType::kFloat32);
}

// A per-tensor dequantize moves after a view read by a float op, which then folds it.
TEST(PropagateQParams, PerTensorThroughViewToAFloatOp) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 6}));
  const ValueId v = g.call("aten.view_copy.default", {qdq(g, x, 0.02, 1)},
                           {{"size", std::vector<int64_t>{3, 4}}})[0];
  const ValueId gelu = g.call("aten.gelu.default", {v}, {})[0];
  g.set_outputs({gelu});

  EXPECT_TRUE(run_and_compare(g, propagate_qparams));
  EXPECT_EQ(count(g, kDequantize), 0);
  EXPECT_EQ(info_of(g, v).qparams, per_tensor(0.02, 1));
  EXPECT_EQ(producer_of(g, gelu).inputs[0], v);
  EXPECT_EQ(producer_of(g, gelu).meta.at("input_qparams"), "0: int8 q(0.02, 1)");
}

// DQ -> view -> Q with the same qparams is FoldAndAnnotateQParams' case; a view that is a graph
// output has no consumer to help. Both stay.
TEST(PropagateQParams, LeavesSharedQParamsAndGraphOutputs) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 6}));
  const ValueId v = g.call("aten.view_copy.default", {qdq(g, x, 0.02, 1)},
                           {{"size", std::vector<int64_t>{3, 4}}})[0];
  const ValueId p = permute(g, qdq(g, x, 0.02, 1), {1, 0});
  g.set_outputs({qdq(g, v, 0.02, 1), p});

  EXPECT_FALSE(run_and_compare(g, propagate_qparams));
  EXPECT_EQ(info_of(g, v).dtype, DType::kFloat32);
  EXPECT_EQ(info_of(g, p).dtype, DType::kFloat32);
}

}  // namespace
}  // namespace cortexm
