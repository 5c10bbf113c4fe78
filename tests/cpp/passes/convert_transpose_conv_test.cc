// ConvertToCortexM on transposed convolutions: weight repacked OHWI from torch's [C_in, C_out,
// KH, KW] (per-channel qparams along axis 1), within 1 LSB of the folded graph.
#include "convert_test_util.h"

namespace cortexm {
namespace {

using namespace testing;

constexpr const char* kQTConv = "cortex_m.quantized_transpose_conv2d.default";

struct Case {
  std::vector<int64_t> input = {2, 3, 5, 4};
  int64_t c_out = 5, kernel = 3, stride = 2, padding = 1, output_padding = 1;
  bool bias = true;
};

Graph transpose_conv(const Case& c) {
  Graph g;
  const int64_t c_in = c.input[1];
  const ValueId x = g.add_input("x", int8_info(c.input, qp(0.05, -3)));
  std::vector<double> w_scales;
  for (int64_t o = 0; o < c.c_out; ++o) w_scales.push_back(0.004 * (1.0 + 0.37 * (o % 5)));
  const ValueId w =
      int8_const(g, "w", {c_in, c.c_out, c.kernel, c.kernel}, qp_channels(w_scales, 1), 3);
  ValueId b = kNoValue;
  if (c.bias) {
    std::vector<double> b_scales;
    for (double s : w_scales) b_scales.push_back(0.05 * s);
    b = int32_const(g, "b", random_int32s(size_t(c.c_out), -20000, 20000, 4),
                    qp_channels(b_scales, 0));
  }
  const auto two = [](int64_t v) { return std::vector<int64_t>{v, v}; };
  const ValueId y = g.call(kConv, {x, w, b},
                           {{"stride", two(c.stride)}, {"padding", two(c.padding)},
                            {"dilation", two(1)}, {"transposed", true},
                            {"output_padding", two(c.output_padding)}, {"groups", int64_t{1}}})[0];
  const double taps = double(c_in * c.kernel * c.kernel) / double(c.stride * c.stride);
  g.set_outputs({quantized(g, y, qp(0.05 * 0.007 * 135.0 * std::sqrt(taps), 6))});
  return g;
}

TEST(ConvertTransposeConv, Stride2OutputPadding) {
  Graph g = transpose_conv(Case{});
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Node& n = only(g, kQTConv);
  EXPECT_EQ(attr_ints(n, "output_padding"), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(g.value(n.inputs[1]).info.shape, (std::vector<int64_t>{5, 3, 3, 3}));
  EXPECT_EQ(g.value(n.inputs[0]).info.dim_order, channels_last_dim_order(4));
}

TEST(ConvertTransposeConv, ShapesWithoutBias) {
  for (int64_t stride : {1, 2, 3}) {
    Case c;
    c.input = {1, 4, 3, 6};
    c.stride = stride;
    c.kernel = 2 + stride % 2;
    c.padding = stride - 1;
    c.output_padding = stride - 1;
    c.bias = stride != 2;
    Graph g = transpose_conv(c);
    run_and_compare_lsb(g, convert_to_cortex_m);
    EXPECT_EQ(count(g, kQTConv), 1);
  }
}

TEST(ConvertTransposeConv, GroupedStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 4, 3, 3}, 0.05, 0);
  const ValueId w = int8_const(g, "w", {4, 1, 3, 3}, qp(0.01, 0), 1);
  const ValueId y = g.call(kConv, {x, w, kNoValue},
                           {{"stride", std::vector<int64_t>{2, 2}},
                            {"padding", std::vector<int64_t>{0, 0}},
                            {"dilation", std::vector<int64_t>{1, 1}}, {"transposed", true},
                            {"output_padding", std::vector<int64_t>{0, 0}},
                            {"groups", int64_t{2}}})[0];
  g.set_outputs({quantized(g, y, qp(0.1, 0))});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(only(g, kConv).meta.at("lowering"),
            "float: transposed convolution with groups != 1");
}

}  // namespace
}  // namespace cortexm
