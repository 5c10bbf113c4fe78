// aten.cat.default: concatenates tensors of one dtype along `dim` (shapes equal elsewhere). Any
// dtype; per-tensor qparams pass through when every input has the same ones (portable::cat).
#include "cortexm/portable/cat.h"
#include "ops/portable_call.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

std::vector<TensorInfo> infer(const InferContext& ctx) {
  const TensorInfo& first = ctx.input(0);
  if (first.rank() == 0) ctx.fail("input 0 is " + info_to_string(first) + ", cat needs rank >= 1");
  const int64_t dim = normalize_dim(ctx, "dim", ctx.i("dim"), first.rank());
  portable_shape(ctx, first.shape, "tensors");  // rank <= 6
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
  std::vector<portable::Shape> shapes;
  std::vector<const void*> data;
  for (const Tensor* in : ctx.inputs) {
    shapes.push_back(portable_shape(ctx, in->shape(), "tensors"));
    data.push_back(in->raw());
  }
  portable::CatParams params;
  params.inputs = shapes.data();
  params.num_inputs = static_cast<int32_t>(shapes.size());
  params.dim = ctx.i("dim");
  params.element_size = element_size(ctx.output());
  check_portable(ctx, "cat", portable::cat_prepare(params));
  portable::cat(params, data.data(), ctx.output().raw());
}

}  // namespace

void register_aten_cat(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.cat.default";
  s.inputs = {{"tensors", false, true}};
  s.attrs = {{"dim", AttrKind::kInt, false, AttrValue(int64_t{0})}};
  s.is_data_movement = true;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const int64_t dim = normalize_dim(node, "dim", node.i("dim"), node.input(0).rank());
    return program::encoded(fb::KernelId_Cat, fb::CreateCatParams(b.fbb(), static_cast<int32_t>(dim)));
  };
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
