#include "cortexm/kernels/quantized_add.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"
#if defined(CORTEXM_HOST_X86)
#include "cortexm/kernels/host_variant.h"
#include "x86/add_s8.h"
#endif

namespace cortexm {

CORTEXM_PREPARE_STEP Error quantized_add_prepare(const AddParams& p) { return check_rescaled_binary(p); }

CORTEXM_PREPARE_STEP Error quantized_sub_prepare(const SubParams& p) { return check_rescaled_binary(p); }

#if CORTEXM_BUILT_ISA == 0
namespace {

void add_scalar(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  const auto one = [&p](int32_t a, int32_t b) { return add_one(p, a, b); };
#if defined(CORTEXM_HOST_X86)
  const bool avx512 = resolve_host_variant(p.host_variant) == HostVariant::kAvx512Vnni;  // one for the whole call
#endif
  for_each_elementwise_run(p.shape, lhs, rhs, output, [&](const int8_t* a, const int8_t* b,
                                                           int8_t* out, int32_t count, int32_t ls,
                                                           int32_t rs) {
    if (ls == 1 && rs == 1) {
#if defined(CORTEXM_HOST_X86)
      if (avx512) {
        x86::add_s8_avx512(p, a, b, out, count);
        return;
      }
#endif
      for (int32_t i = 0; i < count; ++i) out[i] = add_one(p, a[i], b[i]);
    } else {
      strided_run(a, b, out, count, ls, rs, one);
    }
  });
}

}  // namespace
#endif

void quantized_add(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
#if CORTEXM_BUILT_ISA == 2
  mve::quantized_add(p, lhs, rhs, output);
#elif CORTEXM_BUILT_ISA == 1
  dsp::quantized_add(p, lhs, rhs, output);
#else
  add_scalar(p, lhs, rhs, output);
#endif
}

void quantized_sub(const SubParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  const auto one = [&p](int32_t a, int32_t b) {
    const int32_t a_scaled =
        requantize((a + p.lhs_offset) * (1 << kAddLeftShift), p.lhs_multiplier, p.lhs_shift);
    const int32_t b_scaled =
        requantize((b + p.rhs_offset) * (1 << kAddLeftShift), p.rhs_multiplier, p.rhs_shift);
    const int32_t out = wrapping_add(
        requantize(wrapping_sub(a_scaled, b_scaled), p.output_multiplier, p.output_shift), p.output_offset);
    return static_cast<int8_t>(clamp(out, p.activation_min, p.activation_max));
  };
  for_each_elementwise_run(p.shape, lhs, rhs, output,
                           [&](const int8_t* a, const int8_t* b, int8_t* out, int32_t count,
                               int32_t ls, int32_t rs) { strided_run(a, b, out, count, ls, rs, one); });
}

}  // namespace cortexm
