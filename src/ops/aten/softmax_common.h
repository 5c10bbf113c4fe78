// aten._softmax / aten._log_softmax on float32 along any dim: subtracts the max first, sums the
// exponentials in double. half_to_float must be False.
#pragma once

#include <cmath>
#include <limits>

#include "ops/op_util.h"

namespace cortexm::ops {

inline void register_softmax_op(OpRegistry& registry, const std::string& name, bool log) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}};
  s.attrs = {{"dim", AttrKind::kInt}, {"half_to_float", AttrKind::kBool, false, AttrValue(false)}};
  s.infer = [](const InferContext& ctx) {
    require_dtype(ctx, 0, {DType::kFloat32});
    normalize_dim(ctx, "dim", ctx.i("dim"), ctx.input(0).rank());
    if (ctx.b("half_to_float")) ctx.fail("attribute 'half_to_float' = True is not supported");
    return same_as_input(ctx);
  };
  s.kernel = [log](const KernelContext& ctx) {
    const std::vector<int64_t>& shape = ctx.input(0).shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t dim = normalize_dim(ctx, "dim", ctx.i("dim"), rank);
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < dim ? outer : d == dim ? n : inner) *= shape[d];
    const float* x = ctx.input(0).data<float>();
    float* y = ctx.output().data<float>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const float* in = x + o * n * inner + i;
        float* out = y + o * n * inner + i;
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t k = 0; k < n; ++k) max = in[k * inner] > max ? in[k * inner] : max;
        double sum = 0.0;
        for (int64_t k = 0; k < n; ++k) sum += std::exp(in[k * inner] - max);
        if (log) {
          const double log_sum = std::log(sum);
          for (int64_t k = 0; k < n; ++k)
            out[k * inner] = static_cast<float>((in[k * inner] - max) - log_sum);
        } else {
          for (int64_t k = 0; k < n; ++k)
            out[k * inner] = static_cast<float>(std::exp(in[k * inner] - max) / sum);
        }
      }
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
