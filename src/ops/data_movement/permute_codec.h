// The params of Permute (permute_copy, _clone_dim_order): output dim i is input dim dims[i]. A
// clone is the identity permutation: the tensors' dim orders say how the bytes move.
#pragma once

#include <cstdint>
#include <vector>

#include "program/params_builder.h"

namespace cortexm::program {

// dims: normalized, one per input dim.
inline EncodedOp encode_permute(ParamsBuilder& b, const std::vector<int64_t>& dims) {
  std::vector<uint8_t> stored;
  for (int64_t d : dims) stored.push_back(static_cast<uint8_t>(d));
  return encoded(fb::KernelId_Permute, fb::CreatePermuteParams(b.fbb(), b.fbb().CreateVector(stored)));
}

}  // namespace cortexm::program
