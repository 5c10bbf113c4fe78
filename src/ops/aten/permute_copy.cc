// aten.permute_copy.default: output dim i is input dim dims[i]. Any dtype; per-tensor qparams
// pass through.
#include <cstring>

#include "ops/op_util.h"

namespace cortexm::ops {

namespace {

std::vector<int64_t> normalized_dims(const OpArgs& args, int64_t rank) {
  std::vector<int64_t> dims = args.ints("dims");
  if (static_cast<int64_t>(dims.size()) != rank)
    args.fail("attribute 'dims' = " + shape_to_string(dims) + " has " +
              std::to_string(dims.size()) + " entries, the input has rank " +
              std::to_string(rank));
  std::vector<bool> seen(dims.size(), false);
  for (int64_t& d : dims) {
    d = normalize_dim(args, "dims", d, rank);
    if (seen[d]) args.fail("attribute 'dims' = " + shape_to_string(args.ints("dims")) +
                           " repeats dim " + std::to_string(d));
    seen[d] = true;
  }
  return dims;
}

// out[i0, ..., in] = in[...] with in_strides[d] the input stride of output dim d.
template <typename T>
void permute(const T* in, T* out, const std::vector<int64_t>& shape,
             const std::vector<int64_t>& in_strides) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == 0) return;
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  const int64_t inner = shape.back(), inner_stride = in_strides.back();
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t base = 0; base < numel; base += inner) {
    const T* src = in + offset;
    T* dst = out + base;
    for (int64_t j = 0; j < inner; ++j) dst[j] = src[j * inner_stride];
    // Advance the outer index (all dims but the last).
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += in_strides[d];
      if (++idx[d] < shape[d]) break;
      offset -= in_strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
void permute_as(const Tensor& input, Tensor& output, const std::vector<int64_t>& strides) {
  permute(input.data<T>(), output.data<T>(), output.shape(), strides);
}

}  // namespace

void register_aten_permute_copy(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.permute_copy.default";
  s.inputs = {{"self"}};
  s.attrs = {{"dims", AttrKind::kInts}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const std::vector<int64_t> dims = normalized_dims(ctx, in.rank());
    std::vector<int64_t> shape;
    for (int64_t d : dims) shape.push_back(in.shape[d]);
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    const std::vector<int64_t> dims = normalized_dims(ctx, static_cast<int64_t>(in.shape().size()));
    const std::vector<int64_t> in_strides = contiguous_strides(in.shape());
    std::vector<int64_t> strides;
    for (int64_t d : dims) strides.push_back(in_strides[d]);
    switch (dtype_size(in.dtype())) {
      case 1: permute_as<uint8_t>(in, out, strides); break;
      case 2: permute_as<uint16_t>(in, out, strides); break;
      case 4: permute_as<uint32_t>(in, out, strides); break;
      case 8: permute_as<uint64_t>(in, out, strides); break;
      default: ctx.fail("unsupported element size");
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
