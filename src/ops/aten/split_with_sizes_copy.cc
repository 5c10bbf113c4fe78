// aten.split_with_sizes_copy.default: one output per entry of split_sizes (which sum to the size
// of `dim`), consecutive along `dim`. Any dtype; per-tensor qparams pass through.
#include <cstring>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

int64_t resolve_dim(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot split a rank-0 tensor");
  const int64_t dim = normalize_dim(args, "dim", args.i("dim"), rank);
  const std::vector<int64_t>& sizes = args.ints("split_sizes");
  if (sizes.empty()) args.fail("attribute 'split_sizes' is empty");
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) args.fail("attribute 'split_sizes' = " + shape_to_string(sizes) +
                         " has a negative size");
    total += s;
  }
  if (total != shape[dim])
    args.fail("attribute 'split_sizes' = " + shape_to_string(sizes) + " sums to " +
              std::to_string(total) + ", dim " + std::to_string(dim) + " has size " +
              std::to_string(shape[dim]));
  return dim;
}

}  // namespace

void register_aten_split_with_sizes_copy(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.split_with_sizes_copy.default";
  s.inputs = {{"self"}};
  s.attrs = {{"split_sizes", AttrKind::kInts},
             {"dim", AttrKind::kInt, false, AttrValue(int64_t{0})}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const int64_t dim = resolve_dim(ctx, in.shape);
    std::vector<TensorInfo> outs;
    for (int64_t size : ctx.ints("split_sizes")) {
      std::vector<int64_t> shape = in.shape;
      shape[dim] = size;
      outs.push_back(make_info(in.dtype, shape));
      outs.back().qparams = passthrough_qparams(in);
    }
    return outs;
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const auto& shape = in.shape();
    const int64_t dim = resolve_dim(ctx, shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= shape[d];
    for (size_t d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const size_t chunk = static_cast<size_t>(inner) * dtype_size(in.dtype());
    const size_t in_row = static_cast<size_t>(shape[dim]) * chunk;
    const uint8_t* src = static_cast<const uint8_t*>(in.raw());
    size_t col = 0;  // byte offset of the current output inside an input row
    const std::vector<int64_t>& sizes = ctx.ints("split_sizes");
    for (size_t k = 0; k < sizes.size(); ++k) {
      const size_t row = static_cast<size_t>(sizes[k]) * chunk;
      uint8_t* dst = static_cast<uint8_t*>(ctx.output(k).raw());
      if (row > 0)
        for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row, src + o * in_row + col, row);
      col += row;
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
