// TFLM's reference kernels name ruy only for its profiler's scope labels, which compile to nothing
// unless ruy's profiler is on: this stands in for ruy's header in the bench's TFLM build.
#ifndef BENCH_TFLM_RUY_PROFILER_INSTRUMENTATION_H_
#define BENCH_TFLM_RUY_PROFILER_INSTRUMENTATION_H_

namespace ruy {
namespace profiler {

class ScopeLabel {
 public:
  template <typename... Args>
  explicit ScopeLabel(Args...) {}
};

}  // namespace profiler
}  // namespace ruy

#endif  // BENCH_TFLM_RUY_PROFILER_INSTRUMENTATION_H_
