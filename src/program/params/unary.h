// The params of FloatUnary: which float function (fb::UnaryFn) of the portable unary kernels a
// program runs and its constants a, b; the element count comes from the tensors.
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
};

// false: `p.op` has no UnaryFn.
inline bool encode_unary(flatbuffers::FlatBufferBuilder& b, const portable::UnaryParams& p,
                         flatbuffers::Offset<fb::UnaryParams>* out) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.op == p.op) {
      *out = fb::CreateUnaryParams(b, e.fn, p.a, p.b);
      return true;
    }
  return false;
}

// p's op and constants from the table; false: an unknown UnaryFn.
inline bool decode_unary(const fb::UnaryParams& t, portable::UnaryParams* p) {
  for (const UnaryFnOp& e : kUnaryFns)
    if (e.fn == t.fn()) {
      p->op = e.op;
      p->a = t.a();
      p->b = t.b();
      return true;
    }
  return false;
}

}  // namespace cortexm::program
