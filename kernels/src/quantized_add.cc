#include "cortexm/kernels/quantized_add.h"

#include "cortexm/kernels/requantize.h"
#include "elementwise.h"
#include "variants.h"

namespace cortexm {

Error quantized_add_prepare(const AddParams& p) { return check_rescaled_binary(p); }

#if CORTEXM_BUILT_ISA == 0
namespace {

void add_scalar(const AddParams& p, const int8_t* lhs, const int8_t* rhs, int8_t* output) {
  for_each_broadcast_run(p.shape, [&](int64_t li, int64_t ri, int32_t count, int32_t ls, int32_t rs) {
    const int8_t* a = lhs + li;
    const int8_t* b = rhs + ri;
    int8_t* out = output;
    output += count;
    if (ls == 1 && rs == 1) {
      for (int32_t i = 0; i < count; ++i) out[i] = add_one(p, a[i], b[i]);
    } else {
      for (int32_t i = 0; i < count; ++i) out[i] = add_one(p, a[i * ls], b[i * rs]);
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
