// The state of an op that reads an input, weights and a bias and writes an output with scratch
// (the convolutions, the linear layers): its kernel params, decoded once, and its operands.
#pragma once

#include "cortexm/kernels/kernel_isa.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

template <class P>
struct WeightedOpState {
  P params;
  DataRef input, weights, bias, output, scratch;
};

// Decode passed at the op's prepare, before any state is made.
template <class P, Status (*Decode)(const OpContext&, P*), size_t (*ScratchSize)(const P&, Isa)>
void init_weighted_op(const OpContext& ctx, WeightedOpState<P>* s) {
  Decode(ctx, &s->params);
  s->input = ctx.input_ref(0);
  s->weights = ctx.input_ref(1);
  s->bias = ctx.input_ref(2);
  s->output = ctx.output_ref();
  s->scratch = ctx.scratch_ref(ScratchSize(s->params, kKernelIsa));
}

}  // namespace cortexm::runtime
