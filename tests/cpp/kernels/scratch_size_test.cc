// The *_scratch_size(params, isa) contract over many awkward shapes: each isa's size is what its
// variant uses (a program reserves its isa's size: OpSchema::planned_scratch). That
// each variant runs with exactly its own size is checked with guard bytes by tests/target
// (kernel_variants_scalar, kernel_variants_dsp_emulated here; MVE and DSP on QEMU).
#include <gtest/gtest.h>

#include <vector>

#include "cortexm/kernels/pool_params.h"
#include "cortexm/kernels/quantized_avg_pool2d.h"
#include "cortexm/kernels/quantized_batch_matmul.h"
#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_linear.h"
#include "cortexm/kernels/quantized_linear_s16.h"
#include "cortexm/kernels/quantized_linear_s16w16.h"
#include "cortexm/kernels/quantized_mean.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"
#include "random_data.h"

namespace cortexm {
namespace {

constexpr int kShapes = 2000;

// Checks scalar <= DSP and scalar <= MVE for one op's params (the int16 kernels: their DSP
// variant reorders into scratch, their MVE variant needs what scalar does or none).
template <typename Params>
void expect_scalar_fits_every_isa(size_t (*size)(const Params&, Isa), const Params& p) {
  const size_t scalar = size(p, Isa::kScalar);
  EXPECT_LE(scalar, size(p, Isa::kDsp));
  EXPECT_LE(scalar, size(p, Isa::kMve));
}

// One kernel for every isa: one size.
template <typename Params>
void expect_one_size(size_t (*size)(const Params&, Isa), const Params& p) {
  const size_t scalar = size(p, Isa::kScalar);
  EXPECT_EQ(scalar, size(p, Isa::kDsp));
  EXPECT_EQ(scalar, size(p, Isa::kMve));
}

ConvGeometry awkward_geometry(testing::RandomData& r) {
  ConvGeometry g;
  g.stride_h = r.uniform(1, 3);
  g.stride_w = r.uniform(1, 3);
  g.dilation_h = r.uniform(1, 2);
  g.dilation_w = r.uniform(1, 2);
  if (r.uniform(0, 2) != 0) g.padding = Padding2d{r.uniform(0, 2), r.uniform(0, 2), r.uniform(0, 2), r.uniform(0, 2)};
  return g;
}

TEST(ScratchSize, Convolutions) {
  testing::RandomData r(13);
  for (int i = 0; i < kShapes; ++i) {
    SCOPED_TRACE(i);
    const int32_t groups = r.uniform(1, 3), group_c = r.uniform(1, 40);
    const int32_t kh = r.uniform(1, 5), kw = r.uniform(1, 700);
    const Dims4 input{r.uniform(1, 2), r.uniform(1, 40), r.uniform(1, 2000), groups * group_c};
    Conv2dParams conv;
    conv.input = input;
    conv.filter = Dims4{groups * r.uniform(1, 8), kh, kw % 7 + 1, group_c};
    conv.geometry = awkward_geometry(r);
    conv.output = quantized_conv2d_output_dims(conv);
    // int16 columns on scalar (4 pixels) and DSP (3 pixels), int8 columns on MVE; none for an
    // unpadded 1x1 window (scalar and MVE read it in place, DSP stages it in the output).
    if (conv.filter.h == 1 && conv.filter.w == 1 && conv.geometry.padding.top == 0 &&
        conv.geometry.padding.bottom == 0 && conv.geometry.padding.left == 0 && conv.geometry.padding.right == 0) {
      EXPECT_EQ(quantized_conv2d_scratch_size(conv, Isa::kScalar), 0u);
      EXPECT_EQ(quantized_conv2d_scratch_size(conv, Isa::kMve), 0u);
      EXPECT_EQ(quantized_conv2d_scratch_size(conv, Isa::kDsp), 0u);
    } else {
      EXPECT_EQ(4 * quantized_conv2d_scratch_size(conv, Isa::kDsp), 3 * quantized_conv2d_scratch_size(conv, Isa::kScalar));
      EXPECT_EQ(quantized_conv2d_scratch_size(conv, Isa::kMve) * 2, quantized_conv2d_scratch_size(conv, Isa::kScalar));
    }

    Conv2dS16Params conv16;
    conv16.input = input;
    conv16.filter = Dims4{groups * r.uniform(1, 8), r.uniform(0, 1) ? 1 : kh, kw, group_c};
    conv16.geometry = awkward_geometry(r);
    conv16.output = quantized_conv2d_s16_output_dims(conv16);
    expect_scalar_fits_every_isa(&quantized_conv2d_s16_scratch_size, conv16);
    // 16x16: every isa reads the column in order, so one size for all (16x8's scalar one).
    Conv2dS16W16Params conv16w16;
    static_cast<Conv2dS16Params&>(conv16w16) = conv16;
    expect_one_size(&quantized_conv2d_s16w16_scratch_size, conv16w16);
    EXPECT_EQ(quantized_conv2d_s16w16_scratch_size(conv16w16, Isa::kDsp),
              quantized_conv2d_s16_scratch_size(conv16, Isa::kScalar));

    DepthwiseConv2dParams dw;
    dw.depth_multiplier = r.uniform(1, 3);
    dw.input = input;
    dw.filter = Dims4{1, kh, kw % 7 + 1, input.c * dw.depth_multiplier};
    dw.geometry = awkward_geometry(r);
    dw.output = quantized_depthwise_conv2d_output_dims(dw);
    EXPECT_EQ(quantized_depthwise_conv2d_scratch_size(dw, Isa::kDsp), 0u);  // accumulators in registers
    EXPECT_EQ(quantized_depthwise_conv2d_scratch_size(dw, Isa::kMve), 0u);

    TransposeConv2dParams tc;
    tc.input = input;
    tc.filter = Dims4{r.uniform(1, 8), kh, kw % 7 + 1, input.c};
    tc.stride_h = r.uniform(1, 3);
    tc.stride_w = r.uniform(1, 3);
    tc.output = quantized_transpose_conv2d_output_dims(tc);
    expect_one_size(&quantized_transpose_conv2d_scratch_size, tc);
  }
}

// LinearParams or LinearS16Params of a random shape.
template <typename Params>
Params random_linear(testing::RandomData& r) {
  Params p;
  p.batches = r.uniform(1, 5);
  p.input_features = r.uniform(1, 5000);
  p.output_features = r.uniform(1, 300);
  return p;
}

TEST(ScratchSize, MatmulsPoolsAndMeans) {
  testing::RandomData r(17);
  for (int i = 0; i < kShapes; ++i) {
    SCOPED_TRACE(i);
    const LinearParams linear = random_linear<LinearParams>(r);
    for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve})
      EXPECT_EQ(quantized_linear_scratch_size(linear, isa), 0u);  // the int8 row in place
    expect_scalar_fits_every_isa(&quantized_linear_s16_scratch_size,
                                 random_linear<LinearS16Params>(r));

    BatchMatmulParams bmm;
    bmm.batch = r.uniform(1, 4);
    bmm.lhs_rows = r.uniform(1, 64);
    bmm.rhs_rows = r.uniform(1, 300);
    bmm.cols = r.uniform(1, 300);
    expect_one_size(&quantized_batch_matmul_scratch_size, bmm);

    MeanParams mean;
    mean.outer = r.uniform(1, 8);
    mean.reduce = r.uniform(1, 4000);
    mean.inner = r.uniform(1, 1000);
    expect_one_size(&quantized_mean_scratch_size, mean);

    Pool2dParams pool;
    pool.input = Dims4{1, r.uniform(1, 40), r.uniform(1, 40), r.uniform(1, 300)};
    pool.kernel_h = r.uniform(1, 40);
    pool.kernel_w = r.uniform(1, 40);
    pool.output = pool2d_output_dims(pool);
    expect_one_size(&quantized_avg_pool2d_scratch_size, pool);
  }
}

struct IsaBytes {
  size_t scalar, dsp, mve;
};

template <typename Params>
IsaBytes bytes(size_t (*size)(const Params&, Isa), const Params& p) {
  return {size(p, Isa::kScalar), size(p, Isa::kDsp), size(p, Isa::kMve)};
}

void expect_bytes(IsaBytes got, IsaBytes want) {
  EXPECT_EQ(got.scalar, want.scalar);
  EXPECT_EQ(got.dsp, want.dsp);
  EXPECT_EQ(got.mve, want.mve);
}

// Real layer shapes (MobileNetV2, a classifier head, Silero's STFT), bytes per isa.
TEST(ScratchSize, RealLayers) {
  Conv2dParams pointwise;  // 1x1 conv 16 -> 96 at 48x48
  pointwise.input = Dims4{1, 48, 48, 16};
  pointwise.filter = Dims4{96, 1, 1, 16};
  pointwise.output = quantized_conv2d_output_dims(pointwise);
  expect_bytes(bytes(&quantized_conv2d_scratch_size, pointwise), {0, 0, 0});

  Conv2dParams stem;  // 3x3 conv 3 -> 16, stride 2, padding 1 at 96x96
  stem.input = Dims4{1, 96, 96, 3};
  stem.filter = Dims4{16, 3, 3, 3};
  stem.geometry.stride_h = stem.geometry.stride_w = 2;
  stem.geometry.padding = Padding2d{1, 1, 1, 1};
  stem.output = quantized_conv2d_output_dims(stem);
  expect_bytes(bytes(&quantized_conv2d_scratch_size, stem), {216, 162, 108});

  DepthwiseConv2dParams dw;  // 3x3 depthwise, 96 channels at 48x48
  dw.input = Dims4{1, 48, 48, 96};
  dw.filter = Dims4{1, 3, 3, 96};
  dw.geometry.padding = Padding2d{1, 1, 1, 1};
  dw.output = quantized_depthwise_conv2d_output_dims(dw);
  expect_bytes(bytes(&quantized_depthwise_conv2d_scratch_size, dw), {384, 0, 0});

  LinearParams head;  // 1280 -> 10
  head.input_features = 1280;
  head.output_features = 10;
  expect_bytes(bytes(&quantized_linear_scratch_size, head), {0, 0, 0});

  LinearS16Params head16;  // 16x8 1280 -> 10
  head16.input_features = 1280;
  head16.output_features = 10;
  expect_bytes(bytes(&quantized_linear_s16_scratch_size, head16), {0, 2560, 0});

  Conv2dS16Params stft;  // Silero's STFT: 1 x 256 window, stride 128, one channel
  stft.input = Dims4{1, 1, 640, 1};
  stft.filter = Dims4{258, 1, 256, 1};
  stft.geometry.stride_w = 128;
  stft.output = quantized_conv2d_s16_output_dims(stft);
  expect_bytes(bytes(&quantized_conv2d_s16_scratch_size, stft), {0, 512, 0});
  Conv2dS16W16Params stft16;  // the same at 16x16: DSP reads the windows in place too
  static_cast<Conv2dS16Params&>(stft16) = stft;
  expect_bytes(bytes(&quantized_conv2d_s16w16_scratch_size, stft16), {0, 0, 0});

  stft.geometry.padding = Padding2d{0, 64, 0, 64};  // padded windows are gathered on every isa
  stft.output = quantized_conv2d_s16_output_dims(stft);
  expect_bytes(bytes(&quantized_conv2d_s16_scratch_size, stft), {512, 512, 512});
  static_cast<Conv2dS16Params&>(stft16) = stft;
  expect_bytes(bytes(&quantized_conv2d_s16w16_scratch_size, stft16), {512, 512, 512});

  LinearS16W16Params head16w16;  // 16x16 1280 -> 10: the row in place on every isa
  static_cast<LinearS16Params&>(head16w16) = head16;
  expect_bytes(bytes(&quantized_linear_s16w16_scratch_size, head16w16), {0, 0, 0});

  Pool2dParams gap;  // global average pool 7x7x1280: sums on the stack or in registers
  gap.input = Dims4{1, 7, 7, 1280};
  gap.kernel_h = gap.kernel_w = 7;
  gap.output = pool2d_output_dims(gap);
  expect_bytes(bytes(&quantized_avg_pool2d_scratch_size, gap), {0, 0, 0});
}

}  // namespace
}  // namespace cortexm
