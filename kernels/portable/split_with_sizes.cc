#include "cortexm/portable/split_with_sizes.h"

namespace cortexm::portable {

Error split_with_sizes_prepare(const SplitWithSizesParams& p) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.input.rank < 1) return invalid("self.rank", p.input.rank, "must be >= 1");
  int32_t dim = 0;
  CORTEXM_RETURN_IF_ERROR(normalize_dim(p.dim, p.input.rank, &dim));
  if (p.num_outputs < 1 || p.split_sizes == nullptr)
    return invalid("split_sizes", p.num_outputs, "must hold at least one size");
  int64_t total = 0;
  for (int32_t k = 0; k < p.num_outputs; ++k) {
    if (p.split_sizes[k] < 0 || p.split_sizes[k] > p.input.dims[dim])
      return invalid("split_sizes", p.split_sizes[k], "must be in [0, size of dim]", k);
    total += p.split_sizes[k];
  }
  if (total != p.input.dims[dim]) return invalid("split_sizes", total, "must sum to the size of dim");
  return kOk;
}

SliceParams split_with_sizes_slice(const SplitWithSizesParams& p, int32_t k) {
  SliceParams s;
  s.input = p.input;
  s.dim = p.dim;
  s.element_size = p.element_size;
  int64_t start = 0;
  for (int32_t i = 0; i < k; ++i) start += p.split_sizes[i];
  s.start = start;
  s.end = start + p.split_sizes[k];
  return s;
}

void split_with_sizes(const SplitWithSizesParams& p, const void* input, void* const* outputs) {
  for (int32_t k = 0; k < p.num_outputs; ++k) slice(split_with_sizes_slice(p, k), input, outputs[k]);
}

}  // namespace cortexm::portable
