// aten.mean.dim: mean over the listed dims (negative allowed, [] = every dim); keepdim keeps them
// with size 1. Sums in double; an empty reduction gives NaN, as in torch.
#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

// Which dims are reduced; fails on an out-of-range or repeated dim.
std::vector<bool> reduced_dims(const OpArgs& args, int64_t rank) {
  const std::vector<int64_t>& dims = args.ints("dim");
  std::vector<bool> reduced(static_cast<size_t>(rank), dims.empty());
  std::vector<bool> seen(static_cast<size_t>(rank == 0 ? 1 : rank), false);
  for (int64_t d : dims) {
    const int64_t n = normalize_dim(args, "dim", d, rank);
    if (seen[n])
      args.fail("attribute 'dim' = " + shape_to_string(dims) + " names dim " + std::to_string(n) +
                " more than once");
    seen[n] = true;
    if (rank > 0) reduced[n] = true;
  }
  return reduced;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kFloat32});
  const TensorInfo& in = ctx.input(0);
  const std::vector<bool> reduced = reduced_dims(ctx, in.rank());
  const bool keepdim = ctx.b("keepdim");
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!reduced[d])
      shape.push_back(in.shape[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  return {make_info(DType::kFloat32, shape)};
}

void kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const std::vector<int64_t>& shape = input.shape();
  const int64_t rank = input.info().rank();
  const std::vector<bool> reduced = reduced_dims(ctx, rank);
  // Output strides over the input's dims, 0 along reduced ones.
  std::vector<int64_t> keep_shape(shape);
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) continue;
    count *= shape[d];
    keep_shape[d] = 1;
  }
  std::vector<int64_t> stride = contiguous_strides(keep_shape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d]) stride[d] = 0;

  Tensor& output = ctx.output();
  std::vector<double> acc(static_cast<size_t>(output.numel()), 0.0);
  const float* x = input.data<float>();
  const int64_t n = input.numel();
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  int64_t at = 0;
  for (int64_t i = 0; i < n; ++i) {
    acc[at] += x[i];
    for (int64_t d = rank - 1; d >= 0; --d) {
      at += stride[d];
      if (++coord[d] < shape[d]) break;
      at -= stride[d] * shape[d];
      coord[d] = 0;
    }
  }
  float* y = output.data<float>();
  for (size_t j = 0; j < acc.size(); ++j)
    y[j] = static_cast<float>(acc[j] / static_cast<double>(count));
}

}  // namespace

void register_aten_mean_dim(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.mean.dim";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInts}, {"keepdim", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = infer;
  s.kernel = kernel;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
