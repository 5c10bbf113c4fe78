#include "cortexm/kernels/quantized_add.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

Error quantized_add_prepare(const AddParams& p) { return check_rescaled_binary(p); }

#if CORTEXM_BUILT_ISA == 0
namespace {

void add_scalar(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  const auto one = [&p](int32_t a, int32_t b) { return add_one(p, a, b); };
  for_each_elementwise_run(p.shape, lhs, rhs, output, [&](const int8_t* a, const int8_t* b,
                                                           int8_t* out, int32_t count, int32_t ls,
                                                           int32_t rs) {
    if (ls == 1 && rs == 1) {
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

}  // namespace cortexm
