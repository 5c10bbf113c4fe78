// The params of FloatBinary: which portable binary function (fb::BinaryFn) a program runs and
// its alpha; the broadcast shape comes from the tensors.
#pragma once

#include "cortexm/portable/binary.h"
#include "program/program_generated.h"

namespace cortexm::program {

struct BinaryFnOp {
  fb::BinaryFn fn;
  portable::BinaryOp op;
};

inline constexpr BinaryFnOp kBinaryFns[] = {
    {fb::BinaryFn_Add, portable::BinaryOp::kAdd},         {fb::BinaryFn_Sub, portable::BinaryOp::kSub},
    {fb::BinaryFn_Mul, portable::BinaryOp::kMul},         {fb::BinaryFn_Div, portable::BinaryOp::kDiv},
    {fb::BinaryFn_Minimum, portable::BinaryOp::kMinimum}, {fb::BinaryFn_Maximum, portable::BinaryOp::kMaximum},
};

// false: `p.op` has no BinaryFn.
inline bool encode_float_binary(flatbuffers::FlatBufferBuilder& b, const portable::BinaryParams& p,
                                flatbuffers::Offset<fb::FloatBinaryParams>* out) {
  for (const BinaryFnOp& e : kBinaryFns)
    if (e.op == p.op) {
      *out = fb::CreateFloatBinaryParams(b, e.fn, p.alpha);
      return true;
    }
  return false;
}

// false: an unknown BinaryFn.
inline bool decode_float_binary(const fb::FloatBinaryParams& t, portable::BinaryParams* p) {
  for (const BinaryFnOp& e : kBinaryFns)
    if (e.fn == t.fn()) {
      p->op = e.op;
      p->alpha = t.alpha();
      return true;
    }
  return false;
}

}  // namespace cortexm::program
