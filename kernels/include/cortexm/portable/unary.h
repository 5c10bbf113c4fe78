// Float32 elementwise unary ops. Each *_f32 function maps n elements of `in` to `out` (which may
// be the same buffer) with the formula and operation order of the host interpreter's aten op.
// unary_f32 dispatches on UnaryParams for a runtime that stores the op as data.
#pragma once

#include <cstdint>

#include "cortexm/kernels/status.h"

namespace cortexm::portable {

// aten.relu: x > 0 ? x : 0.
void relu_f32(const float* in, float* out, int64_t n);
// aten.clamp / aten.hardtanh: v = x < lo ? lo : x; v > hi ? hi : v (NaN stays NaN; lo > hi
// gives hi, as torch.clamp; hardtanh requires lo <= hi). Use +-INFINITY for an absent bound.
void clamp_f32(const float* in, float* out, int64_t n, float lo, float hi);
// aten.hardsigmoid: relu6(x + 3) / 6.
void hardsigmoid_f32(const float* in, float* out, int64_t n);
// aten.hardswish: x * relu6(x + 3) / 6, multiplied before dividing.
void hardswish_f32(const float* in, float* out, int64_t n);
// aten.sigmoid: 1 / (1 + expf(-x)).
void sigmoid_f32(const float* in, float* out, int64_t n);
// aten.tanh: tanhf(x).
void tanh_f32(const float* in, float* out, int64_t n);
// aten.silu: x / (1 + expf(-x)).
void silu_f32(const float* in, float* out, int64_t n);
// aten.gelu approximate="none": x * 0.5 * (1 + erff(x * float(1/sqrt(2)))).
void gelu_f32(const float* in, float* out, int64_t n);
// aten.gelu approximate="tanh": 0.5 * x * (1 + tanhf(b * (x + 0.044715 * x * x * x))),
// b = float(sqrt(2 / pi)).
void gelu_tanh_f32(const float* in, float* out, int64_t n);
// aten.sqrt: sqrtf(x), NaN below 0.
void sqrt_f32(const float* in, float* out, int64_t n);
// aten.abs: fabsf(x).
void abs_f32(const float* in, float* out, int64_t n);
// aten.leaky_relu: x > 0 ? x : x * slope (float32).
void leaky_relu_f32(const float* in, float* out, int64_t n, float slope);
// aten.elu: x > 0 ? x * scale : expm1(x * input_scale) * (alpha * scale); the positive branch and
// alpha * scale in float32, the negative one in double rounded once (celu and selu are elus).
void elu_f32(const float* in, float* out, int64_t n, float alpha, float scale, float input_scale);
// aten.exp / aten.log: expf(x) / logf(x) (NaN below 0, -inf at 0).
void exp_f32(const float* in, float* out, int64_t n);
void log_f32(const float* in, float* out, int64_t n);
// aten.rsqrt: 1 / sqrt(x) (inf at 0, NaN below 0).
void rsqrt_f32(const float* in, float* out, int64_t n);
// aten.neg: -x.
void neg_f32(const float* in, float* out, int64_t n);
// aten.reciprocal: 1 / x in float32.
void reciprocal_f32(const float* in, float* out, int64_t n);
// aten.softplus: x * beta > threshold ? x : log1p(exp(x * beta)) / beta (x * beta in float32).
void softplus_f32(const float* in, float* out, int64_t n, float beta, float threshold);
// aten.mish: x * tanh(log1p(exp(x))) (torch's kernel; no threshold).
void mish_f32(const float* in, float* out, int64_t n);
// aten.pow.Tensor_Scalar: x * x when exponent == 2, powf(x, exponent) otherwise.
void pow_scalar_f32(const float* in, float* out, int64_t n, float exponent);
// aten.add.Scalar / aten.sub.Scalar: x + c / x - c with c = scalar_times_alpha(other, alpha).
void add_scalar_f32(const float* in, float* out, int64_t n, float c);
void sub_scalar_f32(const float* in, float* out, int64_t n, float c);
// aten.mul.Scalar / aten.div.Scalar: x * c / x / c.
void mul_scalar_f32(const float* in, float* out, int64_t n, float c);
void div_scalar_f32(const float* in, float* out, int64_t n, float c);

// The constant of add.Scalar / sub.Scalar: float(alpha) * float(other).
float scalar_times_alpha(double other, double alpha);

enum class UnaryOp : int32_t {
  kRelu = 0,
  kClamp = 1,  // a = lo, b = hi
  kHardsigmoid = 2,
  kHardswish = 3,
  kSigmoid = 4,
  kTanh = 5,
  kSilu = 6,
  kGelu = 7,
  kGeluTanh = 8,
  kSqrt = 9,
  kAbs = 10,
  kPowScalar = 11,  // a = exponent
  kAddScalar = 12,  // a = c
  kSubScalar = 13,  // a = c
  kMulScalar = 14,  // a = c
  kDivScalar = 15,  // a = c
  kLeakyRelu = 16,  // a = negative slope
  kElu = 17,        // a = alpha, b = scale, c = input_scale
  kExp = 18,
  kLog = 19,
  kRsqrt = 20,
  kNeg = 21,
  kReciprocal = 22,
  kSoftplus = 23,  // a = beta, b = threshold
  kMish = 24,
};

struct UnaryParams {
  UnaryOp op = UnaryOp::kRelu;
  int64_t numel = 0;
  float a = 0.0f;
  float b = 0.0f;
  float c = 0.0f;
};

Error unary_prepare(const UnaryParams& params);

void unary_f32(const UnaryParams& params, const float* in, float* out);

}  // namespace cortexm::portable
