// cortex_m.quantized_log_softmax: TFLite's int8 LogSoftmax along dim (innermost in memory); int8
// output at scale 16/256, zero point 127.
#include "cortexm/kernels/quantized_log_softmax.h"

#include "ops/cortex_m/rows_util.h"

namespace cortexm::ops {

namespace {

LogSoftmaxParams decode(const OpArgs& args, const TensorInfo& in) {
  const Rows r = rows_along(args, in);
  LogSoftmaxParams p;
  p.rows = r.count();
  p.row_size = static_cast<int32_t>(r.n);
  LogSoftmaxScaling& s = p.scaling;
  s.input_multiplier = int32_attr(args, "input_multiplier", 0, INT32_MAX);
  s.input_left_shift = int32_attr(args, "input_shift", 0, 31);
  s.diff_min = int32_attr(args, "diff_min", INT32_MIN, 0);
  s.reverse_scaling_divisor = int32_attr(args, "reverse_scaling_divisor", 0, INT32_MAX);
  s.reverse_scaling_right_shift = int32_attr(args, "reverse_scaling_right_shift", 0, 31);
  return p;
}

}  // namespace

void register_cortex_m_quantized_log_softmax(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_log_softmax.default";
  s.inputs = {{"input"}};
  s.attrs = {{"dim", AttrKind::kInt},
             {"input_multiplier", AttrKind::kInt},
             {"input_shift", AttrKind::kInt},
             {"diff_min", AttrKind::kInt},
             {"reverse_scaling_divisor", AttrKind::kInt},
             {"reverse_scaling_right_shift", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    auto out = infer_int8_rows(ctx);
    check_kernel(ctx, quantized_log_softmax_prepare(decode(ctx, ctx.input(0))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    const LogSoftmaxParams p = decode(ctx, ctx.input(0).info());
    run_on_rows(rows_along(ctx, ctx.input(0).info()), ctx.input(0), ctx.output(),
                [&](const int8_t* in, int8_t* out) { quantized_log_softmax(p, in, out); });
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
