// Shared by the cortex_m op registrations: attribute decoding into kernel params, NCHW <-> NHWC
// staging (interpreter tensors are logical NCHW; the kernels read channels-last bytes).
#pragma once

#include <vector>

#include "core/error_message.h"
#include "cortexm/kernels/conv_params.h"
#include "cortexm/kernels/shape.h"
#include "ops/op_util.h"

namespace cortexm::ops {

// Fails with the kernel's own sentence when its prepare step rejects the params.
inline void check_kernel(const OpArgs& args, const Error& error) {
  if (!error.ok()) args.fail(error_message(args.op().c_str(), error));
}

inline int32_t int32_attr(const OpArgs& args, const std::string& name, int64_t lo, int64_t hi) {
  const int64_t v = args.i(name);
  if (v < lo || v > hi)
    args.fail("attribute '" + name + "' = " + std::to_string(v) + " must be in [" +
              std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int32_t>(v);
}

inline std::vector<int32_t> int32_list_attr(const OpArgs& args, const std::string& name,
                                            size_t expected) {
  const auto& v = args.ints(name);
  if (v.size() != expected)
    args.fail("attribute '" + name + "' has " + std::to_string(v.size()) + " values, expected " +
              std::to_string(expected));
  std::vector<int32_t> out;
  for (int64_t x : v) {
    if (x < INT32_MIN || x > INT32_MAX)
      args.fail("attribute '" + name + "' value " + std::to_string(x) + " does not fit in int32");
    out.push_back(static_cast<int32_t>(x));
  }
  return out;
}

// scratch_bytes: the scratch the lowering computed with the kernel's size function for the target
// isa (0 = not planned), read by the memory planner; the interpreter allocates its own.
inline AttrSpec scratch_bytes_attr() {
  return {"scratch_bytes", AttrKind::kInt, false, AttrValue(int64_t{0})};
}

inline void check_scratch_bytes(const OpArgs& args) { int32_attr(args, "scratch_bytes", 0, INT32_MAX); }

// (h, w) from a 2-value attribute.
inline std::pair<int32_t, int32_t> pair_attr(const OpArgs& args, const std::string& name) {
  const auto v = int32_list_attr(args, name, 2);
  return {v[0], v[1]};
}

// (pad_h, pad_w) symmetric, or (top, left, bottom, right).
inline Padding2d padding_attr(const OpArgs& args) {
  const auto& v = args.ints("padding");
  if (v.size() == 2) return {static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1]),
                             static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1])};
  if (v.size() == 4) return {static_cast<int32_t>(v[0]), static_cast<int32_t>(v[1]),
                             static_cast<int32_t>(v[2]), static_cast<int32_t>(v[3])};
  args.fail("attribute 'padding' has " + std::to_string(v.size()) +
            " values, expected 2 (pad_h, pad_w) or 4 (top, left, bottom, right)");
}

// Logical NCHW shape -> kernel dims.
inline Dims4 nchw_dims(const std::vector<int64_t>& s) {
  return {static_cast<int32_t>(s[0]), static_cast<int32_t>(s[2]), static_cast<int32_t>(s[3]),
          static_cast<int32_t>(s[1])};
}

inline Dims4 dims4(const std::vector<int64_t>& s) {
  return {static_cast<int32_t>(s[0]), static_cast<int32_t>(s[1]), static_cast<int32_t>(s[2]),
          static_cast<int32_t>(s[3])};
}

// Rank-4 int8 (or `dtype`) activation input with every extent within int32.
void require_int8_nchw(const InferContext& ctx, size_t i, DType dtype = DType::kInt8);

std::vector<int8_t> nchw_to_nhwc(const Tensor& t);

// The same staging for any element type (the int16 kernels).
template <typename T>
std::vector<T> nchw_to_nhwc_as(const Tensor& t) {
  const auto& s = t.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  std::vector<T> out(static_cast<size_t>(t.numel()));
  const T* in = t.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out[((b * h + y) * w + x) * c + ch] = in[((b * c + ch) * h + y) * w + x];
  return out;
}

template <typename T>
void nhwc_to_nchw_as(const std::vector<T>& nhwc, Tensor& out) {
  const auto& s = out.shape();
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  T* o = out.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          o[((b * c + ch) * h + y) * w + x] = nhwc[((b * h + y) * w + x) * c + ch];
}
void nhwc_to_nchw(const std::vector<int8_t>& nhwc, Tensor& out);

}  // namespace cortexm::ops
