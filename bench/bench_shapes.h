// Layer shapes for the benches: bench/shapes/<model>.txt, one layer per line.
//
// Lines starting with '#' and blank lines are skipped. The first other line names the columns, in
// any order: name kind N H W C_in C_out KH KW stride_h stride_w pad_top pad_left pad_bottom
// pad_right, and optionally groups, dilation_h, dilation_w (default 1). kind is conv, depthwise or
// linear; avgpool, add and mul rows are for bench/qemu_layer_counts.py and skipped here. C_out is the output channel count (depthwise: C_in * depth multiplier). A linear layer
// uses N (batch), C_in (K) and C_out; its other columns must be 1 (sizes) or 0 (pads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cortexm_bench {

enum class LayerKind { kConv, kDepthwise, kLinear };

const char* kind_name(LayerKind kind);

struct LayerShape {
  std::string name;
  LayerKind kind = LayerKind::kConv;
  int32_t n = 1, h = 1, w = 1, c_in = 1, c_out = 1, kh = 1, kw = 1;
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int32_t groups = 1, dilation_h = 1, dilation_w = 1;

  int32_t out_h() const;
  int32_t out_w() const;
  int64_t output_elements() const { return int64_t{n} * out_h() * out_w() * c_out; }
  // Multiply-accumulates of one run, padded taps included.
  int64_t macs() const;
};

struct ModelShapes {
  std::string model;  // the file's stem
  std::vector<LayerShape> layers;
};

// Throws std::runtime_error naming the file and line of a malformed entry.
ModelShapes read_shapes(const std::string& path);

// Every *.txt in dir, sorted by file name.
std::vector<ModelShapes> read_shapes_dir(const std::string& dir);

}  // namespace cortexm_bench
