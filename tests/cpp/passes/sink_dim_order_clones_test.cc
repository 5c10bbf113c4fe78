// SinkDimOrderClones: clones to contiguous move past layout-agnostic consumers; with
// FoldInverseDimOrderClone after it, the same int8 outputs with fewer nodes.
#include "graph/layout.h"
#include "ops/data_movement/data_movement_op_names.h"
#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::run_and_compare;

constexpr const char* kAct = "cortex_m.quantized_activation.default";
const std::vector<int64_t> kChannelsLast = {0, 2, 3, 1};

TensorInfo int8_info(std::vector<int64_t> shape) {
  TensorInfo info;
  info.dtype = DType::kInt8;
  info.shape = std::move(shape);
  QuantParams q;
  q.scales = {0.05};
  q.zero_points = {-3};
  info.qparams = q;
  return info;
}

ValueId table(Graph& g, int shift) {
  Tensor t(int8_info({256}));
  t.mutable_info().qparams.reset();
  for (int i = 0; i < 256; ++i) t.data<int8_t>()[i] = static_cast<int8_t>((i * 7 + shift) % 256 - 128);
  return g.add_constant("table" + std::to_string(shift), t);
}

ValueId clone(Graph& g, ValueId x, std::vector<int64_t> order) {
  return g.call(kClone, {x}, {{"dim_order", std::move(order)}})[0];
}

ValueId contiguous(Graph& g, ValueId x) {
  return g.call(kClone, {x}, {{"dim_order", contiguous_dim_order(g.value(x).info.shape.size())}})[0];
}

ValueId act(Graph& g, ValueId x, int shift) { return g.call(kAct, {x, table(g, shift)}, {})[0]; }

ValueId add(Graph& g, ValueId a, ValueId b) {
  Attrs attrs;
  for (auto [name, v] : std::vector<std::pair<const char*, int64_t>>{
           {"self_zero_point", 3}, {"self_multiplier", 1 << 30}, {"self_shift", -1},
           {"other_zero_point", -5}, {"other_multiplier", 3 << 28}, {"other_shift", -1},
           {"output_zero_point", 2}, {"output_multiplier", 1 << 30}, {"output_shift", -19}})
    attrs.emplace_back(name, v);
  return g.call("cortex_m.quantized_add.default", {a, b}, attrs)[0];
}

int64_t clones(const Graph& g) {
  const auto counts = g.op_counts();
  return counts.count(kClone) ? counts.at(kClone) : 0;
}

// Sink, then fold: the int8 outputs never change, and the graph ends with fewer nodes.
void sink_and_fold(Graph& g) {
  EXPECT_TRUE(run_and_compare(g, sink_dim_order_clones));
  run_and_compare(g, fold_inverse_dim_order_clone);
}

TEST(SinkDimOrderClones, ActivationRunsChannelsLastAndThePairFolds) {
  // x -> cl -> contiguous -> act -> cl -> act: the middle layout round trip goes.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 4, 3, 5}));
  const ValueId a = act(g, contiguous(g, clone(g, x, kChannelsLast)), 1);
  g.set_outputs({act(g, clone(g, a, kChannelsLast), 2)});
  ASSERT_EQ(clones(g), 3);
  const size_t before = g.num_nodes();
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 1);
  EXPECT_EQ(g.num_nodes(), before - 2);
  EXPECT_EQ(g.value(a).info.effective_dim_order(), kChannelsLast);
}

TEST(SinkDimOrderClones, PadRunsChannelsLast) {
  // resnet8's stride-2 blocks: contiguous -> pad (0, 1, 0, 1) -> channels-last -> conv.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 4, 5, 5}));
  const ValueId cl = act(g, clone(g, x, kChannelsLast), 1);
  const ValueId padded = g.call("aten.constant_pad_nd.default", {contiguous(g, cl)},
                                {{"pad", std::vector<int64_t>{0, 1, 0, 1}}, {"value", -3.0}})[0];
  g.set_outputs({act(g, clone(g, padded, kChannelsLast), 2)});
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 1);
  EXPECT_EQ(g.value(padded).info.effective_dim_order(), kChannelsLast);
}

TEST(SinkDimOrderClones, SameShapeAddTakesBothClonesOutAsOne) {
  Graph g;
  const ValueId x = g.add_input("x", int8_info({2, 3, 4, 4}));
  const ValueId y = g.add_input("y", int8_info({2, 3, 4, 4}));
  const ValueId sum = add(g, contiguous(g, clone(g, x, kChannelsLast)),
                          contiguous(g, clone(g, y, kChannelsLast)));
  g.set_outputs({act(g, clone(g, sum, kChannelsLast), 1)});
  ASSERT_EQ(clones(g), 5);
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 2);  // only the two into channels-last
  EXPECT_EQ(g.value(sum).info.effective_dim_order(), kChannelsLast);
}

TEST(SinkDimOrderClones, BroadcastingMulOfOneRankRunsChannelsLast) {
  // Squeeze-and-excite: [1, C, H, W] * [1, C, 1, 1], both channels-last before the clones.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 6, 4, 5}));
  const ValueId s = g.add_input("s", int8_info({1, 6, 1, 1}));
  const ValueId xs = act(g, clone(g, x, kChannelsLast), 1);
  const ValueId ss = act(g, clone(g, s, kChannelsLast), 2);
  Attrs attrs;
  for (auto [name, v] : std::vector<std::pair<const char*, int64_t>>{
           {"self_zero_point", 3}, {"other_zero_point", -5}, {"output_zero_point", 2},
           {"output_multiplier", 1 << 30}, {"output_shift", -6}})
    attrs.emplace_back(name, v);
  const ValueId prod = g.call("cortex_m.quantized_mul.default", {contiguous(g, xs), contiguous(g, ss)}, attrs)[0];
  g.set_outputs({act(g, clone(g, prod, kChannelsLast), 3)});
  ASSERT_EQ(clones(g), 5);
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 2);
  EXPECT_EQ(g.value(prod).info.effective_dim_order(), kChannelsLast);
}

TEST(SinkDimOrderClones, Int16AddAndBroadcastingMulRunChannelsLast) {
  // The squeeze-and-excite shape in int16, channels-last inputs: x * s + x, then back to
  // channels-last; the clones into the mul and the add go.
  Graph g;
  TensorInfo x16 = int8_info({2, 6, 4, 5}), s16 = int8_info({2, 6, 1, 1});
  for (TensorInfo* info : {&x16, &s16}) {
    info->dtype = DType::kInt16;
    info->qparams->zero_points = {0};
    info->dim_order = kChannelsLast;
  }
  const ValueId x = g.add_input("x", x16);
  const ValueId s = g.add_input("s", s16);
  const ValueId prod = g.call("cortex_m.quantized_mul_s16.default", {contiguous(g, x), contiguous(g, s)},
                              {{"output_multiplier", int64_t{1} << 30}, {"output_shift", int64_t{-14}}})[0];
  const ValueId sum = g.call("cortex_m.quantized_add_s16.default", {prod, contiguous(g, x)},
                             {{"self_multiplier", int64_t{1} << 30}, {"self_shift", int64_t{-1}},
                              {"other_multiplier", int64_t{1} << 30}, {"other_shift", int64_t{-1}},
                              {"output_multiplier", int64_t{1} << 30}, {"output_shift", int64_t{0}}})[0];
  g.set_outputs({clone(g, sum, kChannelsLast)});
  ASSERT_EQ(clones(g), 4);
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 2) << g.to_string();  // only the round trip at the graph output
  EXPECT_EQ(g.value(prod).info.effective_dim_order(), kChannelsLast);
  EXPECT_EQ(g.value(sum).info.effective_dim_order(), kChannelsLast);
}

TEST(SinkDimOrderClones, SizeOneViewsKeepTheOrderAndThePairFoldsAcrossThem) {
  // [2, 5, 1, 3] channels-last -> contiguous -> squeeze H -> [0, 2, 1] (log_softmax's way) -> act.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({2, 5, 1, 3}));
  const ValueId cl = act(g, clone(g, x, kChannelsLast), 1);
  const ValueId squeezed =
      g.call("aten.squeeze_copy.dims", {contiguous(g, cl)}, {{"dim", std::vector<int64_t>{2}}})[0];
  g.set_outputs({act(g, clone(g, squeezed, {0, 2, 1}), 2)});
  ASSERT_EQ(clones(g), 3);
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 1);
  EXPECT_EQ(g.value(squeezed).info.effective_dim_order(), (std::vector<int64_t>{0, 2, 1}));
}

TEST(SinkDimOrderClones, CloneVanishesInAViewToContiguousBytes) {
  // [1, 6, 1, 1] channels-last is contiguous bytes: the view to [1, 6] needs no clone before it.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 6, 1, 1}));
  const ValueId cl = act(g, clone(g, x, kChannelsLast), 1);
  const ValueId flat =
      g.call("aten.view_copy.default", {contiguous(g, cl)}, {{"size", std::vector<int64_t>{1, 6}}})[0];
  g.set_outputs({act(g, flat, 2)});
  EXPECT_TRUE(run_and_compare(g, sink_dim_order_clones));
  EXPECT_EQ(clones(g), 1);
  EXPECT_TRUE(g.value(flat).info.contiguous());
}

TEST(SinkDimOrderClones, StopsWhereLayoutMattersOrNothingIsGained) {
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 4, 3, 5}));
  const ValueId small = g.add_input("s", int8_info({3, 5}));
  const ValueId back = contiguous(g, clone(g, x, kChannelsLast));
  // A dequantize (float side), an add broadcasting over another rank, a reshape that moves
  // elements, and an activation whose input clone has another reader: the clone stays where it is.
  const ValueId dq = g.call("cortex_m.dequantize_per_tensor.default", {back},
                            {{"scale", 0.05}, {"zero_point", int64_t{-3}}, {"quant_min", int64_t{-128}},
                             {"quant_max", int64_t{127}}, {"dtype", DType::kInt8}})[0];
  const ValueId broadcast = add(g, back, contiguous(g, clone(g, small, {1, 0})));
  const ValueId flat =
      g.call("aten.view_copy.default", {back}, {{"size", std::vector<int64_t>{1, 60}}})[0];
  g.set_outputs({dq, broadcast, flat, act(g, back, 1)});
  const int64_t before = clones(g);
  EXPECT_FALSE(run_and_compare(g, sink_dim_order_clones));
  EXPECT_EQ(clones(g), before);
}

TEST(SinkDimOrderClones, LeavesAMoveThatMeetsNothing) {
  // conv1d's output side: channels-last -> contiguous -> view [N, C, W] -> dequantize. Moving the
  // clone after the view would only trade places.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({2, 5, 1, 3}));
  const ValueId cl = act(g, clone(g, x, kChannelsLast), 1);
  const ValueId flat =
      g.call("aten.view_copy.default", {contiguous(g, cl)}, {{"size", std::vector<int64_t>{2, 5, 3}}})[0];
  g.set_outputs({g.call("cortex_m.dequantize_per_tensor.default", {flat},
                        {{"scale", 0.05}, {"zero_point", int64_t{-3}}, {"quant_min", int64_t{-128}},
                         {"quant_max", int64_t{127}}, {"dtype", DType::kInt8}})[0]});
  EXPECT_FALSE(run_and_compare(g, sink_dim_order_clones));
  EXPECT_TRUE(g.value(flat).info.contiguous());
}

TEST(SinkDimOrderClones, SquareOfOneCloneMovesIt) {
  // x * x (silero's magnitude) with x behind one clone: the clone goes once.
  Graph g;
  const ValueId x = g.add_input("x", int8_info({1, 3, 4, 4}));
  const ValueId back = contiguous(g, clone(g, x, kChannelsLast));
  const ValueId sq = add(g, back, back);
  g.set_outputs({act(g, clone(g, sq, kChannelsLast), 1)});
  sink_and_fold(g);
  EXPECT_EQ(clones(g), 1);
}

TEST(SinkDimOrderClones, KeepsAddsOfDifferentOrders) {
  Graph g;
  const ValueId x = g.add_input("x", int8_info({2, 3, 4, 4}));
  const ValueId y = g.add_input("y", int8_info({2, 3, 4, 4}));
  const ValueId sum = add(g, contiguous(g, clone(g, x, kChannelsLast)),
                          contiguous(g, clone(g, y, {0, 3, 1, 2})));
  g.set_outputs({act(g, sum, 1)});
  EXPECT_FALSE(run_and_compare(g, sink_dim_order_clones));
  EXPECT_TRUE(g.value(sum).info.contiguous());
}

}  // namespace
}  // namespace cortexm
