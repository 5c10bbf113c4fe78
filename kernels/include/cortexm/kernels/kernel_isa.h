// The kernel variant this build runs, chosen at compile time from the target's features:
// MVE (Helium) with __ARM_FEATURE_MVE, DSP (dual 16-bit MACs) with __ARM_FEATURE_DSP, scalar
// otherwise. CORTEXM_KERNEL_ISA (0 scalar, 1 DSP, 2 MVE) forces a variant the core supports, to
// compare them on one core; CORTEXM_EMULATE_DSP (host test builds only) runs the DSP variants on
// portable C definitions of the DSP instructions.
#pragma once

#include "cortexm/kernels/isa.h"

#if defined(CORTEXM_KERNEL_ISA)
#define CORTEXM_BUILT_ISA CORTEXM_KERNEL_ISA
#elif defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define CORTEXM_BUILT_ISA 2
#elif defined(__ARM_FEATURE_DSP) || defined(CORTEXM_EMULATE_DSP)
#define CORTEXM_BUILT_ISA 1
#else
#define CORTEXM_BUILT_ISA 0
#endif

#if CORTEXM_BUILT_ISA == 2 && !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1))
#error "CORTEXM_KERNEL_ISA=2 (MVE) needs a core with MVE (__ARM_FEATURE_MVE)"
#endif
#if CORTEXM_BUILT_ISA == 1 && !defined(__ARM_FEATURE_DSP) && !defined(CORTEXM_EMULATE_DSP)
#error "CORTEXM_KERNEL_ISA=1 (DSP) needs a core with the DSP extension (__ARM_FEATURE_DSP)"
#endif
#if CORTEXM_BUILT_ISA < 0 || CORTEXM_BUILT_ISA > 2
#error "CORTEXM_KERNEL_ISA must be 0 (scalar), 1 (DSP) or 2 (MVE)"
#endif

namespace cortexm {

// The isa of the conv, depthwise, linear, add and mul kernels in this build.
constexpr Isa kKernelIsa = static_cast<Isa>(CORTEXM_BUILT_ISA);

}  // namespace cortexm
