// FoldPermuteDimOrderClone: a clone next to a permute_copy folds into it, the same outputs; an
// NHWC value permuted to NCHW in channels-last order keeps its bytes (the planner's alias).
#include "graph/layout.h"
#include "ops/data_movement/data_movement_op_names.h"
#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

constexpr const char* kPermute = "aten.permute_copy.default";
const std::vector<int64_t> kChannelsLast = {0, 2, 3, 1};
const std::vector<int64_t> kContiguous = {0, 1, 2, 3};
const std::vector<int64_t> kToNchw = {0, 3, 1, 2};
const std::vector<int64_t> kToNhwc = {0, 2, 3, 1};

TEST(FoldPermuteDimOrderClone, PermuteWritesItsClonesOrder) {
  // an imported NHWC input: permute to NCHW, clone to channels-last for a conv
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 5, 4, 3}));
  const ValueId p = g.call(kPermute, {x}, {{"dims", kToNchw}})[0];
  const ValueId cl = g.call(kClone, {p}, {{"dim_order", kChannelsLast}})[0];
  g.set_outputs({g.call("aten.relu.default", {cl}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_permute_dim_order_clone));
  EXPECT_EQ(g.op_counts().count(kClone), 0u);
  const Node& permute = g.node(g.producer(g.node(g.order().back()).inputs[0]));
  ASSERT_EQ(permute.op, kPermute);
  EXPECT_EQ(g.value(permute.outputs[0]).info.dim_order, kChannelsLast);
  EXPECT_TRUE(permute_keeps_bytes(g.value(x).info, g.value(permute.outputs[0]).info, kToNchw));
}

TEST(FoldPermuteDimOrderClone, PermuteReadsTheClonesInput) {
  // a channels-last conv output back to contiguous, then to NHWC before a reshape
  Graph g;
  TensorInfo info = float_info({1, 3, 5, 4});
  info.dim_order = kChannelsLast;
  const ValueId x = g.add_input("x", info);
  const ValueId c = g.call(kClone, {x}, {{"dim_order", kContiguous}})[0];
  const ValueId p = g.call(kPermute, {c}, {{"dims", kToNhwc}})[0];
  g.set_outputs({g.call("aten.relu.default", {p}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_permute_dim_order_clone));
  EXPECT_EQ(g.op_counts().count(kClone), 0u);
  const Node& permute = g.node(g.producer(g.node(g.order().back()).inputs[0]));
  EXPECT_EQ(permute.inputs[0], x);
  EXPECT_TRUE(permute_keeps_bytes(g.value(x).info, g.value(permute.outputs[0]).info, kToNhwc));
}

TEST(FoldPermuteDimOrderClone, KeepsClonesWithOtherReaders) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 5, 4, 3}));
  const ValueId p = g.call(kPermute, {x}, {{"dims", kToNchw}})[0];
  const ValueId cl = g.call(kClone, {p}, {{"dim_order", kChannelsLast}})[0];
  g.set_outputs({g.call("aten.relu.default", {cl}, {})[0], g.call("aten.relu.default", {p}, {})[0]});
  EXPECT_FALSE(run_and_compare(g, fold_permute_dim_order_clone));
  EXPECT_EQ(g.op_counts().at(kClone), 1);
}

TEST(PermuteKeepsBytes, OnlyWhenEveryElementStays) {
  TensorInfo nhwc = float_info({1, 5, 4, 3});
  TensorInfo nchw = float_info({1, 3, 5, 4});
  EXPECT_FALSE(permute_keeps_bytes(nhwc, nchw, kToNchw));  // a contiguous NCHW output moves them
  nchw.dim_order = kChannelsLast;
  EXPECT_TRUE(permute_keeps_bytes(nhwc, nchw, kToNchw));
  EXPECT_FALSE(permute_keeps_bytes(nhwc, nchw, {0, 3, 2, 1}));  // not the permuted shape
  // a [2, 3] transpose has the same runs as its contiguous output, but moves elements
  EXPECT_FALSE(permute_keeps_bytes(float_info({2, 3}), float_info({3, 2}), {1, 0}));
  // size-1 dims may go anywhere
  EXPECT_TRUE(permute_keeps_bytes(float_info({1, 6, 1, 1}), float_info({1, 1, 1, 6}), kToNhwc));
}

}  // namespace
}  // namespace cortexm
