// Softmax / LogSoftmax (float fallback) along dim with the interpreter's arithmetic: subtract the
// max, sum the exponentials in double. Input and output share one layout.
#include <cmath>

#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

Status prepare(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", ctx.op.params_as_SoftmaxParams()->dim(), in.rank, &dim));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  return kStatusOk;
}

// Every 1-D line along dim: index walks the other dims.
void run(const OpContext& ctx, bool log) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const int64_t raw = ctx.op.params_as_SoftmaxParams()->dim();
  const int32_t dim = static_cast<int32_t>(raw < 0 ? raw + in.rank : raw);
  const int64_t n = in.shape[dim], stride = in.strides[dim];
  const float* x = reinterpret_cast<const float*>(in.data);
  float* y = reinterpret_cast<float*>(out.data);
  int64_t index[kMaxRank] = {};
  const int64_t lines = n ? in.numel() / n : 0;
  int64_t offset = 0;
  for (int64_t line = 0; line < lines; ++line) {
    const float* a = x + offset;
    float* b = y + offset;
    float max = -INFINITY;
    for (int64_t k = 0; k < n; ++k) max = a[k * stride] > max ? a[k * stride] : max;
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += std::exp(a[k * stride] - max);
    if (log) {
      const double log_sum = std::log(sum);
      for (int64_t k = 0; k < n; ++k) b[k * stride] = static_cast<float>((a[k * stride] - max) - log_sum);
    } else {
      for (int64_t k = 0; k < n; ++k) b[k * stride] = static_cast<float>(std::exp(a[k * stride] - max) / sum);
    }
    for (int32_t d = in.rank - 1; d >= 0; --d) {
      if (d == dim) continue;
      offset += in.strides[d];
      if (++index[d] < in.shape[d]) break;
      offset -= in.strides[d] * in.shape[d];
      index[d] = 0;
    }
  }
}

}  // namespace

Status prepare_softmax(const OpContext& ctx) { return prepare(ctx); }
void run_softmax(const OpContext& ctx) { run(ctx, false); }
Status prepare_log_softmax(const OpContext& ctx) { return prepare(ctx); }
void run_log_softmax(const OpContext& ctx) { run(ctx, true); }

}  // namespace cortexm::runtime
