// Float32 elementwise binary ops with numpy broadcasting (ranks up to 6, size-0 dims allowed).
// binary_prepare resolves the broadcast once; the *_f32 functions then walk the output in order.
// The formulas and operation order are the host interpreter's aten ops.
#pragma once

#include <cstdint>

#include "cortexm/kernels/broadcast.h"
#include "cortexm/portable/shape.h"

namespace cortexm::portable {

enum class BinaryOp : int32_t {
  kAdd = 0,      // a + alpha * b (a + b when alpha == 1)
  kSub = 1,      // a - alpha * b (a - b when alpha == 1)
  kMul = 2,      // a * b
  kDiv = 3,      // a / b
  kMinimum = 4,  // NaN if either is NaN, else a < b ? a : b
  kMaximum = 5,  // NaN if either is NaN, else a > b ? a : b
};

struct BinaryParams {
  BinaryOp op = BinaryOp::kAdd;
  float alpha = 1.0f;  // add / sub only
  bool empty = false;  // the output has no elements
  BroadcastShape shape;
};

// Broadcasts lhs against rhs; fills params->shape and params->empty (op and alpha are kept) and
// the output shape if asked.
Error binary_prepare(const Shape& lhs, const Shape& rhs, BinaryParams* params,
                     Shape* output = nullptr);

void binary_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);

void add_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);
void sub_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);
void mul_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);
void div_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);
void minimum_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);
void maximum_f32(const BinaryParams& params, const float* lhs, const float* rhs, float* out);

}  // namespace cortexm::portable
