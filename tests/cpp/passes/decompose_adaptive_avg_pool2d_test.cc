#include "pass_test_util.h"

namespace cortexm {
namespace {

using testing::float_info;
using testing::run_and_compare;

ValueId adaptive(Graph& g, ValueId x, std::vector<int64_t> size) {
  return g.call("aten.adaptive_avg_pool2d.default", {x}, {{"output_size", size}})[0];
}

TEST(DecomposeAdaptiveAvgPool2d, DivisibleBecomesAvgPool) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({2, 3, 8, 6}));
  g.set_outputs({adaptive(g, x, {2, 3}), adaptive(g, x, {1, 1})});
  EXPECT_TRUE(run_and_compare(g, decompose_adaptive_avg_pool2d));
  EXPECT_EQ(g.op_counts(), (std::map<std::string, int64_t>{{"aten.avg_pool2d.default", 2}}));
}

TEST(DecomposeAdaptiveAvgPool2d, UnevenWindowsStay) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 3, 7, 5}));
  g.set_outputs({adaptive(g, x, {2, 2})});
  EXPECT_FALSE(run_and_compare(g, decompose_adaptive_avg_pool2d));
  EXPECT_EQ(g.op_counts().count("aten.adaptive_avg_pool2d.default"), 1u);
}

}  // namespace
}  // namespace cortexm
