// ConvertToCortexM on int8 rescaling outside the folded form: quantize(dequantize(x)) becomes
// cortex_m.requantize; a cat of inputs dequantized at other qparams than its quantized output
// becomes an int8 cat behind requantizes. Within 1 LSB of the graph before.
#include "convert_test_util.h"
#include "passes/qparams_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kCat = "aten.cat.default";
constexpr const char* kRequantize = "cortex_m.requantize.default";

Attrs int8_attrs(double scale, int64_t zp) {
  return {{"scale", scale}, {"zero_point", zp}, {"quant_min", int64_t{-128}},
          {"quant_max", int64_t{127}}, {"dtype", DType::kInt8}};
}

ValueId quantize(Graph& g, ValueId x, double scale, int64_t zp) {
  return g.call(kQuantize, {x}, int8_attrs(scale, zp))[0];
}

ValueId dequantize(Graph& g, ValueId q, double scale, int64_t zp) {
  return g.call(kDequantize, {q}, int8_attrs(scale, zp))[0];
}

TEST(ConvertRequantize, QuantizeOfDequantize) {
  Graph g;
  const ValueId x = q_input(g, "x", {3, 50}, 0.037, -9);
  g.set_outputs({quantize(g, dequantize(g, x, 0.037, -9), 0.091, 4)});
  run_and_compare_lsb(g, convert_to_cortex_m, 0.01);
  const Node& r = only(g, kRequantize);
  EXPECT_EQ(attr_i(r, "input_zero_point"), -9);
  EXPECT_EQ(attr_i(r, "output_zero_point"), 4);
  const QuantizedMultiplier m = quantize_multiplier(0.037 / (0.091 * (1 << 20)));
  EXPECT_EQ(attr_i(r, "output_multiplier"), m.multiplier);
  EXPECT_EQ(attr_i(r, "output_shift"), m.shift);
  g.dead_code_elimination();
  EXPECT_EQ(g.num_nodes(), 1u);
}

TEST(ConvertRequantize, CatOfDifferentQparams) {
  for (int64_t dim : {0, 1, 2, -1}) {
    Graph g;
    const ValueId a = q_input(g, "a", {2, 3, 4}, 0.0513, 3);
    const ValueId b = q_input(g, "b", {2, 3, 4}, 0.0217, -7);
    const ValueId c = q_input(g, "c", {2, 3, 4}, 0.0811, 1);
    const ValueId y = g.call(kCat,
                             {dequantize(g, a, 0.0513, 3), dequantize(g, b, 0.0217, -7),
                              dequantize(g, c, 0.0811, 1)},
                             {{"dim", dim}})[0];
    g.set_outputs({quantize(g, y, 0.0811, 1)});
    run_and_compare_lsb(g, convert_to_cortex_m, 0.02, uint32_t(dim + 10));
    g.dead_code_elimination();
    EXPECT_EQ(count(g, kRequantize), 2);  // c is already at the output's qparams
    EXPECT_EQ(count(g, kCat), 1);
    EXPECT_EQ(count(g, kQuantize), 0);
    EXPECT_EQ(count(g, kDequantize), 0);
    EXPECT_EQ(g.value(g.outputs()[0]).info.dtype, DType::kInt8);
  }
}

TEST(ConvertRequantize, CatWithFloatReaderStaysFloat) {
  Graph g;
  const ValueId a = q_input(g, "a", {2, 3}, 0.0513, 3);
  const ValueId b = q_input(g, "b", {2, 3}, 0.0217, -7);
  const ValueId y =
      g.call(kCat, {dequantize(g, a, 0.0513, 3), dequantize(g, b, 0.0217, -7)}, {{"dim", int64_t{0}}})[0];
  g.set_outputs({y});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(only(g, kCat).meta.at("lowering").rfind("float: ", 0), 0u);
}

}  // namespace
}  // namespace cortexm
