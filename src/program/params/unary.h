// The params of FloatUnary: which float function (fb::UnaryFn) of the portable unary kernels a
// program runs. Only functions without constants have a UnaryFn; the element count comes from
// the tensors.
#pragma once

#include "cortexm/portable/unary.h"
#include "program/program_generated.h"

namespace cortexm::program {

struct UnaryFnOp {
  fb::UnaryFn fn;
  portable::UnaryOp op;
};

inline constexpr UnaryFnOp kUnaryFns[] = {
    {fb::UnaryFn_Relu, portable::UnaryOp::kRelu},
    {fb::UnaryFn_Hardswish, portable::UnaryOp::kHardswish},
    {fb::UnaryFn_Silu, portable::UnaryOp::kSilu},
    {fb::UnaryFn_Sigmoid, portable::UnaryOp::kSigmoid},
    {fb::UnaryFn_Tanh, portable::UnaryOp::kTanh},
    {fb::UnaryFn_Sqrt, portable::UnaryOp::kSqrt},
    {fb::UnaryFn_Hardsigmoid, portable::UnaryOp::kHardsigmoid},
    {fb::UnaryFn_Abs, portable::UnaryOp::kAbs},
    {fb::UnaryFn_Gelu, portable::UnaryOp::kGelu},
    {fb::UnaryFn_GeluTanh, portable::UnaryOp::kGeluTanh},
};

// The UnaryFn of `op`; false: a program cannot store it (it has constants).
inline bool unary_fn(portable::UnaryOp op, fb::UnaryFn* fn) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.op == op) {
      *fn = e.fn;
      return true;
    }
  return false;
}

// p's op from the table; false: an unknown UnaryFn.
inline bool decode_unary(const fb::UnaryParams& t, portable::UnaryParams* p) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.fn == t.fn()) {
      p->op = e.op;
      return true;
    }
  return false;
}

}  // namespace cortexm::program
