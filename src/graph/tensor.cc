#include "graph/tensor.h"

#include <cstring>
#include <new>
#include <optional>
#include <sstream>

#include "graph/errors.h"

namespace cortexm {

namespace {

// The element count of `shape`, or nullopt when the product of its non-zero dims overflows int64
// (checked even when a zero dim makes numel 0, so strides computed from the shape stay in range).
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t product = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(product, d, &product)) return std::nullopt;
  }
  return empty ? 0 : product;
}

}  // namespace

int64_t TensorInfo::numel() const {
  const std::optional<int64_t> n = checked_numel(shape);
  if (!n) throw GraphError("tensor shape " + shape_to_string(shape) + " has more than 2^63 elements");
  return *n;
}

size_t TensorInfo::nbytes() const {
  int64_t bytes = 0;
  if (__builtin_mul_overflow(numel(), static_cast<int64_t>(dtype_size(dtype)), &bytes))
    throw GraphError(std::string("tensor ") + dtype_name(dtype) + shape_to_string(shape) + " has more than 2^63 bytes");
  return static_cast<size_t>(bytes);
}

bool TensorInfo::contiguous() const {
  for (size_t i = 0; i < dim_order.size(); ++i)
    if (dim_order[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> TensorInfo::effective_dim_order() const {
  if (!dim_order.empty()) return dim_order;
  std::vector<int64_t> order(shape.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  return order;
}

bool TensorInfo::operator==(const TensorInfo& o) const {
  return dtype == o.dtype && shape == o.shape &&
         effective_dim_order() == o.effective_dim_order() && qparams == o.qparams;
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string info_to_string(const TensorInfo& info) {
  std::ostringstream os;
  os << dtype_name(info.dtype) << shape_to_string(info.shape);
  if (!info.contiguous()) {
    os << (info.dim_order == channels_last_dim_order(info.rank()) ? " cl"
                                                                    : " order" +
                                                                          shape_to_string(info.dim_order));
  }
  if (info.qparams) {
    const auto& q = *info.qparams;
    os << " q(";
    if (q.per_channel()) {
      os << "axis " << q.axis << ", " << q.scales.size() << " scales";
    } else if (!q.scales.empty()) {
      os << q.scales[0] << ", " << q.zero_points[0];
    }
    os << ")";
  }
  return os.str();
}

std::vector<int64_t> channels_last_dim_order(int64_t rank) {
  std::vector<int64_t> order;
  if (rank < 3) {
    for (int64_t i = 0; i < rank; ++i) order.push_back(i);
    return order;
  }
  order.push_back(0);
  for (int64_t i = 2; i < rank; ++i) order.push_back(i);
  order.push_back(1);
  return order;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

Tensor::Tensor(TensorInfo info) : info_(std::move(info)) {
  for (int64_t d : info_.shape)
    if (d < 0) throw GraphError("tensor shape " + shape_to_string(info_.shape) + " has a negative dim");
  const size_t bytes = info_.nbytes();
  const size_t alloc = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  auto* p = static_cast<uint8_t*>(::operator new(alloc, std::align_val_t(64)));
  std::memset(p, 0, alloc);
  buffer_ = std::shared_ptr<uint8_t>(p, [](uint8_t* q) { ::operator delete(q, std::align_val_t(64)); });
}

Tensor Tensor::clone() const {
  Tensor t(info_);
  if (nbytes()) std::memcpy(t.raw(), raw(), nbytes());
  return t;
}

Tensor Tensor::reshaped(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.info_.shape = std::move(shape);
  t.info_.dim_order.clear();
  if (t.info_.numel() != info_.numel())
    throw GraphError("cannot view " + shape_to_string(info_.shape) + " as " +
                     shape_to_string(t.info_.shape));
  return t;
}

}  // namespace cortexm
