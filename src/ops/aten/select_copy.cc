// aten.select_copy.int: the slice at `index` (negative counts from the end) of `dim`, which is
// removed. Any dtype; per-tensor qparams pass through.
#include <cstring>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

// (dim, index), both normalized.
std::pair<int64_t, int64_t> resolve(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot select from a rank-0 tensor");
  const int64_t dim = normalize_dim(args, "dim", args.i("dim"), rank);
  const int64_t size = shape[dim];
  int64_t index = args.i("index");
  if (index < -size || index >= size)
    args.fail("attribute 'index' = " + std::to_string(index) + " is out of range for dim " +
              std::to_string(dim) + " of size " + std::to_string(size));
  return {dim, index < 0 ? index + size : index};
}

}  // namespace

void register_aten_select_copy(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.select_copy.int";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt}, {"index", AttrKind::kInt}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t dim = resolve(ctx, in.shape).first;
    std::vector<int64_t> shape = in.shape;
    shape.erase(shape.begin() + dim);
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const auto& shape = in.shape();
    const auto [dim, index] = resolve(ctx, shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
    for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const size_t chunk = static_cast<size_t>(inner) * dtype_size(in.dtype());
    const uint8_t* src = static_cast<const uint8_t*>(in.raw()) + index * chunk;
    uint8_t* dst = static_cast<uint8_t*>(ctx.output().raw());
    if (chunk == 0) return;
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(dst + o * chunk, src + o * shape[dim] * chunk, chunk);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
