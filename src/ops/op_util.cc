#include "ops/op_util.h"

namespace cortexm::ops {

void require_dtype(const InferContext& ctx, size_t i, std::initializer_list<DType> dtypes) {
  const TensorInfo& info = ctx.input(i);
  for (DType d : dtypes)
    if (info.dtype == d) return;
  std::string want;
  for (DType d : dtypes) want += (want.empty() ? "" : " or ") + std::string(dtype_name(d));
  ctx.fail("input " + std::to_string(i) + " is " + info_to_string(info) + ", expected " + want);
}

void require_rank(const InferContext& ctx, size_t i, std::initializer_list<int64_t> ranks) {
  const TensorInfo& info = ctx.input(i);
  for (int64_t r : ranks)
    if (info.rank() == r) return;
  std::string want;
  for (int64_t r : ranks) want += (want.empty() ? "" : " or ") + std::to_string(r);
  ctx.fail("input " + std::to_string(i) + " is " + info_to_string(info) + ", expected rank " + want);
}

int64_t normalize_dim(const OpArgs& args, const std::string& attr, int64_t dim, int64_t rank) {
  const int64_t bound = rank == 0 ? 1 : rank;
  if (dim < -bound || dim >= bound)
    args.fail("attribute '" + attr + "' = " + std::to_string(dim) + " is out of range for rank " +
              std::to_string(rank));
  return dim < 0 ? dim + bound : dim;
}

std::vector<int64_t> broadcast_shapes(const OpArgs& args, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1)
      args.fail("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

BroadcastIndexer::BroadcastIndexer(const std::vector<int64_t>& in, const std::vector<int64_t>& out)
    : out_shape_(out), in_strides_(out.size(), 0), trivial_(in == out) {
  const std::vector<int64_t> strides = contiguous_strides(in);
  const size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) in_strides_[i + offset] = in[i] == 1 ? 0 : strides[i];
}

int64_t BroadcastIndexer::operator()(int64_t flat) const {
  if (trivial_) return flat;
  int64_t index = 0;
  for (int64_t d = static_cast<int64_t>(out_shape_.size()) - 1; d >= 0; --d) {
    const int64_t coord = flat % out_shape_[d];
    flat /= out_shape_[d];
    index += coord * in_strides_[d];
  }
  return index;
}

std::vector<TensorInfo> same_as_input(const InferContext& ctx) {
  return {make_info(ctx.input(0).dtype, ctx.input(0).shape)};
}

void register_unary_float(OpRegistry& registry, const std::string& name, std::vector<AttrSpec> attrs,
                          std::function<UnaryFn(const OpArgs&)> make) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = std::move(attrs);
  s.infer = [make](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    make(ctx);  // attribute checks happen at build time, not first run
    return same_as_input(ctx);
  };
  s.kernel = [make](const KernelContext& ctx) {
    const UnaryFn fn = make(ctx);
    const float* in = ctx.input(0).data<float>();
    float* out = ctx.output().data<float>();
    const int64_t n = ctx.input(0).numel();
    for (int64_t i = 0; i < n; ++i) out[i] = fn(in[i]);
  };
  registry.add(std::move(s));
}

void register_binary_float(OpRegistry& registry, const std::string& name,
                           std::vector<AttrSpec> attrs, std::function<BinaryFn(const OpArgs&)> make) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}, {"other"}};
  s.attrs = std::move(attrs);
  s.infer = [make](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    require_dtype(ctx, 1, {DType::kFloat32});
    make(ctx);
    return std::vector<TensorInfo>{
        make_info(DType::kFloat32, broadcast_shapes(ctx, ctx.input(0).shape, ctx.input(1).shape))};
  };
  s.kernel = [make](const KernelContext& ctx) {
    const BinaryFn fn = make(ctx);
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output();
    const BroadcastIndexer ia(a.shape(), out.shape()), ib(b.shape(), out.shape());
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* po = out.data<float>();
    const int64_t n = out.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[ia(i)], pb[ib(i)]);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
