// Cat: the inputs one after another along dim, one input at a time (so any number of inputs, no
// array sized by them). An input sharing the output's dim order is copied as blocks of whole rows
// in memory order (the portable cat's loop); any other layout takes the strided copy.
#include <string.h>

#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

int32_t cat_dim(const OpContext& ctx) {
  const int64_t d = ctx.op.params_as_CatParams()->dim();
  return static_cast<int32_t>(d < 0 ? d + ctx.output().rank : d);
}

int64_t product(const portable::Shape& s, int32_t begin, int32_t end) {
  int64_t n = 1;
  for (int32_t k = begin; k < end; ++k) n *= s.dims[k];
  return n;
}

// Copies input i, `start` elements along dim into the output, as memcpy'd blocks when it shares
// the output's dim order; false: it does not (or has a rank the portable shapes do not hold).
bool copy_rows(const OpContext& ctx, const Physical& out, int32_t i, int64_t start) {
  Physical in;
  if (!physical(ctx, ctx.op.inputs()->Get(i), &in) || !same_order(in, out)) return false;
  const int32_t p = out.position[cat_dim(ctx)];
  const int64_t outer = product(out.shape, 0, p);
  const int64_t inner = product(out.shape, p + 1, out.shape.rank) * out.element_size;
  const int64_t row = in.shape.dims[p] * inner, out_row = out.shape.dims[p] * inner;
  const uint8_t* src = ctx.input(i).data;
  uint8_t* dst = ctx.output().data + start * inner;
  if (row > 0)
    for (int64_t o = 0; o < outer; ++o) memcpy(dst + o * out_row, src + o * row, static_cast<size_t>(row));
  return true;
}

}  // namespace

Status prepare_cat(const OpContext& ctx) {
  const TensorView out = ctx.output();
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", ctx.op.params_as_CatParams()->dim(), out.rank, &dim));
  int64_t total = 0;
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail("inputs", -1, "cat takes no absent inputs", i);
    const TensorView in = ctx.input(i);
    if (in.dtype != out.dtype) return ctx.fail("input.dtype", static_cast<int64_t>(in.dtype), "must be the output's", i);
    if (in.rank != out.rank) return ctx.fail("input.rank", in.rank, "must be the output's", i);
    for (int32_t d = 0; d < out.rank; ++d)
      if (d != dim && in.shape[d] != out.shape[d])
        return ctx.fail("input.shape", in.shape[d], "must match the output outside dim", d);
    total += in.shape[dim];
  }
  if (total != out.shape[dim]) return ctx.fail("output.shape", out.shape[dim], "must be the sum along dim", dim);
  return kStatusOk;
}

void run_cat(const OpContext& ctx) {
  const TensorView out = ctx.output();
  const int32_t dim = cat_dim(ctx);
  Physical out_physical;
  const bool rows = physical(ctx, ctx.op.outputs()->Get(0), &out_physical);
  int64_t start = 0;
  for (int32_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorView in = ctx.input(i);
    if (!rows || !copy_rows(ctx, out_physical, i, start)) {
      TensorView part = out;
      part.shape[dim] = in.shape[dim];
      part.data = out.data + start * out.strides[dim] * static_cast<int64_t>(out.element_size());
      copy_logical(in, part);
    }
    start += in.shape[dim];
  }
}

}  // namespace cortexm::runtime
