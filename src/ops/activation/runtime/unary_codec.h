// The params of FloatUnary: which float function (fb::UnaryFn) of the portable unary kernels a
// program runs and its constants a, b, c. The functions with a UnaryFn are the ones a program can
// run; the element count comes from the tensors.
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
    {fb::UnaryFn_Clamp, portable::UnaryOp::kClamp},
    {fb::UnaryFn_PowScalar, portable::UnaryOp::kPowScalar},
    {fb::UnaryFn_AddScalar, portable::UnaryOp::kAddScalar},
    {fb::UnaryFn_SubScalar, portable::UnaryOp::kSubScalar},
    {fb::UnaryFn_MulScalar, portable::UnaryOp::kMulScalar},
    {fb::UnaryFn_DivScalar, portable::UnaryOp::kDivScalar},
    {fb::UnaryFn_LeakyRelu, portable::UnaryOp::kLeakyRelu},
    {fb::UnaryFn_Elu, portable::UnaryOp::kElu},
    {fb::UnaryFn_Exp, portable::UnaryOp::kExp},
    {fb::UnaryFn_Log, portable::UnaryOp::kLog},
    {fb::UnaryFn_Rsqrt, portable::UnaryOp::kRsqrt},
    {fb::UnaryFn_Neg, portable::UnaryOp::kNeg},
    {fb::UnaryFn_Reciprocal, portable::UnaryOp::kReciprocal},
    {fb::UnaryFn_Softplus, portable::UnaryOp::kSoftplus},
    {fb::UnaryFn_Mish, portable::UnaryOp::kMish},
};

// The UnaryFn of `op`; false: a program cannot store it.
inline bool unary_fn(portable::UnaryOp op, fb::UnaryFn* fn) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.op == op) {
      *fn = e.fn;
      return true;
    }
  return false;
}

// The table of p; false: a program cannot store p's op.
inline bool encode_unary(flatbuffers::FlatBufferBuilder& fbb, const portable::UnaryParams& p,
                         flatbuffers::Offset<fb::UnaryParams>* table) {
  fb::UnaryFn fn;
  if (!unary_fn(p.op, &fn)) return false;
  *table = fb::CreateUnaryParams(fbb, fn, p.a, p.b, p.c);
  return true;
}

// p's op and constants from the table; false: an unknown UnaryFn.
inline bool decode_unary(const fb::UnaryParams& t, portable::UnaryParams* p) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.fn == t.fn()) {
      p->op = e.op;
      p->a = t.a();
      p->b = t.b();
      p->c = t.c();
      return true;
    }
  return false;
}

}  // namespace cortexm::program
