// aten.slice_copy.Tensor: elements start, start + step, ... < end along `dim`. start/end may be
// None or negative and are clamped to the dim as torch does; step >= 1. Any dtype; per-tensor
// qparams pass through.
#include <cstring>
#include <limits>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

struct Slice {
  int64_t dim, start, length, step;
};

Slice resolve(const OpArgs& args, const std::vector<int64_t>& shape) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) args.fail("cannot slice a rank-0 tensor");
  Slice s;
  s.dim = normalize_dim(args, "dim", args.i("dim"), rank);
  s.step = args.i("step");
  if (s.step < 1) args.fail("attribute 'step' = " + std::to_string(s.step) + " must be >= 1");
  const int64_t size = shape[s.dim];
  int64_t start = args.is_none("start") ? 0 : args.i("start");
  int64_t end = args.is_none("end") ? std::numeric_limits<int64_t>::max() : args.i("end");
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = start < 0 ? 0 : (start > size ? size : start);
  end = end < start ? start : (end > size ? size : end);
  s.start = start;
  s.length = (end - start + s.step - 1) / s.step;
  return s;
}

}  // namespace

void register_aten_slice_copy(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.slice_copy.Tensor";
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt, false, AttrValue(int64_t{0})},
             {"start", AttrKind::kInt, true, AttrValue(NoneAttr{})},
             {"end", AttrKind::kInt, true, AttrValue(NoneAttr{})},
             {"step", AttrKind::kInt, false, AttrValue(int64_t{1})}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const Slice sl = resolve(ctx, in.shape);
    std::vector<int64_t> shape = in.shape;
    shape[sl.dim] = sl.length;
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const auto& shape = in.shape();
    const Slice sl = resolve(ctx, shape);
    const size_t elem = dtype_size(in.dtype());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < sl.dim; ++d) outer *= shape[d];
    for (size_t d = sl.dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const size_t chunk = static_cast<size_t>(inner) * elem;
    const size_t in_row = static_cast<size_t>(shape[sl.dim]) * chunk;
    const size_t out_row = static_cast<size_t>(sl.length) * chunk;
    const uint8_t* src = static_cast<const uint8_t*>(in.raw());
    uint8_t* dst = static_cast<uint8_t*>(ctx.output().raw());
    if (out_row == 0) return;
    for (int64_t o = 0; o < outer; ++o) {
      const uint8_t* row = src + o * in_row + sl.start * chunk;
      uint8_t* out = dst + o * out_row;
      if (sl.step == 1) {
        std::memcpy(out, row, out_row);
      } else {
        for (int64_t j = 0; j < sl.length; ++j)
          std::memcpy(out + j * chunk, row + j * sl.step * chunk, chunk);
      }
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
