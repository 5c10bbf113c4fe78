// The converters each convert_*.cc registers (CORTEXM_CONVERTER, the generated converters.inc):
// every graph op ConvertToCortexM lowers has its converter, and the converters of one op take
// disjoint nodes.
#include <map>
#include <set>

#include "convert_test_util.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm::testing {
namespace {

using convert::Converter;
using convert::converters;

TEST(ConvertRegistry, EveryLoweredOpIsRegistered) {
  std::set<std::string> ops;
  for (const Converter* c : converters()) {
    ASSERT_NE(c->convert, nullptr);
    ASSERT_FALSE(c->ops.empty());
    ops.insert(c->ops.begin(), c->ops.end());
  }
  for (const char* op :
       {"aten.convolution.default", "aten.linear.default", "aten.addmm.default", "aten.add.Tensor",
        "aten.sub.Tensor", "aten.mul.Tensor", "aten.max_pool2d.default", "aten.avg_pool2d.default",
        "aten._softmax.default", "aten._log_softmax.default", "aten.sqrt.default",
        "aten.sigmoid.default", "aten.tanh.default", "aten.mish.default", "aten.mean.dim",
        "aten.sum.dim_IntList", "aten.layer_norm.default", "aten.amax.default", "aten.amin.default",
        "aten.argmax.default", "aten.argmin.default", "aten.bmm.default", "aten.mm.default",
        "aten.maximum.default", "aten.minimum.default", "aten.upsample_bilinear2d.default",
        "quantized_decomposed.quantize_per_tensor.default", "aten.cat.default"})
    EXPECT_EQ(ops.count(op), 1u) << op;
}

// Every table activation but sqrt (the magnitude rewrite's, which falls back to the table).
TEST(ConvertRegistry, TableActivationsAreTheActivationConverters) {
  for (const Converter* c : converters())
    for (const std::string& op : c->ops)
      if (convert::is_table_activation(op))
        EXPECT_EQ(c->convert == &convert::convert_activation, op != "aten.sqrt.default") << op;
}

TEST(ConvertRegistry, ConvertersOfOneOpAllChooseTheirNodes) {
  std::map<std::string, int> count;
  std::map<std::string, int> unconditional;
  for (const Converter* c : converters())
    for (const std::string& op : c->ops) {
      ++count[op];
      if (!c->accepts) ++unconditional[op];
    }
  for (const auto& [op, n] : count)
    if (n > 1) EXPECT_EQ(unconditional[op], 0) << op << " has " << n << " converters";
}

// Each of the three convolutions (int8, int16 input, transposed) has its own converter.
TEST(ConvertRegistry, ConvolutionPicksOneConverterPerForm) {
  auto converter_of = [](bool transposed, DType dtype) {
    Graph g;
    TensorInfo in;
    in.dtype = dtype;
    in.shape = {1, 2, 4, 4};
    in.qparams = qp(0.5, 0);
    const ValueId x = g.add_input("x", in);
    const ValueId w = int8_const(g, "w", {2, 2, 1, 1}, qp(0.5, 0), 1);
    const ValueId y = g.call(kConv, {x, w, kNoValue},
                             {{"stride", std::vector<int64_t>{1, 1}},
                              {"padding", std::vector<int64_t>{0, 0}},
                              {"dilation", std::vector<int64_t>{1, 1}},
                              {"transposed", transposed},
                              {"output_padding", std::vector<int64_t>{0, 0}},
                              {"groups", int64_t{1}}})[0];
    const Converter* c = convert::converter_for(g, g.node(g.producer(y)), true);
    EXPECT_EQ(convert::converter_for(g, g.node(g.producer(y)), false), nullptr);
    return c;
  };
  const Converter* int8 = converter_of(false, DType::kInt8);
  const Converter* int16 = converter_of(false, DType::kInt16);
  const Converter* transposed = converter_of(true, DType::kInt8);
  ASSERT_NE(int8, nullptr);
  ASSERT_NE(int16, nullptr);
  ASSERT_NE(transposed, nullptr);
  EXPECT_NE(int8, int16);
  EXPECT_NE(int8, transposed);
  EXPECT_NE(int16, transposed);
  EXPECT_EQ(transposed, converter_of(true, DType::kInt16));
}

}  // namespace
}  // namespace cortexm::testing
