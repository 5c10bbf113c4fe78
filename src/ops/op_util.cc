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

std::vector<TensorInfo> same_as_input(const InferContext& ctx) {
  return {make_info(ctx.input(0).dtype, ctx.input(0).shape)};
}

}  // namespace cortexm::ops
