// for_each_channel_run (ops/quant/quant_attrs.h): the one walk of quantize_per_channel and
// dequantize_per_channel over the runs of one channel.
#include <gtest/gtest.h>

#include <vector>

#include "ops/quant/quant_attrs.h"

namespace cortexm {
namespace {

struct SeenRun {
  int64_t start, count, zero_point;
  float scale;
  int32_t params_zero_point, quant_min, quant_max;
};

std::vector<SeenRun> runs(int64_t axis, const std::vector<int64_t>& shape, std::vector<int64_t> zero_points) {
  const Attrs attrs = {{"scales", std::vector<double>{0.5, 0.25, 2.0}},
                       {"zero_points", std::move(zero_points)},
                       {"axis", axis},
                       {"quant_min", int64_t{-127}},
                       {"quant_max", int64_t{127}},
                       {"dtype", DType::kInt8}};
  const OpArgs args("quantized_decomposed.quantize_per_channel.default", "q", attrs);
  std::vector<SeenRun> out;
  ops::for_each_channel_run(args, shape, QuantDtype::kInt8, [&](const ops::ChannelRun& r) {
    EXPECT_EQ(r.params.dtype, QuantDtype::kInt8);
    out.push_back({r.start, r.count, r.zero_point, r.params.scale, r.params.zero_point,
                   r.params.quant_min, r.params.quant_max});
  });
  return out;
}

TEST(ChannelRuns, MiddleAxisInMemoryOrder) {
  for (int64_t axis : {int64_t{1}, int64_t{-2}}) {
    const std::vector<SeenRun> r = runs(axis, {2, 3, 4}, {1, -2, 3});
    ASSERT_EQ(r.size(), 6u);
    for (size_t k = 0; k < r.size(); ++k) {
      const size_t c = k % 3;
      EXPECT_EQ(r[k].start, static_cast<int64_t>(k) * 4);
      EXPECT_EQ(r[k].count, 4);
      EXPECT_EQ(r[k].scale, static_cast<float>(std::vector<double>{0.5, 0.25, 2.0}[c]));
      EXPECT_EQ(r[k].zero_point, (std::vector<int64_t>{1, -2, 3}[c]));
      EXPECT_EQ(r[k].params_zero_point, r[k].zero_point);
      EXPECT_EQ(r[k].quant_min, -127);
      EXPECT_EQ(r[k].quant_max, 127);
    }
  }
}

TEST(ChannelRuns, LastAxisRunsOneElementAndKeepsWideZeroPoints) {
  const int64_t wide = int64_t{1} << 40;  // an int64 bias's zero point, whole
  const std::vector<SeenRun> r = runs(-1, {2, 3}, {0, wide, 0});
  ASSERT_EQ(r.size(), 6u);
  for (size_t k = 0; k < r.size(); ++k) {
    EXPECT_EQ(r[k].start, static_cast<int64_t>(k));
    EXPECT_EQ(r[k].count, 1);
  }
  EXPECT_EQ(r[1].zero_point, wide);
}

}  // namespace
}  // namespace cortexm
