// cortex_m.quantized_softmax: arm_softmax_s8 along dim (innermost in memory); int8 output at
// scale 1/256, zero point -128. cortex_m.quantized_log_softmax: TFLite's int8 LogSoftmax along dim;
// int8 output at scale 16/256, zero point 127. One descriptor template for both; kernel params <->
// program table: ops/softmax/runtime/softmax_codec.h. cortex_m.quantized_softmax_s16: arm_softmax_s16 along
// dim; int16 output at scale 1/32768, zero point 0; inputs 1 and 2 the exp and reciprocal tables.
#include "cortexm/kernels/quantized_log_softmax.h"
#include "cortexm/kernels/quantized_softmax.h"
#include "cortexm/kernels/quantized_softmax_s16.h"
#include "ops/rows_util.h"
#include "ops/softmax/runtime/softmax_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

using program::has_reverse_scaling;

template <class P>
constexpr bool kLog = has_reverse_scaling<decltype(P::scaling)>::value;

template <class P>
P decode(const OpArgs& args, const Rows& r) {
  P p;
  p.rows = r.count();
  p.row_size = static_cast<int32_t>(r.n);
  auto& s = p.scaling;
  s.input_multiplier = int32_attr(args, "input_multiplier", 0, INT32_MAX);
  s.input_left_shift = int32_attr(args, "input_shift", 0, 31);
  s.diff_min = int32_attr(args, "diff_min", INT32_MIN, 0);
  if constexpr (kLog<P>) {
    s.reverse_scaling_divisor = int32_attr(args, "reverse_scaling_divisor", 0, INT32_MAX);
    s.reverse_scaling_right_shift = int32_attr(args, "reverse_scaling_right_shift", 0, 31);
  }
  return p;
}

template <class P, Error (*Prepare)(const P&), void (*Run)(const P&, const int8_t*, int8_t*)>
OpSchema softmax_schema(const char* name, fb::KernelId kernel_id) {
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}};
  s.attrs = {{"dim", AttrKind::kInt},
             {"input_multiplier", AttrKind::kInt},
             {"input_shift", AttrKind::kInt},
             {"diff_min", AttrKind::kInt}};
  if constexpr (kLog<P>) {
    s.attrs.push_back({"reverse_scaling_divisor", AttrKind::kInt});
    s.attrs.push_back({"reverse_scaling_right_shift", AttrKind::kInt});
  }
  s.infer = [](const InferContext& ctx) {
    auto out = infer_int8_rows(ctx);
    check_kernel(ctx, Prepare(decode<P>(ctx, rows_along(ctx, ctx.input(0)))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    const Rows r = rows_along(ctx, ctx.input(0).info());
    const P p = decode<P>(ctx, r);
    run_on_rows(r, ctx.input(0), ctx.output(), [&](const int8_t* in, int8_t* out) { Run(p, in, out); });
  };
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const Rows r = rows_along(node, node.input(0));
    return program::encoded(kernel_id, program::encode_softmax(b.fbb(), static_cast<int32_t>(r.dim),
                                                               decode<P>(node, r)));
  };
  return s;
}

SoftmaxS16Params decode_s16(const OpArgs& args, const Rows& r, const Tensor* exp_table,
                            const Tensor* reciprocal_table) {
  SoftmaxS16Params p;
  p.rows = r.count();
  p.row_size = static_cast<int32_t>(r.n);
  p.input_multiplier = int32_attr(args, "input_multiplier", 0, INT32_MAX);
  p.input_shift = int32_attr(args, "input_shift", INT32_MIN, INT32_MAX);
  if (exp_table) p.exp_table = exp_table->data<int16_t>();
  if (reciprocal_table) p.reciprocal_table = reciprocal_table->data<int16_t>();
  return p;
}

void require_table(const InferContext& ctx, size_t i) {
  require_dtype(ctx, i, {DType::kInt16});
  if (ctx.input(i).shape != std::vector<int64_t>{kSoftmaxS16TableSize})
    ctx.fail("input " + std::to_string(i) + " " + shape_to_string(ctx.input(i).shape) +
             " must be [513]");
}

}  // namespace

void register_cortex_m_quantized_softmax_s16(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_softmax_s16.default";
  s.inputs = {{"input"}, {"exp_table"}, {"reciprocal_table"}};
  s.attrs = {{"dim", AttrKind::kInt},
             {"input_multiplier", AttrKind::kInt},
             {"input_shift", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    auto out = infer_int8_rows(ctx, DType::kInt16);
    require_table(ctx, 1);
    require_table(ctx, 2);
    // The tables' entries are checked where they are known: by the kernel's prepare when run or
    // loaded; here with stand-in tables that pass.
    int16_t ones[kSoftmaxS16TableSize];
    for (int16_t& v : ones) v = 1;
    SoftmaxS16Params p = decode_s16(ctx, rows_along(ctx, ctx.input(0)), nullptr, nullptr);
    p.exp_table = p.reciprocal_table = ones;
    check_kernel(ctx, quantized_softmax_s16_prepare(p));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    const Rows r = rows_along(ctx, ctx.input(0).info());
    const SoftmaxS16Params p = decode_s16(ctx, r, &ctx.input(1), &ctx.input(2));
    check_kernel(ctx, quantized_softmax_s16_prepare(p));
    run_on_rows<int16_t>(r, ctx.input(0), ctx.output(),
                         [&](const int16_t* in, int16_t* out) { quantized_softmax_s16(p, in, out); });
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const Rows r = rows_along(node, node.input(0));
    return program::encoded(fb::KernelId_QuantizedSoftmaxS16,
                            program::encode_softmax_s16(b.fbb(), static_cast<int32_t>(r.dim),
                                                        decode_s16(node, r, nullptr, nullptr)));
  };
  registry.add(std::move(s));
}

void register_cortex_m_quantized_softmax(OpRegistry& registry) {
  registry.add(softmax_schema<SoftmaxParams, quantized_softmax_prepare, quantized_softmax>(
      "cortex_m.quantized_softmax.default", fb::KernelId_QuantizedSoftmax));
}

void register_cortex_m_quantized_log_softmax(OpRegistry& registry) {
  registry.add(softmax_schema<LogSoftmaxParams, quantized_log_softmax_prepare, quantized_log_softmax>(
      "cortex_m.quantized_log_softmax.default", fb::KernelId_QuantizedLogSoftmax));
}

}  // namespace cortexm::ops
