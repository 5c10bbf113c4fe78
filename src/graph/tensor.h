// Tensor metadata (shape, dtype, dim order, quantization) and host tensors.
//
// Shapes are logical (PyTorch's: NCHW for images). dim_order says how the bytes lie in memory:
// empty or [0, 1, 2, 3] is contiguous, [0, 2, 3, 1] is channels-last (NHWC bytes). Host tensors
// in the interpreter always hold logical, contiguous data; dim_order matters to the runtime.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/dtype.h"

namespace cortexm {

struct QuantParams {
  std::vector<double> scales;        // one (per-tensor) or one per channel along axis
  std::vector<int64_t> zero_points;  // same length as scales
  int64_t axis = -1;                 // -1 for per-tensor
  int64_t quant_min = -128;
  int64_t quant_max = 127;

  bool per_channel() const { return axis >= 0; }
  bool operator==(const QuantParams& o) const {
    return scales == o.scales && zero_points == o.zero_points && axis == o.axis &&
           quant_min == o.quant_min && quant_max == o.quant_max;
  }
  bool operator!=(const QuantParams& o) const { return !(*this == o); }
};

struct TensorInfo {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<int64_t> dim_order;  // empty means contiguous
  std::optional<QuantParams> qparams;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  // Both throw GraphError for a negative dim or a size that overflows int64.
  int64_t numel() const;
  size_t nbytes() const;
  bool contiguous() const;  // dim_order is empty or the identity
  std::vector<int64_t> effective_dim_order() const;  // the identity when empty

  bool operator==(const TensorInfo& o) const;
  bool operator!=(const TensorInfo& o) const { return !(*this == o); }
};

std::string shape_to_string(const std::vector<int64_t>& shape);
std::string info_to_string(const TensorInfo& info);  // "int8[1, 3, 8, 8] cl q(0.02, -3)"
std::vector<int64_t> channels_last_dim_order(int64_t rank);  // [0, 2, 3, ..., 1]
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

// Logical, contiguous host data with its info. Copies share the buffer (like torch tensors);
// clone() makes a deep copy. Buffers are 64-byte aligned and zero-initialized.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorInfo info);

  const TensorInfo& info() const { return info_; }
  TensorInfo& mutable_info() { return info_; }
  DType dtype() const { return info_.dtype; }
  const std::vector<int64_t>& shape() const { return info_.shape; }
  int64_t numel() const { return info_.numel(); }
  size_t nbytes() const { return info_.nbytes(); }
  bool defined() const { return buffer_ != nullptr; }

  void* raw() { return buffer_.get(); }
  const void* raw() const { return buffer_.get(); }
  template <typename T>
  T* data() { return static_cast<T*>(raw()); }
  template <typename T>
  const T* data() const { return static_cast<const T*>(raw()); }

  Tensor clone() const;
  // Same bytes seen with another shape (numel and dtype must match): view / reshape.
  Tensor reshaped(std::vector<int64_t> shape) const;

 private:
  TensorInfo info_;
  std::shared_ptr<uint8_t> buffer_;
};

}  // namespace cortexm
