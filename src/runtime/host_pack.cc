// host_pack: an op's weights packed once for the host CPU's kernels (the quantized conv's, for the
// AVX512-VNNI product); every other op, and every build but the x86-64 host's, packs nothing.
#include "cortexm/kernels/quantized_conv2d.h"
#include "program/program_generated.h"
#include "runtime/op_context.h"
#include "runtime/ops/conv.h"

namespace cortexm::runtime {

size_t host_pack(const Program& program, int32_t index, void* packed) {
  const fb::Op& op = *program.fb().ops()->Get(index);
  const OpContext ctx{program, op, index, nullptr};
  if (op.kernel() != fb::KernelId_QuantizedConv2d) return 0;
  Conv2dParams p;
  if (!decode_conv_op(ctx, &p).ok()) return 0;  // (load has checked it)
  const size_t bytes = quantized_conv2d_host_packed_size(p);
  if (packed && bytes > 0)
    quantized_conv2d_host_pack(p, reinterpret_cast<const int8_t*>(ctx.input(1).data),
                               ctx.has_input(2) ? reinterpret_cast<const int32_t*>(ctx.input(2).data) : nullptr,
                               packed);
  return bytes;
}

}  // namespace cortexm::runtime
