// host_pack: an op's weights packed once for the host CPU's kernels (the quantized conv's and
// linear's, for the AVX512-VNNI product); every other op, and every build but the x86-64 host's,
// packs nothing.
#include "program/program_generated.h"
#include "runtime/op_context.h"
#include "runtime/ops/host_pack_ops.h"

namespace cortexm::runtime {

size_t host_pack(const Program& program, int32_t index, HostVariant variant, void* packed) {
  const fb::Op& op = *program.fb().ops()->Get(index);
  const OpContext ctx{program, op, index, nullptr};
  switch (op.kernel()) {
    case fb::KernelId_QuantizedConv2d: return host_pack_quantized_conv2d(ctx, variant, packed);
    case fb::KernelId_QuantizedLinear: return host_pack_quantized_linear(ctx, variant, packed);
    default: return 0;
  }
}

}  // namespace cortexm::runtime
