// ConvertToCortexM on maximum / minimum: quantized_add's multipliers, broadcasting, unequal
// qparams, within 1 LSB of the folded graph.
#include "convert_test_util.h"
#include "cortexm/kernels/minmax_params.h"

namespace cortexm {
namespace {

using namespace testing;

Graph binary(const char* op, std::vector<int64_t> a_shape, std::vector<int64_t> b_shape,
             QuantParams qa, QuantParams qb, QuantParams qo) {
  Graph g;
  const ValueId a = g.add_input("a", int8_info(std::move(a_shape), std::move(qa)));
  const ValueId b = g.add_input("b", int8_info(std::move(b_shape), std::move(qb)));
  g.set_outputs({quantized(g, g.call(op, {a, b}, {})[0], std::move(qo))});
  return g;
}

TEST(ConvertMinMax, MaximumWithUnequalQparams) {
  Graph g = binary("aten.maximum.default", {2, 3, 4, 5}, {2, 3, 4, 5}, qp(0.03, -4), qp(0.07, 9),
                   qp(0.05, 2));
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Node& n = only(g, "cortex_m.quantized_maximum.default");
  const QuantizedMultiplier a = quantize_multiplier(0.03 / 0.14);
  const QuantizedMultiplier o = quantize_multiplier(0.14 / ((1 << kMinMaxLeftShift) * 0.05));
  EXPECT_EQ(attr_i(n, "self_zero_point"), -4);
  EXPECT_EQ(attr_i(n, "self_multiplier"), a.multiplier);
  EXPECT_EQ(attr_i(n, "output_multiplier"), o.multiplier);
  EXPECT_EQ(attr_i(n, "output_shift"), o.shift);
}

// Scale ratios that are not simple fractions: exact ties (where the folded graph's float rounds
// half to even and the kernel half away from zero) stay rare.
TEST(ConvertMinMax, MinimumBroadcasts) {
  Graph g = binary("aten.minimum.default", {2, 3, 4, 5}, {1, 3, 1, 1}, qp(0.0513, 0),
                   qp(0.0217, -20), qp(0.0419, 7));
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, "cortex_m.quantized_minimum.default"), 1);
}

TEST(ConvertMinMax, EqualQparamsAreExact) {
  Graph g = binary("aten.maximum.default", {7, 9}, {7, 9}, qp(0.05, 3), qp(0.05, 3), qp(0.05, 3));
  const LsbDiff d = run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(d.off, 0);
}

}  // namespace
}  // namespace cortexm
