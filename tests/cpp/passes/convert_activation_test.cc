// ConvertToCortexM on elementwise unary ops: a 256-entry table that reproduces the folded node
// exactly (byte-identical outputs).
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kQActivation = "cortex_m.quantized_activation.default";

struct Case {
  const char* op;
  Attrs attrs;
  QuantParams in, out;
};

Graph unary(const Case& c, std::vector<int64_t> shape = {2, 5, 3, 7}) {
  Graph g;
  const ValueId x = g.add_input("x", int8_info(std::move(shape), c.in));
  g.set_outputs({quantized(g, g.call(c.op, {x}, c.attrs)[0], c.out)});
  return g;
}

TEST(ConvertActivation, EveryUnaryOpBecomesOneExactTable) {
  const std::vector<Case> cases = {
      {"aten.sigmoid.default", {}, qp(0.061, -7), qp(1.0 / 256, -128)},
      {"aten.tanh.default", {}, qp(0.023, 3), qp(1.0 / 128, 0)},
      {"aten.silu.default", {}, qp(0.07, 12), qp(0.041, -95)},
      {"aten.gelu.default", {}, qp(0.05, 0), qp(0.037, -100)},
      {"aten.gelu.default", {{"approximate", std::string("tanh")}}, qp(0.05, 9), qp(0.037, -100)},
      {"aten.hardswish.default", {}, qp(0.047, -20), qp(0.031, -110)},
      {"aten.sqrt.default", {}, qp(0.9, -128), qp(0.12, -128)},
      {"aten.sqrt.default", {}, qp(0.2, 0), qp(0.02, -128)},  // negative inputs: NaN -> zero point
      {"aten.abs.default", {}, qp(0.03, 17), qp(0.02, -128)},
      {"aten.pow.Tensor_Scalar", {{"exponent", 2.0}}, qp(0.03, 17), qp(0.07, -128)},
      {"aten.pow.Tensor_Scalar", {{"exponent", 0.5}}, qp(0.3, -128), qp(0.05, -128)},
      {"aten.sub.Scalar", {{"other", 0.25}}, qp(0.03, 17), qp(0.031, 10)},
      {"aten.div.Scalar", {{"other", 3.0}}, qp(0.03, 17), qp(0.011, 17)},
      {"aten.mul.Scalar", {{"other", -0.7}}, qp(0.03, 17), qp(0.025, 4)},
      {"aten.add.Scalar", {{"other", 1.5}}, qp(0.03, 17), qp(0.04, -60)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    Graph g = unary(c);
    EXPECT_TRUE(run_and_compare(g, convert_to_cortex_m));
    EXPECT_EQ(g.num_nodes(), 1u);
    const Node& n = only(g, kQActivation);
    EXPECT_EQ(n.meta.at("lowering"), "cortex_m");
    const Value& table = g.value(n.inputs[1]);
    EXPECT_EQ(table.kind, ValueKind::kConstant);
    EXPECT_EQ(table.info.shape, std::vector<int64_t>{256});
    EXPECT_EQ(*g.value(g.outputs()[0]).info.qparams, c.out);
  }
}

TEST(ConvertActivation, TableEntriesAreTheQuantizedFunction) {
  Graph g = unary({"aten.sigmoid.default", {}, qp(0.061, -7), qp(1.0 / 256, -128)});
  convert_to_cortex_m(g, TargetConfig{});
  const int8_t* table = g.value(only(g, kQActivation).inputs[1]).data.data<int8_t>();
  for (int x = -128; x < 128; ++x) {
    const float real = static_cast<float>(x + 7) * 0.061f;
    const float y = 1.0f / (1.0f + std::exp(-real));
    const int want = std::min(127, static_cast<int>(std::nearbyint(y * 256.0f)) - 128);
    EXPECT_EQ(table[x + 128], want) << x;
  }
}

// relu / hardtanh / clamp / hardsigmoid are ActivationFusion's and the conv rewrites'.
TEST(ConvertActivation, ClampsAreLeftToFusion) {
  Graph g = unary({"aten.relu.default", {}, qp(0.03, 17), qp(0.02, -128)});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(count(g, kQActivation), 0);
}

TEST(ConvertActivation, FloatOutputStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {3, 4}, 0.05, 0);
  g.set_outputs({g.call("aten.tanh.default", {x}, {})[0]});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, "aten.tanh.default").meta.at("lowering").find("output"), std::string::npos);
}

}  // namespace
}  // namespace cortexm
