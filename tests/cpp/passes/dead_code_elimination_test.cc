#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

TEST(DeadCodeElimination, RemovesUnreadNodes) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({4}));
  const ValueId used = g.call("aten.relu.default", {x}, {})[0];
  g.call("aten.sigmoid.default", {used}, {});
  g.set_outputs({used});
  EXPECT_TRUE(run_and_compare(g, dead_code_elimination));
  EXPECT_EQ(g.num_nodes(), 1u);
  EXPECT_FALSE(run_and_compare(g, dead_code_elimination));
}

}  // namespace
}  // namespace cortexm
