// One benched layer: seeded int8 data and qparams shared by cortexm and the peer, and a Runner per
// implementation that prepares once and then runs the layer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_shapes.h"

namespace cortexm_bench {

// Tensors carry this much slack at the end: XNNPACK may read (never write) up to 16 bytes past
// its inputs (XNN_EXTRA_BYTES).
constexpr size_t kTensorSlack = 16;

struct LayerData {
  LayerShape shape;
  // NHWC input. Weights: conv OHWI [C_out, KH, KW, C_in / groups]; depthwise [1, KH, KW, C_out];
  // linear [C_out, K]. These are also the layouts XNNPACK takes.
  std::vector<int8_t> input, weights;
  std::vector<int32_t> bias;  // C_out
  int8_t input_zero_point = 0, output_zero_point = 0;
  float input_scale = 1.0f, output_scale = 1.0f;
  // Per output channel for conv and depthwise; one per-tensor scale for linear (XNNPACK's
  // fully-connected qs8 operator has no per-channel variant in this API).
  std::vector<float> kernel_scales;
  // cortexm's fixed-point form of input_scale * kernel_scale / output_scale (computed in float,
  // as XNNPACK does), one per kernel scale.
  std::vector<int32_t> multipliers, shifts;
};

// Deterministic for a given seed.
std::shared_ptr<const LayerData> make_layer_data(const LayerShape& shape, uint32_t seed);

class Runner {
 public:
  virtual ~Runner() = default;
  virtual void run() = 0;
  const std::vector<int8_t>& output() const { return output_; }

 protected:
  std::vector<int8_t> output_;
};

// cortexm's optimized entry points (quantized_conv2d, quantized_depthwise_conv2d,
// quantized_linear) with scratch of exactly their scratch_size. Throws std::runtime_error when
// prepare rejects the layer.
std::unique_ptr<Runner> make_cortexm_runner(std::shared_ptr<const LayerData> data);

// The matching XNNPACK qs8 operator, single-threaded; nullptr when built without XNNPACK. Throws
// std::runtime_error when XNNPACK rejects the layer.
std::unique_ptr<Runner> make_xnnpack_runner(std::shared_ptr<const LayerData> data);

// Initializes XNNPACK; false (with a reason) when built without it or the CPU is unsupported.
bool xnnpack_init(std::string* why_not);

}  // namespace cortexm_bench
