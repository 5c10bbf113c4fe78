#include "runtime/tensor_view.h"

#include <cstring>

namespace cortexm::runtime {

size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kUInt8: return 1;
  }
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= shape[d];
  return n;
}

bool TensorView::has_layout(const int64_t* order) const {
  int64_t expected = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    const int64_t d = order[k];
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

bool TensorView::is_contiguous() const {
  int64_t order[kMaxRank];
  for (int32_t d = 0; d < rank; ++d) order[d] = d;
  return has_layout(order);
}

bool TensorView::is_channels_last() const {
  static const int64_t kNhwc[4] = {0, 2, 3, 1};
  return rank == 4 && has_layout(kNhwc);
}

bool TensorView::same_layout(const TensorView& other) const {
  if (rank != other.rank) return false;
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] != other.shape[d]) return false;
    if (shape[d] != 1 && strides[d] != other.strides[d]) return false;
  }
  return true;
}

namespace {

// (extent, stride) runs of the extent > 1 dims in logical order, adjacent dims merged where the
// outer one steps over the inner one exactly (graph/layout.cc does the same); returns the count.
int32_t element_runs(const TensorView& v, int64_t* extents, int64_t* strides) {
  int32_t n = 0;
  for (int32_t d = 0; d < v.rank; ++d) {
    if (v.shape[d] == 1) continue;
    if (n > 0 && strides[n - 1] == v.strides[d] * v.shape[d]) {
      extents[n - 1] *= v.shape[d];
      strides[n - 1] = v.strides[d];
    } else {
      extents[n] = v.shape[d];
      strides[n] = v.strides[d];
      ++n;
    }
  }
  return n;
}

}  // namespace

bool same_bytes(const TensorView& a, const TensorView& b) {
  if (a.element_size() != b.element_size() || a.numel() != b.numel()) return false;
  int64_t a_extents[kMaxRank], a_strides[kMaxRank], b_extents[kMaxRank], b_strides[kMaxRank];
  const int32_t na = element_runs(a, a_extents, a_strides), nb = element_runs(b, b_extents, b_strides);
  if (na != nb) return false;
  for (int32_t k = 0; k < na; ++k)
    if (a_extents[k] != b_extents[k] || a_strides[k] != b_strides[k]) return false;
  return true;
}

bool permute_keeps_bytes(const TensorView& in, const TensorView& out, const uint8_t* dims, int32_t count) {
  if (dims == nullptr || count != in.rank || out.rank != in.rank || in.dtype != out.dtype) return false;
  bool seen[kMaxRank] = {};
  TensorView permuted = in;
  for (int32_t i = 0; i < count; ++i) {
    const uint8_t d = dims[i];
    if (d >= in.rank || seen[d]) return false;
    seen[d] = true;
    permuted.shape[i] = in.shape[d];
    permuted.strides[i] = in.strides[d];
    if (permuted.shape[i] != out.shape[i]) return false;
  }
  return same_bytes(permuted, out);
}

void strides_for(const int64_t* shape, int32_t rank, const uint8_t* dim_order, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t k = rank - 1; k >= 0; --k) {
    const int32_t d = dim_order ? dim_order[k] : k;
    strides[d] = stride;
    stride *= shape[d];
  }
}

namespace {

// Logical index odometer over a view: offset() is the element offset of the current index.
struct Walker {
  const TensorView& view;
  int64_t index[kMaxRank] = {};
  int64_t offset = 0;

  explicit Walker(const TensorView& v) : view(v) {}
  void next() {
    for (int32_t d = view.rank - 1; d >= 0; --d) {
      offset += view.strides[d];
      if (++index[d] < view.shape[d]) return;
      offset -= view.strides[d] * view.shape[d];
      index[d] = 0;
    }
  }
};

template <typename T>
void copy_elements(const TensorView& src, const TensorView& dst, int64_t count) {
  const T* in = reinterpret_cast<const T*>(src.data);
  T* out = reinterpret_cast<T*>(dst.data);
  Walker s(src), t(dst);
  for (int64_t i = 0; i < count; ++i) {
    out[t.offset] = in[s.offset];
    s.next();
    t.next();
  }
}

}  // namespace

void copy_logical(const TensorView& src, const TensorView& dst) {
  const int64_t count = dst.numel();
  if (count == 0) return;
  if (src.is_contiguous() && dst.is_contiguous()) {
    if (src.data != dst.data) std::memmove(dst.data, src.data, dst.nbytes());
    return;
  }
  switch (dst.element_size()) {
    case 1: copy_elements<uint8_t>(src, dst, count); break;
    case 2: copy_elements<uint16_t>(src, dst, count); break;
    case 4: copy_elements<uint32_t>(src, dst, count); break;
    case 8: copy_elements<uint64_t>(src, dst, count); break;
    default: break;
  }
}

}  // namespace cortexm::runtime
