// DSP variant of quantized_add: contiguous runs read 4 elements of each side as one word and
// split them into int16 pairs with the offset added to both lanes (SXTAB16, SXTAB16 ROR #8); the
// three requantizations stay per element. Broadcast runs go element by element.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "dsp/dsp_ops.h"
#include "elementwise.h"

namespace cortexm::dsp {

void quantized_add(const AddParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  // A local copy captured by value: the int8 output stores could alias the caller's params, and
  // every element would reload them.
  const AddParams p = params;
  const uint32_t lhs_offsets = splat16(p.lhs_offset), rhs_offsets = splat16(p.rhs_offset);
  for_each_elementwise_run(p.shape, lhs, rhs, output, [=](const int8_t* a, const int8_t* b, int8_t* out,
                                                           int32_t count, int32_t ls, int32_t rs) {
    if (ls != 1 || rs != 1) {
      strided_run(a, b, out, count, ls, rs, [=](int32_t x, int32_t y) { return add_one(p, x, y); });
      return;
    }
    int32_t i = 0;
    for (; i + 4 <= count; i += 4) {
      const uint32_t x = load_u32(a + i), y = load_u32(b + i);
      const uint32_t x02 = sxtab16(lhs_offsets, x), x13 = sxtab16_ror8(lhs_offsets, x);
      const uint32_t y02 = sxtab16(rhs_offsets, y), y13 = sxtab16_ror8(rhs_offsets, y);
      store_u32(out + i, pack_bytes(add_offset_inputs(p, bottom(x02), bottom(y02)),
                                    add_offset_inputs(p, bottom(x13), bottom(y13)),
                                    add_offset_inputs(p, top(x02), top(y02)),
                                    add_offset_inputs(p, top(x13), top(y13))));
    }
    for (; i < count; ++i) out[i] = add_one(p, a[i], b[i]);
  });
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
