// ConvertToCortexM on convolutions: structure, outputs within 1 LSB of the folded graph, and
// bit-exact against a plain-loop integer convolution on the original (OIHW) weights.
#include "convert_test_util.h"
#include "passes/convert_to_cortex_m.h"

namespace cortexm {
namespace {

using namespace testing;

struct ConvCase {
  std::vector<int64_t> input;  // NCW or NCHW
  int64_t c_out = 4, kernel = 3, stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
  int64_t zp_in = -3, zp_out = 5;
  uint32_t seed = 1;
};

struct ConvModel {
  QuantParams q_in, q_out;
  std::vector<double> w_scales;
  Tensor weight;                // torch layout [C_out, C_in / groups, (KH,) KW]
  std::vector<int32_t> bias;    // at s_in * s_w[c]; zeros when the conv has none
};

ConvModel build_conv(Graph& g, const ConvCase& c) {
  const bool one_d = c.input.size() == 3;
  const int64_t c_in = c.input[1], per_group = c_in / c.groups;
  ConvModel m;
  m.q_in = qp(0.05, c.zp_in);
  for (int64_t o = 0; o < c.c_out; ++o) m.w_scales.push_back(0.004 * (1.0 + 0.37 * (o % 5)));
  const int64_t taps = per_group * c.kernel * (one_d ? 1 : c.kernel);
  m.q_out = qp(0.05 * 0.007 * 135.0 * std::sqrt(static_cast<double>(taps)), c.zp_out);
  const ValueId x = g.add_input("x", int8_info(c.input, m.q_in));
  std::vector<int64_t> w_shape = {c.c_out, per_group, c.kernel};
  if (!one_d) w_shape.push_back(c.kernel);
  const ValueId w = int8_const(g, "w", w_shape, qp_channels(m.w_scales, 0), c.seed);
  m.weight = g.value(w).data;
  ValueId b = kNoValue;
  m.bias.assign(static_cast<size_t>(c.c_out), 0);
  if (c.bias) {
    std::vector<double> b_scales;
    for (double s : m.w_scales) b_scales.push_back(m.q_in.scales[0] * s);
    m.bias = random_int32s(static_cast<size_t>(c.c_out), -20000, 20000, c.seed + 100);
    b = int32_const(g, "b", m.bias, qp_channels(b_scales, 0));
  }
  auto spatial = [&](int64_t v) {
    return one_d ? std::vector<int64_t>{v} : std::vector<int64_t>{v, v};
  };
  const ValueId y = g.call(kConv, {x, w, b},
                           {{"stride", spatial(c.stride)}, {"padding", spatial(c.padding)},
                            {"dilation", spatial(c.dilation)}, {"groups", c.groups}})[0];
  g.set_outputs({quantized(g, y, m.q_out)});
  return m;
}

// The integer convolution written out: acc = bias + sum (x - zp_in) * w, requantized per channel.
Tensor reference_conv(const ConvCase& c, const ConvModel& m, const Tensor& x,
                      const std::vector<int64_t>& out_shape) {
  const bool one_d = c.input.size() == 3;
  const int64_t n = c.input[0], c_in = c.input[1], h = one_d ? 1 : c.input[2], w = c.input.back();
  const int64_t kh = one_d ? 1 : c.kernel, kw = c.kernel, per_group = c_in / c.groups;
  const int64_t oh = one_d ? 1 : out_shape[2], ow = out_shape.back();
  const int64_t ph = one_d ? 0 : c.padding, pw = c.padding;
  const int64_t sh = one_d ? 1 : c.stride, sw = c.stride;
  Tensor out(int8_info(out_shape, m.q_out));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < c.c_out; ++oc) {
      const QuantizedMultiplier qm =
          quantize_multiplier(m.q_in.scales[0] * m.w_scales[oc] / m.q_out.scales[0]);
      const int64_t group = oc / (c.c_out / c.groups);
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          int32_t acc = m.bias[oc];
          for (int64_t ic = 0; ic < per_group; ++ic)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = oy * sh - ph + ky * c.dilation;
                const int64_t ix = ox * sw - pw + kx * c.dilation;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int64_t channel = group * per_group + ic;
                const int32_t xv = x.data<int8_t>()[((b * c_in + channel) * h + iy) * w + ix];
                const int32_t wv =
                    m.weight.data<int8_t>()[((oc * per_group + ic) * kh + ky) * kw + kx];
                acc += (xv - static_cast<int32_t>(c.zp_in)) * wv;
              }
          const int32_t v =
              requantize(acc, qm.multiplier, qm.shift) + static_cast<int32_t>(c.zp_out);
          out.data<int8_t>()[((b * c.c_out + oc) * oh + oy) * ow + ox] =
              static_cast<int8_t>(clamp(v, -128, 127));
        }
    }
  return out;
}

// Lowers one conv and checks structure, LSB distance and the exact integer result.
const Node& check_conv(Graph& g, const ConvCase& c, bool expect_depthwise) {
  const ConvModel m = build_conv(g, c);
  const bool one_d = c.input.size() == 3;
  const std::vector<int64_t> out_shape = g.value(g.outputs()[0]).info.shape;
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, kConv), 0);
  EXPECT_EQ(count(g, kClone), 2);
  EXPECT_EQ(count(g, kView), one_d ? 2 : 0);
  const Node& conv = only(g, expect_depthwise ? kQDepthwise : kQConv);
  EXPECT_EQ(conv.meta.at("lowering"), "cortex_m");
  // Layout: clone to channels-last before, back to contiguous after.
  const Node& before = g.node(g.producer(conv.inputs[0]));
  EXPECT_EQ(before.op, kClone);
  EXPECT_EQ(attr_ints(before, "dim_order"), (std::vector<int64_t>{0, 2, 3, 1}));
  const Node& after = g.node(g.users(conv.outputs[0]).at(0));
  EXPECT_EQ(after.op, kClone);
  EXPECT_EQ(attr_ints(after, "dim_order"), (std::vector<int64_t>{0, 1, 2, 3}));
  if (one_d) {
    const Node& in_view = g.node(g.producer(before.inputs[0]));
    EXPECT_EQ(in_view.op, kView);
    EXPECT_EQ(attr_ints(in_view, "size"),
              (std::vector<int64_t>{c.input[0], c.input[1], 1, c.input[2]}));
    EXPECT_EQ(output_producer(g).op, kView);
    EXPECT_EQ(g.value(g.outputs()[0]).info.shape, out_shape);
  }
  // Weights, geometry, offsets, multipliers, bias.
  const int64_t per_group = c.input[1] / c.groups, kh = one_d ? 1 : c.kernel;
  const std::vector<int64_t> w_shape = expect_depthwise
                                           ? std::vector<int64_t>{1, kh, c.kernel, c.c_out}
                                           : std::vector<int64_t>{c.c_out, kh, c.kernel, per_group};
  EXPECT_EQ(g.value(conv.inputs[1]).info.shape, w_shape);
  EXPECT_EQ(attr_ints(conv, "stride"), (std::vector<int64_t>{one_d ? 1 : c.stride, c.stride}));
  EXPECT_EQ(attr_ints(conv, "padding"), (std::vector<int64_t>{one_d ? 0 : c.padding, c.padding}));
  EXPECT_EQ(attr_ints(conv, "dilation"),
            (std::vector<int64_t>{one_d ? 1 : c.dilation, c.dilation}));
  if (expect_depthwise) EXPECT_EQ(attr_i(conv, "depth_multiplier"), c.c_out / c.input[1]);
  EXPECT_EQ(attr_i(conv, "input_offset"), -c.zp_in);
  EXPECT_EQ(attr_i(conv, "output_offset"), c.zp_out);
  EXPECT_EQ(attr_i(conv, "activation_min"), -128);
  EXPECT_EQ(attr_i(conv, "activation_max"), 127);
  const std::vector<int64_t> mult = attr_ints(conv, "requantize_multipliers");
  const std::vector<int64_t> shift = attr_ints(conv, "requantize_shifts");
  EXPECT_EQ(mult.size(), static_cast<size_t>(c.c_out));
  for (int64_t o = 0; o < c.c_out && o < static_cast<int64_t>(mult.size()); ++o) {
    const QuantizedMultiplier qm =
        quantize_multiplier(m.q_in.scales[0] * m.w_scales[o] / m.q_out.scales[0]);
    EXPECT_EQ(mult[o], qm.multiplier);
    EXPECT_EQ(shift[o], qm.shift);
  }
  const Value& bias = g.value(conv.inputs[2]);
  EXPECT_EQ(bias.info.dtype, DType::kInt32);
  const int32_t* b = bias.data.data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(b, b + c.c_out), m.bias);
  // Bit-exact against the plain loop.
  const std::vector<Tensor> inputs = random_inputs(g, 7);
  const Tensor got = run_graph(g, inputs)[0];
  const Tensor want = reference_conv(c, m, inputs[0], out_shape);
  EXPECT_EQ(std::memcmp(got.raw(), want.raw(), want.nbytes()), 0);
  return conv;
}

ConvCase conv(std::vector<int64_t> input, int64_t c_out, int64_t kernel) {
  ConvCase c;
  c.input = std::move(input);
  c.c_out = c_out;
  c.kernel = kernel;
  return c;
}

// --- 2-D ---

TEST(ConvertConv2d, RegularPerChannelWithBiasAndBatch) {
  Graph g;
  ConvCase c = conv({2, 3, 7, 6}, 5, 3);
  c.padding = 1;
  check_conv(g, c, false);
}

TEST(ConvertConv2d, StridedDilatedNoBias) {
  Graph g;
  ConvCase c = conv({1, 4, 11, 9}, 6, 3);
  c.stride = 2;
  c.dilation = 2;
  c.padding = 2;
  c.bias = false;
  c.zp_in = -128;
  c.zp_out = 127;
  check_conv(g, c, false);
}

TEST(ConvertConv2d, DepthwiseWithMultiplierAndBatch) {
  Graph g;
  ConvCase c = conv({2, 4, 6, 6}, 8, 3);
  c.groups = 4;
  c.padding = 1;
  check_conv(g, c, true);
}

TEST(ConvertConv2d, GroupedIsConv2dWithPerGroupWeights) {
  Graph g;
  ConvCase c = conv({1, 4, 5, 5}, 6, 3);
  c.groups = 2;
  check_conv(g, c, false);
}

// One input channel is a regular conv (TFLite's CONV_2D), not a depth multiplier of C_out.
TEST(ConvertConv2d, SingleInputChannelIsRegular) {
  Graph g;
  check_conv(g, conv({1, 1, 8, 8}, 6, 3), false);
}

// --- 1-D (issue 5) ---

TEST(ConvertConv1d, Regular) {
  Graph g;
  check_conv(g, conv({2, 4, 20}, 6, 3), false);
}

TEST(ConvertConv1d, Depthwise) {
  Graph g;
  ConvCase c = conv({1, 4, 16}, 8, 3);
  c.groups = 4;
  c.padding = 1;
  check_conv(g, c, true);
}

TEST(ConvertConv1d, KernelOnePointwise) {
  Graph g;
  check_conv(g, conv({1, 8, 12}, 5, 1), false);
}

TEST(ConvertConv1d, LargeKernelWithPadding) {
  Graph g;
  ConvCase c = conv({1, 6, 30}, 6, 7);
  c.padding = 3;
  check_conv(g, c, false);
}

TEST(ConvertConv1d, StrideTwo) {
  Graph g;
  ConvCase c = conv({3, 5, 41}, 7, 5);
  c.stride = 2;
  c.padding = 2;
  check_conv(g, c, false);
}

TEST(ConvertConv1d, WithoutBias) {
  Graph g;
  ConvCase c = conv({1, 4, 20}, 6, 3);
  c.bias = false;
  check_conv(g, c, false);
}

TEST(ConvertConv1d, StftShapedSingleChannelIsRegular) {
  Graph g;
  ConvCase c = conv({1, 1, 1024}, 258, 256);
  c.stride = 128;
  c.bias = false;
  const Node& conv_node = check_conv(g, c, false);
  for (const auto& [name, value] : conv_node.attrs) EXPECT_NE(name, "depth_multiplier");
}

TEST(ConvertConv1d, GroupedNotDepthwise) {
  Graph g;
  ConvCase c = conv({1, 6, 16}, 9, 3);
  c.groups = 3;
  c.padding = 1;
  check_conv(g, c, false);
}

// --- biases ---

Graph small_conv_with_bias(ValueId (*make_bias)(Graph&, const std::vector<double>&)) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 3, 6, 6}, 0.05, 2);
  const std::vector<double> s_w = {0.003, 0.005, 0.004, 0.006};
  const ValueId w = int8_const(g, "w", {4, 3, 3, 3}, qp_channels(s_w, 0), 3);
  std::vector<double> b_scales;
  for (double s : s_w) b_scales.push_back(0.05 * s);
  const ValueId b = make_bias(g, b_scales);
  const ValueId y = g.call(kConv, {x, w, b},
                           {{"stride", std::vector<int64_t>{1, 1}},
                            {"padding", std::vector<int64_t>{1, 1}},
                            {"dilation", std::vector<int64_t>{1, 1}}})[0];
  g.set_outputs({quantized(g, y, qp(0.2, -4))});
  return g;
}

std::vector<int32_t> bias_of_lowered(const Graph& g) {
  const Value& b = g.value(only(g, kQConv).inputs[2]);
  return std::vector<int32_t>(b.data.data<int32_t>(), b.data.data<int32_t>() + b.info.numel());
}

TEST(ConvertConv2d, BiasAtAnotherScaleIsRequantized) {
  Graph g = small_conv_with_bias([](Graph& g, const std::vector<double>& scales) {
    std::vector<double> halved;
    for (double s : scales) halved.push_back(s / 2);
    return int32_const(g, "b", {2000, -3002, 40, 0}, qp_channels(halved, 0));
  });
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(bias_of_lowered(g), (std::vector<int32_t>{1000, -1501, 20, 0}));
}

TEST(ConvertConv2d, FloatBiasIsQuantized) {
  Graph g = small_conv_with_bias([](Graph& g, const std::vector<double>& scales) {
    Tensor t(float_info({4}));
    for (int i = 0; i < 4; ++i)
      t.data<float>()[i] = static_cast<float>(scales[i] * (100 * i - 150));
    return g.add_constant("b", t);
  });
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(bias_of_lowered(g), (std::vector<int32_t>{-150, -50, 50, 150}));
}

// --- a float output read by one activation (the quantizer's conv + hardsigmoid) ---

// conv(int8 -> float32) -> act(-> int8): the pair is lowered onto the activation's qparams.
Graph conv_with_tail(const char* act, Attrs attrs, QuantParams q_act) {
  Graph g;
  const ValueId x = q_input(g, "x", {2, 6, 5, 5}, 0.05, 3);
  const std::vector<double> s_w = {0.004, 0.006, 0.005, 0.007, 0.003};
  std::vector<double> s_b;
  for (double s : s_w) s_b.push_back(0.05 * s);
  const ValueId w = int8_const(g, "w", {5, 6, 1, 1}, qp_channels(s_w, 0), 9);
  const ValueId b = int32_const(g, "b", random_int32s(5, -4000, 4000, 10), qp_channels(s_b, 0));
  const ValueId y = g.call(kConv, {x, w, b},
                           {{"stride", std::vector<int64_t>{1, 1}},
                            {"padding", std::vector<int64_t>{0, 0}},
                            {"dilation", std::vector<int64_t>{1, 1}}})[0];
  g.set_outputs({quantized(g, g.call(act, {y}, std::move(attrs))[0], std::move(q_act))});
  return g;
}

TEST(ConvertConvTail, HardsigmoidIsLoweredThroughTheRequantization) {
  QuantParams q = qp(1.0 / 255, -128);
  Graph g = conv_with_tail("aten.hardsigmoid.default", {}, q);
  run_and_compare_lsb(g, convert_to_cortex_m);
  EXPECT_EQ(count(g, "aten.hardsigmoid.default"), 0);
  const Node& conv = only(g, kQConv);
  EXPECT_EQ(conv.meta.at("fused_activation"), "aten.hardsigmoid.default");
  EXPECT_EQ(attr_i(conv, "output_offset"), -128);
  EXPECT_EQ(attr_i(conv, "activation_min"), -128);
  EXPECT_EQ(attr_i(conv, "activation_max"), 127);
  const QuantizedMultiplier m = quantize_multiplier(0.05 * 0.004 / 6 / (1.0 / 255));
  EXPECT_EQ(attr_ints(conv, "requantize_multipliers")[0], m.multiplier);
  EXPECT_EQ(attr_ints(conv, "requantize_shifts")[0], m.shift);
}

TEST(ConvertConvTail, HardsigmoidWithAWiderOutputRangeClamps) {
  Graph g = conv_with_tail("aten.hardsigmoid.default", {}, qp(1.5 / 255, -100));
  run_and_compare_lsb(g, convert_to_cortex_m);
  const Node& conv = only(g, kQConv);
  EXPECT_EQ(attr_i(conv, "activation_min"), -100);
  EXPECT_EQ(attr_i(conv, "activation_max"), -100 + 170);
}

TEST(ConvertConvTail, ReluAndHardtanh) {
  Graph relu = conv_with_tail("aten.relu.default", {}, qp(0.02, -30));
  run_and_compare_lsb(relu, convert_to_cortex_m);
  EXPECT_EQ(attr_i(only(relu, kQConv), "activation_min"), -30);
  Graph ht = conv_with_tail("aten.hardtanh.default", {{"min_val", -0.5}, {"max_val", 0.8}},
                            qp(0.01, 0));
  run_and_compare_lsb(ht, convert_to_cortex_m);
  EXPECT_EQ(attr_i(only(ht, kQConv), "activation_min"), -50);
  EXPECT_EQ(attr_i(only(ht, kQConv), "activation_max"), 80);
}

TEST(ConvertConvTail, OtherActivationsStayFloat) {
  Graph g = conv_with_tail("aten.sigmoid.default", {}, qp(1.0 / 256, -128));
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kConv).meta.at("lowering").find("is float"), std::string::npos);
}

// --- what stays float ---

Graph conv_graph(ValueId (*make_weight)(Graph&), bool float_input = false) {
  Graph g;
  const ValueId x = float_input ? g.add_input("x", float_info({1, 2, 5, 5}))
                                : q_input(g, "x", {1, 2, 5, 5}, 0.05, 0);
  const ValueId y = g.call(kConv, {x, make_weight(g), kNoValue},
                           {{"stride", std::vector<int64_t>{1}},
                            {"padding", std::vector<int64_t>{0}},
                            {"dilation", std::vector<int64_t>{1}}})[0];
  g.set_outputs({quantized(g, y, qp(0.1, 0))});
  return g;
}

ValueId good_weight(Graph& g) {
  return int8_const(g, "w", {3, 2, 3, 3}, qp_channels({0.01, 0.02, 0.03}, 0), 5);
}

void expect_float(Graph& g, const std::string& reason_part) {
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  const Node& conv = only(g, kConv);
  ASSERT_TRUE(conv.meta.count("lowering"));
  EXPECT_EQ(conv.meta.at("lowering").rfind("float: ", 0), 0u) << conv.meta.at("lowering");
  EXPECT_NE(conv.meta.at("lowering").find(reason_part), std::string::npos)
      << conv.meta.at("lowering");
  EXPECT_EQ(count(g, kClone), 0);
}

TEST(ConvertConv2d, FloatInputStaysFloat) {
  Graph g = conv_graph(good_weight, true);
  expect_float(g, "input");
}

TEST(ConvertConv2d, AsymmetricWeightsStayFloat) {
  Graph g = conv_graph([](Graph& g) {
    QuantParams q = qp(0.01, 3);
    return int8_const(g, "w", {3, 2, 3, 3}, q, 5);
  });
  expect_float(g, "zero point");
}

TEST(ConvertConv2d, NonConstantWeightStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 2, 5, 5}, 0.05, 0);
  const ValueId w = g.add_input("w", int8_info({3, 2, 3, 3}, qp(0.01, 0)));
  const ValueId y = g.call(kConv, {x, w},
                           {{"stride", std::vector<int64_t>{1}},
                            {"padding", std::vector<int64_t>{0}},
                            {"dilation", std::vector<int64_t>{1}}})[0];
  g.set_outputs({quantized(g, y, qp(0.1, 0))});
  expect_float(g, "not a constant");
}

TEST(ConvertConv2d, FloatOutputStaysFloat) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 2, 5, 5}, 0.05, 0);
  const ValueId y = g.call(kConv, {x, good_weight(g)},
                           {{"stride", std::vector<int64_t>{1}},
                            {"padding", std::vector<int64_t>{0}},
                            {"dilation", std::vector<int64_t>{1}}})[0];
  g.set_outputs({y});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_NE(only(g, kConv).meta.at("lowering").find("output"), std::string::npos);
}

TEST(ConvertConv2d, PlainFloatGraphIsUntouched) {
  Graph g;
  const ValueId x = g.add_input("x", float_info({1, 2, 5, 5}));
  const ValueId y = g.call(kConv, {x, float_const(g, "w", {3, 2, 3, 3}, 1)},
                           {{"stride", std::vector<int64_t>{1}},
                            {"padding", std::vector<int64_t>{0}},
                            {"dilation", std::vector<int64_t>{1}}})[0];
  g.set_outputs({y});
  EXPECT_FALSE(run_and_compare(g, convert_to_cortex_m));
  EXPECT_EQ(only(g, kConv).meta.count("lowering"), 0u);
}

// A rewrite that is not committed takes back the nodes it made.
TEST(ConvertRewrite, UncommittedRewriteRollsBack) {
  Graph g = conv_graph(good_weight);
  const size_t nodes = g.num_nodes();
  {
    convert::Rewrite rw(g, g.order()[0]);
    const ValueId v = rw.view(g.inputs()[0], {1, 2, 25});
    rw.clone_dim_order(rw.view(v, {1, 2, 5, 5}), {0, 2, 3, 1});
    EXPECT_EQ(g.num_nodes(), nodes + 3);
  }
  EXPECT_EQ(g.num_nodes(), nodes);
  EXPECT_NO_THROW(g.verify());
}

}  // namespace
}  // namespace cortexm
