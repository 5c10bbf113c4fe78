// The runtime's elementwise binary ops (add, maximum, minimum, mul and their int16 twins): one
// prepare and one run over the kernel's params type P, element type T and entry points, listed in
// ops.def with RUNTIME_BINARY.
#pragma once

#include "ops/binary/runtime/binary_codec.h"
#include "ops/binary/runtime/binary_layout.h"

namespace cortexm::runtime {

template <class T>
constexpr DType kDTypeOf = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class P, class T>
Status decode_binary_op(const OpContext& ctx, P* p) {
  const auto* table = ctx.op.params_as<program::BinaryTable<P>>();
  CORTEXM_RETURN_IF_STATUS(binary_shape(ctx, &p->shape, kDTypeOf<T>));
  const program::NonzeroOffset bad = program::decode_binary(*table, p);
  if (bad.field) return ctx.fail(bad.field, bad.value, "must be 0 for int16");
  return kStatusOk;
}

template <class P, class T, Error (*Prepare)(const P&)>
Status prepare_binary(const OpContext& ctx) {
  P p;
  CORTEXM_RETURN_IF_STATUS((decode_binary_op<P, T>(ctx, &p)));
  const Error error = Prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

// A binary op's state: its kernel params and operands.
template <class P>
struct BinaryState {
  P params;
  DataRef lhs, rhs, out;
};

template <class P, class T>
void init_binary(const OpContext& ctx, BinaryState<P>* s) {
  decode_binary_op<P, T>(ctx, &s->params);
  s->lhs = ctx.input_ref(0);
  s->rhs = ctx.input_ref(1);
  s->out = ctx.output_ref();
}

template <class P, class T>
inline constexpr OpState kBinaryState = kOpState<BinaryState<P>, init_binary<P, T>, 160>;

template <class P, class T, void (*Run)(const P&, const T*, const T*, T*)>
void run_binary(const OpContext& ctx) {
  const BinaryState<P>& s = state_of<BinaryState<P>>(ctx);
  P copy;
  Run(with_host_kernels(ctx, s.params, &copy), ctx.data_as<const T>(s.lhs), ctx.data_as<const T>(s.rhs),
      ctx.data_as<T>(s.out));
}

}  // namespace cortexm::runtime
