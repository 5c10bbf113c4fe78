// The ops whose weights the host packs at load (runtime::host_pack): each returns the bytes its
// op's packing for `variant` takes and, with `packed`, writes it there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/op_context.h"

namespace cortexm::runtime {

size_t host_pack_quantized_conv2d(const OpContext& ctx, HostVariant variant, void* packed);
size_t host_pack_quantized_linear(const OpContext& ctx, HostVariant variant, void* packed);

// Input `i` is a constant: its bytes are there at load (an arena tensor has none yet).
inline bool input_is_constant(const OpContext& ctx, int32_t i) {
  return ctx.program.fb().tensors()->Get(ctx.op.inputs()->Get(i))->location() == fb::Location_Constant;
}

// Their shared step: the kernel's packing of params p (for p.host_variant), weights input 1 and the
// optional int32 bias input 2. Only constants are packed: the packing holds the bias, so weights or
// a bias in the arena (a program input, an op's output) leave the op unpacked, its kernel reading
// them as the run finds them.
template <class P, size_t (*Size)(const P&), void (*Pack)(const P&, const int8_t*, const int32_t*, void*)>
size_t host_pack_weights(const OpContext& ctx, const P& p, void* packed) {
  if (!input_is_constant(ctx, 1) || (ctx.has_input(2) && !input_is_constant(ctx, 2))) return 0;
  const size_t bytes = Size(p);
  if (packed && bytes > 0)
    Pack(p, reinterpret_cast<const int8_t*>(ctx.input(1).data),
         ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr, packed);
  return bytes;
}

}  // namespace cortexm::runtime
