// Mean and Sum (float fallback): the average / sum over the reduced dims, summed in double in the
// input's row-major order (the interpreter's order), contiguous input and output.
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

// Input view split into kept dims (walked per output element) and reduced dims (summed).
struct Split {
  int32_t kept_rank = 0, reduced_rank = 0;
  int64_t kept_shape[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  int64_t reduced_shape[kMaxRank] = {}, reduced_strides[kMaxRank] = {};
};

Split split(const OpContext& ctx) {
  const TensorView in = ctx.input(0);
  const auto* reduced = ctx.op.params_as_MeanParams()->reduced();
  Split s;
  for (int32_t d = 0; d < in.rank; ++d) {
    bool r = false;
    for (uint32_t k = 0; k < reduced->size(); ++k) r = r || reduced->Get(k) == d;
    if (r) {
      s.reduced_shape[s.reduced_rank] = in.shape[d];
      s.reduced_strides[s.reduced_rank++] = in.strides[d];
    } else {
      s.kept_shape[s.kept_rank] = in.shape[d];
      s.kept_strides[s.kept_rank++] = in.strides[d];
    }
  }
  return s;
}

// Element offset walk over (shape, strides) in row-major order.
bool advance(int64_t* index, const int64_t* shape, const int64_t* strides, int32_t rank, int64_t* offset) {
  for (int32_t d = rank - 1; d >= 0; --d) {
    *offset += strides[d];
    if (++index[d] < shape[d]) return true;
    *offset -= strides[d] * shape[d];
    index[d] = 0;
  }
  return false;
}

void run_reduce_sum(const OpContext& ctx, bool mean) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const Split s = split(ctx);
  int64_t count = 1;
  for (int32_t d = 0; d < s.reduced_rank; ++d) count *= s.reduced_shape[d];
  const float* x = reinterpret_cast<const float*>(in.data);
  float* y = reinterpret_cast<float*>(out.data);
  int64_t kept_index[kMaxRank] = {}, kept_offset = 0;
  const int64_t n = out.numel();
  for (int64_t j = 0; j < n; ++j) {
    double acc = 0.0;
    int64_t index[kMaxRank] = {}, offset = 0;
    for (int64_t i = 0; i < count; ++i) {
      acc += x[kept_offset + offset];
      advance(index, s.reduced_shape, s.reduced_strides, s.reduced_rank, &offset);
    }
    y[j] = static_cast<float>(mean ? acc / static_cast<double>(count) : acc);
    advance(kept_index, s.kept_shape, s.kept_strides, s.kept_rank, &kept_offset);
  }
}

}  // namespace

Status prepare_mean(const OpContext& ctx) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, DType::kFloat32));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, DType::kFloat32));
  if (!in.is_contiguous() || !out.is_contiguous()) return ctx.unsupported("input", 0, "must be contiguous");
  const auto* reduced = ctx.op.params_as_MeanParams()->reduced();
  if (!reduced) return ctx.fail("params.reduced", 0, "must be present");
  for (uint32_t k = 0; k < reduced->size(); ++k)
    if (reduced->Get(k) >= in.rank || (k > 0 && reduced->Get(k) <= reduced->Get(k - 1)))
      return ctx.fail("params.reduced", reduced->Get(k), "must be ascending dims of the input", k);
  const Split s = split(ctx);
  int64_t kept = 1;
  for (int32_t d = 0; d < s.kept_rank; ++d) kept *= s.kept_shape[d];
  if (out.numel() != kept) return ctx.fail("output.numel", out.numel(), "must be the product of the kept dims");
  return kStatusOk;
}

void run_mean(const OpContext& ctx) { run_reduce_sum(ctx, true); }

Status prepare_sum(const OpContext& ctx) { return prepare_mean(ctx); }

void run_sum(const OpContext& ctx) { run_reduce_sum(ctx, false); }

}  // namespace cortexm::runtime
