// Window geometry of aten.avg_pool2d / aten.max_pool2d on NCHW or CHW input, with torch's checks
// and output-size rule.
#pragma once

#include "cortexm/portable/pool2d.h"
#include "ops/portable_call.h"
#include "ops/pool/runtime/float_pool2d_codec.h"

namespace cortexm::ops {

struct Pool2dGeometry {
  int64_t planes;  // N * C
  int64_t h, w, kh, kw, sh, sw, ph, pw, dh, dw, oh, ow;
};

// torch's pooling_output_shape: floor (or ceil) of the window count, and with ceil_mode the last
// window must start inside the input or the left padding.
inline int64_t pool_output_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                                bool ceil_mode) {
  return portable::pool2d_output_size(in, k, pad, stride, dil, ceil_mode);
}

// Reads kernel_size, stride ([] = kernel), padding, ceil_mode and, if with_dilation, dilation.
inline Pool2dGeometry pool2d_geometry(const OpArgs& args, const TensorInfo& input,
                                      bool with_dilation) {
  auto pick = [&](const char* attr, size_t axis, bool empty_ok) -> int64_t {
    const std::vector<int64_t>& v = args.ints(attr);
    if (v.empty() && empty_ok) return -1;
    if (v.size() != 1 && v.size() != 2)
      args.fail("attribute '" + std::string(attr) + "' = " + shape_to_string(v) + " has " +
                std::to_string(v.size()) + " values, expected 1 or 2" +
                (empty_ok ? " (or none)" : ""));
    return v.size() == 1 ? v[0] : v[axis];
  };
  const int64_t rank = input.rank();
  if (rank != 3 && rank != 4)
    args.fail("input is " + info_to_string(input) + ", expected rank 3 (CHW) or 4 (NCHW)");
  for (int64_t d = rank - 3; d < rank; ++d)
    if (input.shape[d] == 0)
      args.fail("input " + shape_to_string(input.shape) + " has an empty non-batch dim");
  Pool2dGeometry g{};
  g.planes = input.shape[rank - 3] * (rank == 4 ? input.shape[0] : 1);
  g.h = input.shape[rank - 2];
  g.w = input.shape[rank - 1];
  g.kh = pick("kernel_size", 0, false);
  g.kw = pick("kernel_size", 1, false);
  g.sh = pick("stride", 0, true);
  g.sw = pick("stride", 1, true);
  if (g.sh < 0) g.sh = g.kh, g.sw = g.kw;
  g.ph = pick("padding", 0, false);
  g.pw = pick("padding", 1, false);
  g.dh = with_dilation ? pick("dilation", 0, false) : 1;
  g.dw = with_dilation ? pick("dilation", 1, false) : 1;
  const std::string k = "[" + std::to_string(g.kh) + ", " + std::to_string(g.kw) + "]";
  if (g.kh < 1 || g.kw < 1) args.fail("kernel_size " + k + " must be >= 1");
  if (g.sh < 1 || g.sw < 1)
    args.fail("stride [" + std::to_string(g.sh) + ", " + std::to_string(g.sw) + "] must be >= 1");
  if (g.dh < 1 || g.dw < 1)
    args.fail("dilation [" + std::to_string(g.dh) + ", " + std::to_string(g.dw) + "] must be >= 1");
  const std::string p = "[" + std::to_string(g.ph) + ", " + std::to_string(g.pw) + "]";
  if (g.ph < 0 || g.pw < 0) args.fail("padding " + p + " must be >= 0");
  if (g.ph > g.kh / 2 || g.pw > g.kw / 2)
    args.fail("padding " + p + " must be at most half of kernel_size " + k);
  const bool ceil_mode = args.b("ceil_mode");
  g.oh = pool_output_size(g.h, g.kh, g.ph, g.sh, g.dh, ceil_mode);
  g.ow = pool_output_size(g.w, g.kw, g.pw, g.sw, g.dw, ceil_mode);
  if (g.oh < 1 || g.ow < 1)
    args.fail("input " + shape_to_string(input.shape) + " gives output size [" +
              std::to_string(g.oh) + ", " + std::to_string(g.ow) + "], which is too small");
  return g;
}

// The portable kernel's parameters for a geometry from pool2d_geometry.
inline portable::Pool2dParams portable_pool2d(const OpArgs& args, const TensorInfo& input,
                                              const Pool2dGeometry& g) {
  portable::Pool2dParams p;
  p.input = portable_shape(args, input.shape);
  p.kernel_h = g.kh, p.kernel_w = g.kw;
  p.stride_h = g.sh, p.stride_w = g.sw;
  p.pad_h = g.ph, p.pad_w = g.pw;
  p.dilation_h = g.dh, p.dilation_w = g.dw;
  p.ceil_mode = args.b("ceil_mode");
  return p;
}

// The op as a program's FloatPool2d kernel.
inline EncodedOp encode_float_pool2d(program::ParamsBuilder& b, const NodeContext& node, fb::Pool2dKind kind,
                                     const portable::AvgPool2dParams& p) {
  flatbuffers::Offset<fb::FloatPool2dParams> table;
  if (!program::encode_float_pool2d(b.fbb(), kind, p, &table))
    node.fail("a window field or divisor_override does not fit a program's int32");
  return program::encoded(fb::KernelId_FloatPool2d, table);
}

inline std::vector<int64_t> pool2d_output_shape(const TensorInfo& input, const Pool2dGeometry& g) {
  std::vector<int64_t> shape = input.shape;
  shape[shape.size() - 2] = g.oh;
  shape[shape.size() - 1] = g.ow;
  return shape;
}

}  // namespace cortexm::ops
