// A tensor as the runtime sees it: logical shape (PyTorch's) and element strides that follow its
// dim order, so channels-last bytes and contiguous bytes are both just strides.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cortexm::runtime {

constexpr int kMaxRank = 8;

// Same numbering as the schema's DType (and the graph's).
enum class DType : uint8_t { kFloat32 = 0, kInt8, kInt16, kInt32, kInt64, kBool, kUInt8 };
constexpr uint8_t kNumDTypes = 7;

size_t dtype_size(DType dtype);

struct TensorView {
  uint8_t* data = nullptr;
  DType dtype = DType::kFloat32;
  int32_t rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};  // in elements, per logical dim

  int64_t numel() const;
  size_t element_size() const { return dtype_size(dtype); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  // Strides equal the contiguous strides of `order` (outermost first), ignoring extent-1 dims.
  bool has_layout(const int64_t* order) const;
  bool is_contiguous() const;
  bool is_channels_last() const;  // rank 4, bytes NHWC
  // Same shape and the same strides (extent-1 dims ignored): elementwise ops may run on bytes.
  bool same_layout(const TensorView& other) const;
};

// Whether a and b put the n-th element (in logical row-major order) at the same offset: same
// element size and numel, and the same (extent, stride) runs over their extent > 1 dims once
// adjacent dims that step over each other exactly are merged (every contiguous view is one run;
// a view that inserts or removes size-1 dims keeps the runs). Such a view may run in place.
bool same_bytes(const TensorView& a, const TensorView& b);

// Whether permuting `in` (output dim i = input dim dims[i], `count` entries) into `out` leaves
// every element at its byte offset: dims is a permutation of in's dims, the permuted shape is
// out's, and same_bytes(in permuted, out). Such a permute runs in place and moves nothing.
bool permute_keeps_bytes(const TensorView& in, const TensorView& out, const uint8_t* dims, int32_t count);

// Strides of `shape` laid out in `dim_order` (nullptr: contiguous).
void strides_for(const int64_t* shape, int32_t rank, const uint8_t* dim_order, int64_t* strides);

// Copies every logical element of `src` into `dst` (same shape, element size and numel); a plain
// memcpy when both are contiguous, nothing when they are the same bytes.
void copy_logical(const TensorView& src, const TensorView& dst);

}  // namespace cortexm::runtime
