#include "pass_test_util.h"
#include "ops/data_movement/data_movement_op_names.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

const std::vector<int64_t> kChannelsLast = {0, 2, 3, 1};
const std::vector<int64_t> kContiguous = {0, 1, 2, 3};

TEST(FoldInverseDimOrderClone, RemovesInversePairs) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 4, 3, 3}));
  const ValueId a = g.call("aten.relu.default", {x}, {})[0];
  const ValueId cl = g.call(kClone, {a}, {{"dim_order", kChannelsLast}})[0];
  const ValueId back = g.call(kClone, {cl}, {{"dim_order", kContiguous}})[0];
  g.set_outputs({g.call("aten.relu.default", {back}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_inverse_dim_order_clone));
  EXPECT_EQ(g.op_counts().count(kClone), 0u);
  EXPECT_EQ(g.num_nodes(), 2u);
}

TEST(FoldInverseDimOrderClone, KeepsTheFirstCloneWhenItHasOtherReaders) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 4, 3, 3}));
  const ValueId cl = g.call(kClone, {x}, {{"dim_order", kChannelsLast}})[0];
  const ValueId back = g.call(kClone, {cl}, {{"dim_order", kContiguous}})[0];
  g.set_outputs({g.call("aten.relu.default", {back}, {})[0], g.call("aten.relu.default", {cl}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_inverse_dim_order_clone));
  EXPECT_EQ(g.op_counts().at(kClone), 1);
}

TEST(FoldInverseDimOrderClone, DropsClonesToTheCurrentOrder) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 4, 3, 3}));
  const ValueId same = g.call(kClone, {x}, {{"dim_order", kContiguous}})[0];
  g.set_outputs({g.call("aten.relu.default", {same}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_inverse_dim_order_clone));
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(FoldInverseDimOrderClone, KeepsRealLayoutChanges) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 4, 3, 3}));
  g.set_outputs({g.call(kClone, {x}, {{"dim_order", kChannelsLast}})[0]});
  EXPECT_FALSE(run_and_compare(g, fold_inverse_dim_order_clone));
}

TensorInfo channels_last_info(std::vector<int64_t> shape) {
  TensorInfo info = float_info(std::move(shape));
  info.dim_order = kChannelsLast;
  return info;
}

TEST(FoldInverseDimOrderClone, FoldsAPairAcrossSizeOneViews) {
  // wav2letter's end: channels-last [N, C, 1, W] -> contiguous -> view [N, C, W] -> order [0, 2, 1]
  // (class dim innermost for log_softmax): the view of the channels-last bytes is that order.
  Graph g;
  const ValueId x = g.add_input("x", channels_last_info({2, 6, 1, 3}));
  const ValueId back = g.call(kClone, {x}, {{"dim_order", kContiguous}})[0];
  const ValueId view = g.call("aten.view_copy.default", {back}, {{"size", std::vector<int64_t>{2, 6, 3}}})[0];
  const ValueId rows = g.call(kClone, {view}, {{"dim_order", std::vector<int64_t>{0, 2, 1}}})[0];
  g.set_outputs({g.call("aten.relu.default", {rows}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, fold_inverse_dim_order_clone));
  EXPECT_EQ(g.op_counts().count(kClone), 0u);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.value(view).info.effective_dim_order(), (std::vector<int64_t>{0, 2, 1}));
}

TEST(FoldInverseDimOrderClone, KeepsPairsAroundViewsThatMoveElements) {
  // Merging W into H of channels-last data reorders its bytes: both clones stay.
  Graph g;
  const ValueId x = g.add_input("x", channels_last_info({1, 4, 3, 3}));
  const ValueId back = g.call(kClone, {x}, {{"dim_order", kContiguous}})[0];
  const ValueId view = g.call("aten.view_copy.default", {back}, {{"size", std::vector<int64_t>{1, 4, 9, 1}}})[0];
  g.set_outputs({g.call("aten.relu.default", {g.call(kClone, {view}, {{"dim_order", kChannelsLast}})[0]}, {})[0]});
  EXPECT_FALSE(run_and_compare(g, fold_inverse_dim_order_clone));
  EXPECT_EQ(g.op_counts().at(kClone), 2);
}

}  // namespace
}  // namespace cortexm
