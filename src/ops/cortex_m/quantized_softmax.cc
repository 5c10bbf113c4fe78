// cortex_m.quantized_softmax: arm_softmax_s8 along dim (innermost in memory); int8 output at
// scale 1/256, zero point -128. cortex_m.quantized_log_softmax: TFLite's int8 LogSoftmax along dim;
// int8 output at scale 16/256, zero point 127. One descriptor template for both; kernel params <->
// program table: program/params/softmax.h.
#include "cortexm/kernels/quantized_log_softmax.h"
#include "cortexm/kernels/quantized_softmax.h"
#include "ops/cortex_m/rows_util.h"
#include "program/params/softmax.h"
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

}  // namespace

void register_cortex_m_quantized_softmax(OpRegistry& registry) {
  registry.add(softmax_schema<SoftmaxParams, quantized_softmax_prepare, quantized_softmax>(
      "cortex_m.quantized_softmax.default", fb::KernelId_QuantizedSoftmax));
}

void register_cortex_m_quantized_log_softmax(OpRegistry& registry) {
  registry.add(softmax_schema<LogSoftmaxParams, quantized_log_softmax_prepare, quantized_log_softmax>(
      "cortex_m.quantized_log_softmax.default", fb::KernelId_QuantizedLogSoftmax));
}

}  // namespace cortexm::ops
