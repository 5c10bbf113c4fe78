// QuantizedSoftmax / QuantizedLogSoftmax (arm_softmax_s8 arithmetic): rows along dim, which must be
// innermost in memory so each row is contiguous; input and output share their layout.
// QuantizedSoftmaxS16 (arm_softmax_s16): the same over int16, inputs 1 and 2 its constant int16
// [513] exp and reciprocal tables.
#include "cortexm/kernels/quantized_log_softmax.h"
#include "cortexm/kernels/quantized_softmax.h"
#include "cortexm/kernels/quantized_softmax_s16.h"

#include "ops/softmax/runtime/softmax_codec.h"
#include "runtime/op_context.h"

namespace cortexm::runtime {

namespace {

struct RowShape {
  int32_t rows = 1, row_size = 1;
};

Status rows_of(const OpContext& ctx, RowShape* r, DType dtype = DType::kInt8) {
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "input", in, dtype));
  CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, "output", out, dtype));
  if (!in.same_layout(out)) return ctx.unsupported("output", 0, "must have the input's shape and layout");
  int32_t dim = 0;
  CORTEXM_RETURN_IF_STATUS(normalize_dim(ctx, "params.dim", ctx.op.params_as_QuantizedSoftmaxParams()->dim(), in.rank, &dim));
  if (in.strides[dim] != 1 && in.shape[dim] != 1)
    return ctx.unsupported("params.dim", dim, "must be innermost in memory");
  const int64_t n = in.shape[dim];
  if (n < 1 || n > INT32_MAX || in.numel() / n > INT32_MAX)
    return ctx.fail("input.shape", n, "must be non-empty with int32 extents", dim);
  // With extent-1 dims ignored the rows are the innermost run of n bytes.
  for (int32_t d = 0; d < in.rank; ++d)
    if (d != dim && in.shape[d] != 1 && in.strides[d] < n)
      return ctx.unsupported("params.dim", dim, "must be innermost in memory");
  r->row_size = static_cast<int32_t>(n);
  r->rows = static_cast<int32_t>(in.numel() / n);
  return kStatusOk;
}

template <class P>
Status decode(const OpContext& ctx, P* p) {
  RowShape r;
  CORTEXM_RETURN_IF_STATUS(rows_of(ctx, &r));
  p->rows = r.rows;
  p->row_size = r.row_size;
  program::decode_softmax(*ctx.op.params_as_QuantizedSoftmaxParams(), p);
  return kStatusOk;
}

template <class P, Error (*Prepare)(const P&)>
Status prepare_rows(const OpContext& ctx) {
  P p;
  CORTEXM_RETURN_IF_STATUS(decode(ctx, &p));
  const Error error = Prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

template <class P>
struct RowsState {
  P params;
  DataRef input, output;
};

template <class P>
void init_rows(const OpContext& ctx, RowsState<P>* s) {
  decode(ctx, &s->params);
  s->input = ctx.input_ref(0);
  s->output = ctx.output_ref();
}

template <class P, void (*Run)(const P&, const int8_t*, int8_t*)>
void run_rows(const OpContext& ctx) {
  const auto& s = state_of<RowsState<P>>(ctx);
  Run(s.params, ctx.data_as<const int8_t>(s.input), ctx.data_as<int8_t>(s.output));
}

Status decode_s16(const OpContext& ctx, SoftmaxS16Params* p) {
  RowShape r;
  CORTEXM_RETURN_IF_STATUS(rows_of(ctx, &r, DType::kInt16));
  p->rows = r.rows;
  p->row_size = r.row_size;
  program::decode_softmax_s16(*ctx.op.params_as_QuantizedSoftmaxParams(), p);
  p->exp_table = reinterpret_cast<const int16_t*>(ctx.input(1).data);
  p->reciprocal_table = reinterpret_cast<const int16_t*>(ctx.input(2).data);
  return kStatusOk;
}

}  // namespace

Status prepare_quantized_softmax_s16(const OpContext& ctx) {
  const char* names[] = {"exp_table", "reciprocal_table"};
  for (int i = 1; i <= 2; ++i) {
    const TensorView table = ctx.input(i);
    CORTEXM_RETURN_IF_STATUS(require_dtype(ctx, names[i - 1], table, DType::kInt16));
    if (table.rank != 1 || table.shape[0] != kSoftmaxS16TableSize)
      return ctx.fail(names[i - 1], table.rank == 1 ? table.shape[0] : table.rank, "must be [513]");
    if (!table.data) return ctx.unsupported(names[i - 1], 0, "must be a constant");
  }
  SoftmaxS16Params p;
  CORTEXM_RETURN_IF_STATUS(decode_s16(ctx, &p));
  const Error error = quantized_softmax_s16_prepare(p);
  return error.ok() ? kStatusOk : ctx.fail(error);
}

void run_quantized_softmax_s16(const OpContext& ctx) {
  SoftmaxS16Params p;
  decode_s16(ctx, &p);
  quantized_softmax_s16(p, reinterpret_cast<const int16_t*>(ctx.input(0).data),
                        reinterpret_cast<int16_t*>(ctx.output().data));
}

extern const OpState quantized_softmax_state = kOpState<RowsState<SoftmaxParams>, init_rows<SoftmaxParams>, 48>;
extern const OpState quantized_log_softmax_state =
    kOpState<RowsState<LogSoftmaxParams>, init_rows<LogSoftmaxParams>, 48>;

Status prepare_quantized_softmax(const OpContext& ctx) {
  return prepare_rows<SoftmaxParams, quantized_softmax_prepare>(ctx);
}

void run_quantized_softmax(const OpContext& ctx) { run_rows<SoftmaxParams, quantized_softmax>(ctx); }

Status prepare_quantized_log_softmax(const OpContext& ctx) {
  return prepare_rows<LogSoftmaxParams, quantized_log_softmax_prepare>(ctx);
}

void run_quantized_log_softmax(const OpContext& ctx) {
  run_rows<LogSoftmaxParams, quantized_log_softmax>(ctx);
}

}  // namespace cortexm::runtime
