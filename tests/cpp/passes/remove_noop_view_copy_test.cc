#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

TEST(RemoveNoopViewCopy, DropsViewToTheSameShape) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3}));
  const ValueId r = g.call("aten.relu.default", {x}, {})[0];
  const ValueId v = g.call("aten.view_copy.default", {r}, {{"size", std::vector<int64_t>{2, 3}}})[0];
  g.set_outputs({g.call("aten.relu.default", {v}, {})[0]});
  EXPECT_TRUE(run_and_compare(g, remove_noop_view_copy));
  EXPECT_EQ(g.op_counts().count("aten.view_copy.default"), 0u);
}

TEST(RemoveNoopViewCopy, KeepsRealReshapes) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3}));
  g.set_outputs({g.call("aten.view_copy.default", {x}, {{"size", std::vector<int64_t>{3, 2}}})[0]});
  EXPECT_FALSE(run_and_compare(g, remove_noop_view_copy));
  EXPECT_EQ(g.num_nodes(), 1u);
}

}  // namespace
}  // namespace cortexm
