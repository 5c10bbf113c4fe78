#include "cortexm/portable/clone_dim_order.h"

namespace cortexm::portable {

namespace {

Error check_dim_order(const int32_t* order, int32_t rank, const char* argument) {
  bool seen[kMaxDims] = {false, false, false, false, false, false};
  for (int i = 0; i < rank; ++i) {
    if (order[i] < 0 || order[i] >= rank) return invalid(argument, order[i], "must be in [0, rank)", i);
    if (seen[order[i]]) return invalid(argument, order[i], "repeats a dim", i);
    seen[order[i]] = true;
  }
  return kOk;
}

}  // namespace

Error clone_dim_order_prepare(const CloneDimOrderParams& p, PermuteParams* out) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.shape, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  CORTEXM_RETURN_IF_ERROR(check_dim_order(p.input_dim_order, p.shape.rank, "input_dim_order"));
  CORTEXM_RETURN_IF_ERROR(check_dim_order(p.output_dim_order, p.shape.rank, "dim_order"));
  PermuteParams pp;
  pp.element_size = p.element_size;
  pp.input.rank = p.shape.rank;
  int32_t position[kMaxDims] = {0, 0, 0, 0, 0, 0};  // physical position of each logical dim
  for (int i = 0; i < p.shape.rank; ++i) {
    pp.input.dims[i] = p.shape.dims[p.input_dim_order[i]];
    position[p.input_dim_order[i]] = i;
  }
  for (int i = 0; i < p.shape.rank; ++i) pp.perm[i] = position[p.output_dim_order[i]];
  *out = pp;
  return kOk;
}

void clone_dim_order(const PermuteParams& permute_params, const void* input, void* output) {
  permute(permute_params, input, output);
}

}  // namespace cortexm::portable
