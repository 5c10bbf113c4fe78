// QuantizedMean: int8 mean over dims that form one block in the input's memory order, so the
// kernel reads the bytes as [outer, reduce, inner]. The output keeps the input's memory order of
// the kept dims (reduced dims dropped, or kept with extent 1); scratch holds one int32 per inner.
// QuantizedMeanS16: the same over symmetric int16.
#include "cortexm/kernels/quantized_mean.h"

#include "cortexm/kernels/kernel_isa.h"
#include "ops/reduction/runtime/mean_codec.h"
#include "ops/conv/runtime/conv_decode.h"

namespace cortexm::runtime {

namespace {

Status decode(const OpContext& ctx, MeanParams* p, DType dtype = DType::kInt8) {
  const TensorView in = ctx.input(0), out = ctx.output();
  const auto* q = ctx.op.params_as_QuantizedMeanParams();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, dtype));
  const auto* reduced = q->reduced();
  const int32_t count = reduced ? static_cast<int32_t>(reduced->size()) : 0;
  if (count < 1) return ctx.fail("params.reduced.size", count, "must be >= 1");
  bool is_reduced[kMaxRank] = {};
  for (int32_t k = 0; k < count; ++k) {
    const uint8_t d = reduced->Get(k);
    if (d >= in.rank || (k > 0 && d <= reduced->Get(k - 1)))
      return ctx.fail("params.reduced", d, "must be ascending dims of the input", k);
    is_reduced[d] = true;
  }
  int32_t order[kMaxRank];
  ctx.program.dim_order(ctx.op.inputs()->Get(0), order);
  int32_t first = -1, last = -1;
  for (int32_t k = 0; k < in.rank; ++k) {
    if (!is_reduced[order[k]]) continue;
    if (first < 0) first = k;
    last = k;
  }
  if (last - first + 1 != count)
    return ctx.unsupported("params.reduced", count, "must be one block in the input's memory order");
  int64_t outer = 1, reduce = 1, inner = 1;
  for (int32_t k = 0; k < in.rank; ++k) {
    int64_t& part = k < first ? outer : k > last ? inner : reduce;
    part *= in.shape[order[k]];
    if (part > INT32_MAX) return ctx.fail("input.shape", in.shape[order[k]], "is too large for int32 extents", order[k]);
  }
  // Output: the kept dims (and, with keepdim, the reduced ones at extent 1) in the input's order.
  const bool keepdim = out.rank == in.rank;
  if (!keepdim && out.rank != in.rank - count)
    return ctx.fail("output.rank", out.rank, "must be the input's rank, or it minus the reduced dims");
  int32_t out_dim[kMaxRank];
  for (int32_t d = 0, o = 0; d < in.rank; ++d) {
    out_dim[d] = is_reduced[d] && !keepdim ? -1 : o++;
    if (out_dim[d] < 0) continue;
    const int64_t want = is_reduced[d] ? 1 : in.shape[d];
    if (out.shape[out_dim[d]] != want)
      return ctx.fail("output.shape", out.shape[out_dim[d]], "must be the input's with the reduced dims 1 or gone", out_dim[d]);
  }
  int64_t out_order[kMaxRank];
  int32_t n = 0;
  for (int32_t k = 0; k < in.rank; ++k)
    if (out_dim[order[k]] >= 0) out_order[n++] = out_dim[order[k]];
  if (!out.has_layout(out_order))
    return ctx.unsupported("output", 0, "must keep the input's memory order of the kept dims");
  p->outer = static_cast<int32_t>(outer);
  p->reduce = static_cast<int32_t>(reduce);
  p->inner = static_cast<int32_t>(inner);
  program::decode_mean(*q, p);
  return kStatusOk;
}

template <class T>
constexpr DType kDType = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class T, Error (*Prepare)(const MeanParams&)>
Status prepare_mean(const OpContext& ctx) {
  MeanParams p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p, kDType<T>));
  const Error error = Prepare(p);
  if (!error.ok()) return ctx.fail(error);
  return require_scratch(ctx, quantized_mean_scratch_size(p, kKernelIsa));
}

template <class T, void (*Run)(const MeanParams&, const T*, T*, void*)>
void run_mean(const OpContext& ctx) {
  MeanParams p;
  decode(ctx, &p, kDType<T>);
  Run(p, reinterpret_cast<const T*>(ctx.input(0).data), reinterpret_cast<T*>(ctx.output().data),
      ctx.scratch(quantized_mean_scratch_size(p, kKernelIsa)));
}

}  // namespace

Status prepare_quantized_mean(const OpContext& ctx) {
  return prepare_mean<int8_t, quantized_mean_prepare>(ctx);
}

void run_quantized_mean(const OpContext& ctx) { run_mean<int8_t, quantized_mean>(ctx); }

Status prepare_quantized_mean_s16(const OpContext& ctx) {
  return prepare_mean<int16_t, quantized_mean_s16_prepare>(ctx);
}

void run_quantized_mean_s16(const OpContext& ctx) { run_mean<int16_t, quantized_mean_s16>(ctx); }

}  // namespace cortexm::runtime
