// ConvertToCortexM / ConvertUnfusedClamps on symmetric int16 values: table ops become
// quantized_activation_s16 (TFLite's 513-entry table) within a few LSB of the folded graph;
// unfused int16 relu / hardtanh / clamp become requantize_s16 with the clamp as its range
// (bit-exact at equal scales); int16 -> int16 quantize(dequantize(x)) becomes requantize_s16; an
// int16 mean over size-1 dims becomes a view (requantize_s16 first when the qparams differ), any
// other int16 mean quantized_mean_s16.
#include "cortexm/kernels/quantized_activation_s16.h"
#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/requantize_s16.h"
#include "int16_test_util.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/qparams_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kTable16 = "cortex_m.quantized_activation_s16.default";
constexpr const char* kRequantize16 = "cortex_m.requantize_s16.default";

Graph unary(const char* op, double s_in, double s_out, Attrs attrs = {}) {
  Graph g;
  const ValueId x = g.add_input("x", int16_info({3, 41}, qp16(s_in)));
  g.set_outputs({quantized_as(g, g.call(op, {x}, std::move(attrs))[0], DType::kInt16, qp16(s_out))});
  return g;
}

TEST(ConvertActivationS16, TableOpsWithinAFewLsb) {
  struct Case {
    const char* op;
    double s_in, s_out;
    int64_t max_lsb;
  };
  for (const Case& c : {Case{"aten.sigmoid.default", 8.0 / 32768, 1.0 / 32768, 2},
                        Case{"aten.tanh.default", 4.0 / 32768, 1.0 / 32768, 4},
                        Case{"aten.silu.default", 8.0 / 32768, 8.0 / 32768, 2},
                        Case{"aten.hardswish.default", 6.0 / 32768, 6.0 / 32768, 2}}) {
    SCOPED_TRACE(c.op);
    Graph g = unary(c.op, c.s_in, c.s_out);
    EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), c.max_lsb);
    const Node& t = only(g, kTable16);
    EXPECT_EQ(t.meta.at("lowering"), "cortex_m");
    const Value& table = g.value(t.inputs[1]);
    EXPECT_EQ(table.info.dtype, DType::kInt16);
    EXPECT_EQ(table.info.shape, std::vector<int64_t>{kActivationS16TableSize});
    EXPECT_EQ(count(g, c.op), 0);
  }
}

TEST(ConvertActivationS16, TableEndsAreTheFunctionAtTheInputRangeEnds) {
  Graph g = unary("aten.sigmoid.default", 8.0 / 32768, 1.0 / 32768);
  convert_to_cortex_m(g, TargetConfig{});
  const Tensor& table = g.value(only(g, kTable16).inputs[1]).data;
  // sigmoid(-8) = 3.4e-4 -> 11 LSB; sigmoid(8 * 32767 / 32768) -> 32758 LSB.
  EXPECT_EQ(table.data<int16_t>()[0], 11);
  EXPECT_EQ(table.data<int16_t>()[kActivationS16TableSize - 1], 32758);
}

TEST(ConvertActivationS16, MixedInt16AndInt8StaysFloat) {
  Graph g;
  const ValueId x = g.add_input("x", int16_info({3, 41}, qp16(1e-4)));
  g.set_outputs({quantized(g, g.call("aten.sigmoid.default", {x}, {})[0], qp(1.0 / 256, -128))});
  convert_to_cortex_m(g, TargetConfig{});
  EXPECT_EQ(count(g, kTable16), 0);
  EXPECT_NE(only(g, "aten.sigmoid.default").meta.at("lowering").find("not an int16"),
            std::string::npos);
}

TEST(ConvertUnfusedClampsS16, ReluAtEqualScalesIsExact) {
  Graph g = unary("aten.relu.default", 3e-4, 3e-4);
  EXPECT_EQ(run_and_compare_int(g, convert_unfused_clamps), 0);
  const Node& r = only(g, kRequantize16);
  EXPECT_EQ(attr_i(r, "activation_min"), 0);
  EXPECT_EQ(attr_i(r, "activation_max"), 32767);
  EXPECT_EQ(count(g, "aten.relu.default"), 0);
}

TEST(ConvertUnfusedClampsS16, HardtanhAndClampAtAnotherScale) {
  Graph a = unary("aten.hardtanh.default", 3e-4, 1.7e-4, {{"min_val", -1.0}, {"max_val", 2.5}});
  EXPECT_LE(run_and_compare_int(a, convert_unfused_clamps), 1);
  EXPECT_EQ(attr_i(only(a, kRequantize16), "activation_min"), -5882);  // -1 / 1.7e-4
  Graph c = unary("aten.clamp.default", 3e-4, 1.7e-4, {{"min", -0.5}, {"max", NoneAttr{}}});
  EXPECT_LE(run_and_compare_int(c, convert_unfused_clamps), 1);
  EXPECT_EQ(attr_i(only(c, kRequantize16), "activation_max"), 32767);
}

TEST(ConvertUnfusedClampsS16, HardsigmoidTakesTheTable) {
  Graph g = unary("aten.hardsigmoid.default", 6.0 / 32768, 1.0 / 32768);
  EXPECT_LE(run_and_compare_int(g, convert_unfused_clamps), 2);
  EXPECT_EQ(count(g, kTable16), 1);
}

Attrs int16_attrs(double scale) {
  return {{"scale", scale}, {"zero_point", int64_t{0}}, {"quant_min", int64_t{-32768}},
          {"quant_max", int64_t{32767}}, {"dtype", DType::kInt16}};
}

TEST(ConvertRequantizeS16, Int16QuantizeOfDequantize) {
  Graph g;
  const ValueId x = g.add_input("x", int16_info({2, 77}, qp16(2.9e-5)));
  const ValueId dq = g.call(kDequantize, {x}, int16_attrs(2.9e-5))[0];
  g.set_outputs({g.call(kQuantize, {dq}, int16_attrs(1.24e-4))[0]});
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  const Node& r = only(g, kRequantize16);
  const QuantizedMultiplier m = quantize_multiplier(2.9e-5 / (1.24e-4 * (1 << 15)));
  EXPECT_EQ(attr_i(r, "output_multiplier"), m.multiplier);
  EXPECT_EQ(attr_i(r, "output_shift"), m.shift);
  EXPECT_EQ(attr_i(r, "input_zero_point"), 0);
  g.dead_code_elimination();
  EXPECT_EQ(g.num_nodes(), 1u);
}

Graph mean(std::vector<int64_t> shape, std::vector<int64_t> dims, double s_in, double s_out) {
  Graph g;
  const ValueId x = g.add_input("x", int16_info(std::move(shape), qp16(s_in)));
  const ValueId y = g.call("aten.mean.dim", {x},
                           {{"dim", std::move(dims)}, {"keepdim", false}})[0];
  g.set_outputs({quantized_as(g, y, DType::kInt16, qp16(s_out))});
  return g;
}

TEST(ConvertMeanS16, SizeOneDimsAtEqualQparamsAreAView) {
  Graph g = mean({1, 128, 1}, {-1}, 3e-5, 3e-5);
  EXPECT_EQ(run_and_compare_int(g, convert_to_cortex_m), 0);
  EXPECT_EQ(count(g, "aten.mean.dim"), 0);
  EXPECT_EQ(count(g, kRequantize16), 0);
  EXPECT_EQ(count(g, "aten.view_copy.default"), 1);
}

TEST(ConvertMeanS16, SizeOneDimsAtOtherQparamsRequantize) {
  Graph g = mean({1, 1, 9, 1}, {1, 3}, 3e-5, 7e-5);
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(count(g, "aten.mean.dim"), 0);
  EXPECT_EQ(count(g, kRequantize16), 1);
}

// A mean over more than one element: quantized_mean_s16 with TFLM's folded multiplier, offsets 0.
TEST(ConvertMeanS16, MoreThanOneElementIsQuantizedMeanS16) {
  Graph g = mean({1, 4, 3}, {-1}, 3e-5, 2e-5);
  EXPECT_LE(run_and_compare_int(g, convert_to_cortex_m), 1);
  EXPECT_EQ(count(g, "aten.mean.dim"), 0);
  const Node& m = only(g, "cortex_m.quantized_mean_s16.default");
  const QuantizedMultiplier want = mean_multiplier(quantize_multiplier(3e-5 / 2e-5), 3);
  EXPECT_EQ(attr_i(m, "output_multiplier"), want.multiplier);
  EXPECT_EQ(attr_i(m, "output_shift"), want.shift);
  EXPECT_EQ(attr_i(m, "input_offset"), 0);
  EXPECT_EQ(attr_i(m, "output_offset"), 0);
  EXPECT_EQ(attr_i(m, "activation_min"), -32768);
}

}  // namespace
}  // namespace cortexm
