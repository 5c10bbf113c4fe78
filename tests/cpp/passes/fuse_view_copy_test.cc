// FuseViewCopy: exact (run_and_compare); with the clean-up passes, a stack of Conv1d + ReLU keeps
// only the view_copy / _clone_dim_order at its boundaries (issue 5's wav2letter goal).
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

ValueId view(Graph& g, ValueId x, std::vector<int64_t> size) {
  return g.call(kView, {x}, {{"size", std::move(size)}})[0];
}

TEST(FuseViewCopy, ConsecutiveViewsCollapse) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3, 4}));
  g.set_outputs({view(g, view(g, view(g, x, {6, 4}), {24}), {4, 6})});
  EXPECT_TRUE(run_and_compare(g, fuse_view_copy));
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(g.order()[0]).inputs[0], x);
}

TEST(FuseViewCopy, SharedViewStaysForItsOtherReader) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3, 4}));
  const ValueId a = view(g, x, {6, 4});
  g.set_outputs({view(g, a, {24}), g.call("aten.relu.default", {a}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fuse_view_copy));
  EXPECT_EQ(count(g, kView), 2);
  EXPECT_EQ(g.node(g.producer(g.outputs()[0])).inputs[0], x);
}

TEST(FuseViewCopy, ViewsMoveThroughAnElementwiseOp) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 4, 1, 5}, 0.05, 3);
  const ValueId v = view(g, x, {2, 4, 5});
  const ValueId r = quantized(g, g.call("aten.relu.default", {v}, {})[0], qp(0.05, 3));
  g.set_outputs({view(g, r, {2, 4, 1, 5})});
  EXPECT_TRUE(run_and_compare(g, fuse_view_copy));
  EXPECT_EQ(g.value(r).info.shape, (std::vector<int64_t>{2, 4, 1, 5}));
  EXPECT_TRUE(run_and_compare(g, remove_noop_view_copy));
  EXPECT_EQ(g.op_counts(), (std::map<std::string, int64_t>{{"aten.relu.default", 1}}));
}

TEST(FuseViewCopy, ViewsMoveThroughAContiguousClone) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({6, 4}));
  const ValueId c =
      g.call(kClone, {view(g, x, {2, 3, 4})}, {{"dim_order", std::vector<int64_t>{0, 1, 2}}})[0];
  g.set_outputs({view(g, c, {24})});
  EXPECT_TRUE(run_and_compare(g, fuse_view_copy));
  EXPECT_EQ(g.value(c).info.shape, (std::vector<int64_t>{24}));
  EXPECT_TRUE(g.value(c).info.contiguous());
}

TEST(FuseViewCopy, LayoutChangingCloneBlocks) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 12}));
  const ValueId c = g.call(kClone, {view(g, x, {2, 3, 2, 2})},
                           {{"dim_order", std::vector<int64_t>{0, 2, 3, 1}}})[0];
  g.set_outputs({view(g, c, {24})});
  EXPECT_FALSE(run_and_compare(g, fuse_view_copy));
}

TEST(FuseViewCopy, SharedMiddleValueBlocks) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 12}));
  const ValueId r = g.call("aten.relu.default", {view(g, x, {2, 3, 4})}, {})[0];
  g.set_outputs({view(g, r, {24}), r});
  EXPECT_FALSE(run_and_compare(g, fuse_view_copy));
}

TEST(FuseViewCopy, NonElementwiseOpBlocks) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 12}));
  const ValueId s =
      g.call("aten._softmax.default", {view(g, x, {2, 3, 4})}, {{"dim", int64_t{-1}}})[0];
  g.set_outputs({view(g, s, {24})});
  EXPECT_FALSE(run_and_compare(g, fuse_view_copy));
}

// Three folded Conv1d + ReLU: after the lowering and the clean-up, consecutive convolutions read
// each other directly; 2 view_copy and 2 _clone_dim_order remain, at the boundaries.
TEST(FuseViewCopy, Conv1dReluStackKeepsOnlyBoundaryLayoutNodes) {
  Graph g;
  const QuantParams q = qp(0.05, -20);  // relu outputs share the conv's qparams
  ValueId v = q_input(g, "x", {2, 3, 40}, 0.04, 5);
  int64_t c_in = 3;
  for (int layer = 0; layer < 3; ++layer) {
    const int64_t c_out = 4 + layer, k = 5 - 2 * layer;
    std::vector<double> s_w(static_cast<size_t>(c_out), 0.004 + 0.001 * layer), s_b;
    for (double s : s_w) s_b.push_back(g.value(v).info.qparams->scales[0] * s);
    const ValueId w = int8_const(g, "w", {c_out, c_in, k}, qp_channels(s_w, 0), 20 + layer);
    const ValueId b =
        int32_const(g, "b", random_int32s(c_out, -4000, 4000, layer), qp_channels(s_b, 0));
    const ValueId y = g.call(kConv, {v, w, b},
                             {{"stride", std::vector<int64_t>{1 + layer % 2}},
                              {"padding", std::vector<int64_t>{k / 2}},
                              {"dilation", std::vector<int64_t>{1}}})[0];
    v = quantized(g, g.call("aten.relu.default", {quantized(g, y, q)}, {})[0], q);
    c_in = c_out;
  }
  g.set_outputs({v});
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_TRUE(run_and_compare(g, activation_fusion));
  EXPECT_TRUE(run_and_compare(g, fuse_view_copy));
  EXPECT_TRUE(run_and_compare(g, remove_noop_view_copy));
  EXPECT_TRUE(run_and_compare(g, fold_inverse_dim_order_clone));
  run_and_compare(g, dead_code_elimination);
  EXPECT_EQ(g.op_counts(), (std::map<std::string, int64_t>{{kQConv, 3}, {kClone, 2}, {kView, 2}}));
  int chained = 0;
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    if (n.op != kQConv) continue;
    EXPECT_EQ(attr_i(n, "activation_min"), -20);
    const NodeId p = g.producer(n.inputs[0]);
    chained += g.node(p).op == kQConv;
  }
  EXPECT_EQ(chained, 2);
  // The boundaries: x -> view -> clone -> conv ... conv -> clone -> view -> output.
  EXPECT_EQ(output_producer(g).op, kView);
  EXPECT_EQ(g.node(g.producer(output_producer(g).inputs[0])).op, kClone);
}

}  // namespace
}  // namespace cortexm
