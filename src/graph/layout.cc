#include "graph/layout.h"

#include <algorithm>
#include <utility>

namespace cortexm {

namespace {

// Logical dims of extent other than 1, in order.
std::vector<int64_t> non_unit_dims(const std::vector<int64_t>& shape) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(static_cast<int64_t>(d));
  return dims;
}

// (extent, stride) runs of the non-size-1 dims in logical order, adjacent dims merged where the
// outer one steps over the inner one exactly: any contiguous value is one run (numel, 1).
std::vector<std::pair<int64_t, int64_t>> element_runs(const TensorInfo& info) {
  const std::vector<int64_t> strides = layout_strides(info.shape, info.dim_order);
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t d : non_unit_dims(info.shape)) {
    const int64_t extent = info.shape[static_cast<size_t>(d)], stride = strides[static_cast<size_t>(d)];
    if (!runs.empty() && runs.back().second == stride * extent) {
      runs.back() = {runs.back().first * extent, stride};
    } else {
      runs.emplace_back(extent, stride);
    }
  }
  return runs;
}

}  // namespace

std::vector<int64_t> contiguous_dim_order(size_t rank) {
  std::vector<int64_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = static_cast<int64_t>(i);
  return order;
}

std::optional<std::vector<int64_t>> view_dim_order(const TensorInfo& in,
                                                   const std::vector<int64_t>& shape) {
  if (in.contiguous()) return contiguous_dim_order(shape.size());
  const std::vector<int64_t> in_dims = non_unit_dims(in.shape);
  const std::vector<int64_t> out_dims = non_unit_dims(shape);
  if (in_dims.size() != out_dims.size()) return std::nullopt;
  std::vector<int64_t> out_of_in(in.shape.size(), -1);  // input dim -> output dim
  for (size_t k = 0; k < in_dims.size(); ++k) {
    if (in.shape[static_cast<size_t>(in_dims[k])] != shape[static_cast<size_t>(out_dims[k])])
      return std::nullopt;
    out_of_in[static_cast<size_t>(in_dims[k])] = out_dims[k];
  }
  // The kept dims in the input's physical order, then each size-1 dim before the first later dim.
  std::vector<int64_t> order;
  for (int64_t d : in.dim_order)
    if (out_of_in[static_cast<size_t>(d)] >= 0) order.push_back(out_of_in[static_cast<size_t>(d)]);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) continue;
    const int64_t dim = static_cast<int64_t>(d);
    const auto later = std::find_if(order.begin(), order.end(), [&](int64_t o) { return o > dim; });
    order.insert(later, dim);
  }
  return order;
}

std::vector<int64_t> layout_strides(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& dim_order) {
  const std::vector<int64_t> order = dim_order.empty() ? contiguous_dim_order(shape.size()) : dim_order;
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t stride = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[static_cast<size_t>(order[k])] = stride;
    stride *= shape[static_cast<size_t>(order[k])];
  }
  return strides;
}

bool same_bytes(const TensorInfo& a, const TensorInfo& b) {
  if (a.dtype != b.dtype || a.numel() != b.numel()) return false;
  return element_runs(a) == element_runs(b);
}

bool permute_keeps_bytes(const TensorInfo& in, const TensorInfo& out, const std::vector<int64_t>& dims) {
  const size_t rank = in.shape.size();
  if (in.dtype != out.dtype || dims.size() != rank || out.shape.size() != rank) return false;
  const std::vector<int64_t> in_strides = layout_strides(in.shape, in.dim_order);
  const std::vector<int64_t> out_strides = layout_strides(out.shape, out.dim_order);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = dims[i] < 0 ? dims[i] + static_cast<int64_t>(rank) : dims[i];
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
    if (out.shape[i] != in.shape[static_cast<size_t>(d)]) return false;
    if (out.shape[i] > 1 && out_strides[i] != in_strides[static_cast<size_t>(d)]) return false;
  }
  return true;
}

}  // namespace cortexm
