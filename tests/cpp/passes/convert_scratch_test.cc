// ConvertToCortexM then AnnotateScratch record scratch_bytes on the cortex_m nodes whose kernels
// need scratch: exactly the larger of the kernel's *_scratch_size for the target's isa and for
// SCALAR (the host runs the scalar kernels on every program), for the same graph lowered for M0+
// (SCALAR), M4 (DSP) and M55 (MVE).

#include "convert_test_util.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_batch_matmul.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"
#include "graph/errors.h"
#include "passes/convert_to_cortex_m.h"
#include "passes/pass.h"

namespace cortexm {
namespace {

using namespace testing;

const std::vector<std::string> kTargets = {"cortex-m0plus+int8", "cortex-m4+int8",
                                           "cortex-m55+int8"};

// What a program for `isa` reserves for a kernel with size function `size`: that isa's need.
template <typename Params>
int64_t planned(size_t (*size)(const Params&, Isa), const Params& p, Isa isa) {
  return static_cast<int64_t>(size(p, isa));
}

// The one cortex_m node running op after lowering a copy of g for target.
int64_t lowered_scratch(const Graph& g, const std::string& target, const std::string& op) {
  Graph lowered = g;
  const TargetConfig config = parse_target(target);
  EXPECT_TRUE(convert_to_cortex_m(lowered, config));
  annotate_scratch(lowered, config);
  lowered.verify();
  return attr_i(only(lowered, op), "scratch_bytes");
}

Graph conv_graph(std::vector<int64_t> input, std::vector<int64_t> weight, int64_t groups) {
  Graph g;
  const bool one_d = input.size() == 3;
  const ValueId x = q_input(g, "x", std::move(input), 0.05, -3);
  std::vector<double> scales(static_cast<size_t>(weight[0]), 0.004);
  const ValueId w = int8_const(g, "w", std::move(weight), qp_channels(scales, 0), 3);
  const std::vector<int64_t> one = one_d ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 1};
  const std::vector<int64_t> zero = one_d ? std::vector<int64_t>{0} : std::vector<int64_t>{0, 0};
  const ValueId y = g.call(kConv, {x, w, kNoValue},
                           {{"stride", one}, {"padding", zero}, {"dilation", one},
                            {"groups", groups}})[0];
  g.set_outputs({quantized(g, y, qp(0.2, 4))});
  return g;
}

TEST(ConvertScratch, Conv2dRecordsTheKernelSizeForEachIsa) {
  const Graph g = conv_graph({2, 6, 9, 10}, {8, 6, 3, 3}, 1);
  Conv2dParams p;
  p.input = {2, 9, 10, 6};
  p.filter = {8, 3, 3, 6};
  for (const std::string& t : kTargets) {
    const int64_t want = planned(&quantized_conv2d_scratch_size, p, parse_target(t).isa);
    EXPECT_GT(want, 0);
    EXPECT_EQ(lowered_scratch(g, t, kQConv), want) << t;
  }
}

TEST(ConvertScratch, PointwiseConvNeedsNoScratch) {  // CMSIS-NN's 1x1 kernels take none either
  const Graph g = conv_graph({1, 6, 5, 7}, {8, 6, 1, 1}, 1);
  Conv2dParams p;
  p.input = {1, 5, 7, 6};
  p.filter = {8, 1, 1, 6};
  for (const std::string& target : kTargets) {
    EXPECT_EQ(planned(&quantized_conv2d_scratch_size, p, parse_target(target).isa), 0) << target;
    EXPECT_EQ(lowered_scratch(g, target, kQConv), 0) << target;
  }
}

TEST(ConvertScratch, GroupedConvUsesTheGroupChannels) {
  const Graph g = conv_graph({1, 6, 7, 7}, {6, 2, 3, 3}, 3);
  Conv2dParams p;
  p.input = {1, 7, 7, 6};
  p.filter = {6, 3, 3, 2};
  for (const std::string& t : kTargets)
    EXPECT_EQ(lowered_scratch(g, t, kQConv),
              planned(&quantized_conv2d_scratch_size, p, parse_target(t).isa))
        << t;
}

TEST(ConvertScratch, Conv1dUsesHeightOne) {
  const Graph g = conv_graph({1, 5, 20}, {7, 5, 4}, 1);
  Conv2dParams p;
  p.input = {1, 1, 20, 5};
  p.filter = {7, 1, 4, 5};
  for (const std::string& t : kTargets)
    EXPECT_EQ(lowered_scratch(g, t, kQConv),
              planned(&quantized_conv2d_scratch_size, p, parse_target(t).isa))
        << t;
}

TEST(ConvertScratch, DepthwiseRecordsTheKernelSizeForEachIsa) {
  const Graph g = conv_graph({1, 4, 7, 7}, {8, 1, 3, 3}, 4);
  DepthwiseConv2dParams p;
  p.input = {1, 7, 7, 4};
  p.filter = {1, 3, 3, 8};
  p.depth_multiplier = 2;
  for (const std::string& t : kTargets) {
    const int64_t want =
        planned(&quantized_depthwise_conv2d_scratch_size, p, parse_target(t).isa);
    EXPECT_EQ(want > 0, parse_target(t).isa == Isa::kScalar) << t;  // DSP / MVE: none
    EXPECT_EQ(lowered_scratch(g, t, kQDepthwise), want) << t;
  }
}

TEST(ConvertScratch, LinearRecordsTheKernelSizeForEachIsa) {
  Graph g;
  const ValueId x = q_input(g, "x", {3, 24}, 0.05, 2);
  const ValueId w = int8_const(g, "w", {6, 24}, qp_channels(std::vector<double>(6, 0.01), 0), 5);
  g.set_outputs({quantized(g, g.call("aten.linear.default", {x, w, kNoValue}, {})[0],
                           qp(0.3, -1))});
  LinearParams p;
  p.batches = 3;
  p.input_features = 24;
  p.output_features = 6;
  for (const std::string& t : kTargets) {
    const int64_t want = planned(&quantized_linear_scratch_size, p, parse_target(t).isa);
    EXPECT_EQ(want, 0);  // every variant reads the int8 row in place
    EXPECT_EQ(lowered_scratch(g, t, "cortex_m.quantized_linear.default"), want) << t;
  }
}

TEST(ConvertScratch, AvgPoolRecordsTheKernelSize) {
  Graph pool;
  const ValueId x = q_input(pool, "x", {1, 6, 8, 8}, 0.05, -3);
  pool.set_outputs({quantized(pool,
                              pool.call("aten.avg_pool2d.default", {x},
                                        {{"kernel_size", std::vector<int64_t>{2, 2}},
                                         {"stride", std::vector<int64_t>{2, 2}},
                                         {"padding", std::vector<int64_t>{0, 0}}})[0],
                              qp(0.05, -3))});
  Pool2dParams p6;
  p6.input = {1, 8, 8, 6};
  for (const std::string& t : kTargets) {
    const Isa isa = parse_target(t).isa;
    EXPECT_EQ(lowered_scratch(pool, t, "cortex_m.quantized_avg_pool2d.default"),
              planned(&quantized_avg_pool2d_scratch_size, p6, isa))
        << t;
  }
}

TEST(ConvertScratch, BatchMatmulAndMmRecordTheKernelSize) {
  Graph bmm;
  const ValueId a = q_input(bmm, "a", {3, 5, 8}, 0.05, -3);
  const ValueId b = q_input(bmm, "b", {3, 8, 7}, 0.04, 7);
  bmm.set_outputs({quantized(bmm, bmm.call("aten.bmm.default", {a, b}, {})[0], qp(0.3, 2))});
  Graph mm;
  const ValueId c = q_input(mm, "c", {5, 11}, 0.05, 0);
  const ValueId d = q_input(mm, "d", {11, 13}, 0.02, -128);
  mm.set_outputs({quantized(mm, mm.call("aten.mm.default", {c, d}, {})[0], qp(0.1, -5))});
  BatchMatmulParams p7, p13;
  p7.rhs_rows = 7;
  p13.rhs_rows = 13;
  for (const std::string& t : kTargets) {
    const Isa isa = parse_target(t).isa;
    const int64_t want = planned(&quantized_batch_matmul_scratch_size, p7, isa);
    EXPECT_GT(want, 0);
    EXPECT_EQ(lowered_scratch(bmm, t, "cortex_m.quantized_batch_matmul.default"), want) << t;
    EXPECT_EQ(lowered_scratch(mm, t, "cortex_m.quantized_batch_matmul.default"),
              planned(&quantized_batch_matmul_scratch_size, p13, isa))
        << t;
  }
}

TEST(ConvertScratch, TransposeConvRecordsTheKernelSize) {
  Graph g;
  const ValueId x = q_input(g, "x", {1, 6, 5, 4}, 0.05, -3);
  const ValueId w = int8_const(g, "w", {6, 4, 3, 2}, qp_channels(std::vector<double>(4, 0.004), 1), 3);
  const auto two = [](int64_t h, int64_t w) { return std::vector<int64_t>{h, w}; };
  const ValueId y = g.call(kConv, {x, w, kNoValue},
                           {{"stride", two(2, 1)}, {"padding", two(1, 0)}, {"dilation", two(1, 1)},
                            {"transposed", true}, {"output_padding", two(1, 0)},
                            {"groups", int64_t{1}}})[0];
  g.set_outputs({quantized(g, y, qp(0.2, 4))});
  TransposeConv2dParams p;
  p.filter = {4, 3, 2, 6};  // OHWI: KH * KW * C_in int16 values
  for (const std::string& t : kTargets) {
    const int64_t want =
        planned(&quantized_transpose_conv2d_scratch_size, p, parse_target(t).isa);
    EXPECT_EQ(want, 2 * 3 * 2 * 6);
    EXPECT_EQ(lowered_scratch(g, t, "cortex_m.quantized_transpose_conv2d.default"), want) << t;
  }
}

TEST(ConvertScratch, MeanRecordsOneSumPerInnerElementInMemoryOrder) {
  // [N, C, H, W] reduced over C: inner = H * W contiguous, W alone channels-last ([N, H, W, C]
  // bytes, reduce C innermost: inner 1); H and W channels-last: inner = C.
  struct Case {
    std::vector<int64_t> dims, dim_order;
    int32_t inner;
  };
  for (const Case& c : {Case{{1}, {}, 5 * 7}, Case{{1}, {0, 2, 3, 1}, 1},
                        Case{{2, 3}, {0, 2, 3, 1}, 6}}) {
    Graph g;
    TensorInfo info = int8_info({2, 6, 5, 7}, qp(0.05, 4));
    info.dim_order = c.dim_order;
    const ValueId x = g.add_input("x", info);
    g.set_outputs({quantized(
        g, g.call("aten.mean.dim", {x}, {{"dim", c.dims}, {"keepdim", true}})[0], qp(0.02, -3))});
    MeanParams p;
    p.inner = c.inner;
    for (const std::string& t : kTargets)
      EXPECT_EQ(lowered_scratch(g, t, "cortex_m.quantized_mean.default"),
                planned(&quantized_mean_scratch_size, p, parse_target(t).isa))
          << t << " inner " << c.inner;
  }
}

TEST(ConvertScratch, TheTargetsHaveTheirOwnIsa) {
  EXPECT_EQ(parse_target("cortex-m0plus+int8").isa, Isa::kScalar);
  EXPECT_EQ(parse_target("cortex-m4+int8").isa, Isa::kDsp);
  EXPECT_EQ(parse_target("cortex-m55+int8").isa, Isa::kMve);
}

TEST(ConvertScratch, NegativeScratchIsRejectedByTheOp) {
  Graph bad;
  const ValueId x = q_input(bad, "x", {1, 4, 5, 5}, 0.05, -3);
  EXPECT_THROW(bad.call("cortex_m.quantized_avg_pool2d.default", {x},
                        {{"kernel_size", std::vector<int64_t>{2, 2}},
                         {"stride", std::vector<int64_t>{2, 2}},
                         {"padding", std::vector<int64_t>{0, 0}},
                         {"scratch_bytes", int64_t{-4}}}),
               GraphError);
}

}  // namespace
}  // namespace cortexm
