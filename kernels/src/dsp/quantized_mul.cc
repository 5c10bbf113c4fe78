// DSP variant of quantized_mul: contiguous runs read 4 elements of each side as one word, split
// them into int16 pairs with the offsets added to both lanes (SXTAB16, SXTAB16 ROR #8) and
// multiply lane by lane (SMULBB, SMULTT); the requantization stays per element. Broadcast runs go
// element by element.
#include "variants.h"

#if CORTEXM_BUILT_ISA == 1

#include "dsp/dsp_ops.h"
#include "elementwise.h"

namespace cortexm::dsp {

namespace {

inline int8_t from_product(const MulParams& p, int32_t product) {
  const int32_t out = wrapping_add(
      requantize(product, p.output_multiplier, p.output_shift), p.output_offset);
  return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
}

}  // namespace

void quantized_mul(const MulParams& params, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  // A local copy captured by value: the int8 output stores could alias the caller's params, and
  // every element would reload them.
  const MulParams p = params;
  const uint32_t lhs_offsets = splat16(p.lhs_offset), rhs_offsets = splat16(p.rhs_offset);
  for_each_elementwise_run(p.shape, lhs, rhs, output, [=](const int8_t* a, const int8_t* b, int8_t* out,
                                                           int32_t count, int32_t ls, int32_t rs) {
    if (ls != 1 || rs != 1) {
      strided_run(a, b, out, count, ls, rs,
                  [=](int32_t x, int32_t y) { return mul_one(p, x + p.lhs_offset, y + p.rhs_offset); });
      return;
    }
    int32_t i = 0;
    for (; i + 4 <= count; i += 4) {
      const uint32_t x = load_u32(a + i), y = load_u32(b + i);
      const uint32_t x02 = sxtab16(lhs_offsets, x), x13 = sxtab16_ror8(lhs_offsets, x);
      const uint32_t y02 = sxtab16(rhs_offsets, y), y13 = sxtab16_ror8(rhs_offsets, y);
      store_u32(out + i, pack_bytes(from_product(p, smulbb(x02, y02)), from_product(p, smulbb(x13, y13)),
                                    from_product(p, smultt(x02, y02)), from_product(p, smultt(x13, y13))));
    }
    for (; i < count; ++i) out[i] = mul_one(p, a[i] + p.lhs_offset, b[i] + p.rhs_offset);
  });
}

}  // namespace cortexm::dsp

#endif  // CORTEXM_BUILT_ISA == 1
