// aten.cat.default: concatenates tensors of one dtype along `dim` (shapes equal elsewhere). Any
// dtype; per-tensor qparams pass through when every input has the same ones.
#include <cstring>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  const TensorInfo& first = ctx.input(0);
  if (first.rank() == 0) ctx.fail("input 0 is " + info_to_string(first) + ", cat needs rank >= 1");
  const int64_t dim = normalize_dim(ctx, "dim", ctx.i("dim"), first.rank());
  std::vector<int64_t> shape = first.shape;
  shape[dim] = 0;
  std::optional<QuantParams> qparams = passthrough_qparams(first);
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const TensorInfo& in = ctx.input(i);
    if (in.dtype != first.dtype)
      ctx.fail("input " + std::to_string(i) + " is " + info_to_string(in) + ", input 0 is " +
               info_to_string(first) + ": all inputs must have one dtype");
    bool match = in.rank() == first.rank();
    for (int64_t d = 0; match && d < first.rank(); ++d)
      match = d == dim || in.shape[d] == first.shape[d];
    if (!match)
      ctx.fail("input " + std::to_string(i) + " " + shape_to_string(in.shape) +
               " does not match input 0 " + shape_to_string(first.shape) +
               " except in dim " + std::to_string(dim));
    shape[dim] += in.shape[dim];
    if (qparams != passthrough_qparams(in)) qparams.reset();
  }
  TensorInfo out = make_info(first.dtype, shape);
  out.qparams = qparams;
  return {out};
}

void kernel(const KernelContext& ctx) {
  Tensor& out = ctx.output();
  const auto& shape = out.shape();
  const int64_t dim = normalize_dim(ctx, "dim", ctx.i("dim"), static_cast<int64_t>(shape.size()));
  const size_t elem = dtype_size(out.dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const size_t out_row = static_cast<size_t>(shape[dim] * inner) * elem;
  uint8_t* dst = static_cast<uint8_t*>(out.raw());
  size_t col = 0;  // byte offset of the current input inside an output row
  for (const Tensor* in : ctx.inputs) {
    const size_t row = static_cast<size_t>(in->shape()[dim] * inner) * elem;
    const uint8_t* src = static_cast<const uint8_t*>(in->raw());
    if (row > 0)
      for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * out_row + col, src + o * row, row);
    col += row;
  }
}

}  // namespace

void register_aten_cat(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.cat.default";
  s.inputs = {{"tensors", false, true}};
  s.attrs = {{"dim", AttrKind::kInt, false, AttrValue(int64_t{0})}};
  s.is_data_movement = true;
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
