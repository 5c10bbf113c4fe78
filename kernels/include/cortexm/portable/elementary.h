#pragma once

// Elementary functions computed with IEEE double arithmetic only (no libm), so the host and every
// Cortex-M give the same bits: glibc's and newlib's expf, tanhf, erff, logf and powf differ in the
// last place. Accuracy: a few double ulps, so the float results are correctly rounded but for
// rare near-ties.

namespace cortexm::portable {

double exp_d(double x);
double expm1_d(double x);
double log_d(double x);
double log1p_d(double x);
double tanh_d(double x);
double erf_d(double x);
double pow_d(double x, double y);

}  // namespace cortexm::portable
