#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

constexpr const char* kClone = "dim_order_ops._clone_dim_order.default";
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

}  // namespace
}  // namespace cortexm
