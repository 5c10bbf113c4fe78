// The ops whose weights the host packs at load (runtime::host_pack): each returns the bytes its
// op's packing takes and, with `packed`, writes it there.
#pragma once

#include <cstddef>

#include "runtime/op_context.h"

namespace cortexm::runtime {

size_t host_pack_quantized_conv2d(const OpContext& ctx, void* packed);
size_t host_pack_quantized_linear(const OpContext& ctx, void* packed);

}  // namespace cortexm::runtime
