// cortex_m.quantized_softmax: arm_softmax_s8 along dim (innermost in memory); int8 output at
// scale 1/256, zero point -128.
#include "cortexm/kernels/quantized_softmax.h"

#include "ops/cortex_m/rows_util.h"

namespace cortexm::ops {

namespace {

SoftmaxParams decode(const OpArgs& args, const TensorInfo& in) {
  const Rows r = rows_along(args, in);
  SoftmaxParams p;
  p.rows = r.count();
  p.row_size = static_cast<int32_t>(r.n);
  p.scaling.input_multiplier = int32_attr(args, "input_multiplier", 0, INT32_MAX);
  p.scaling.input_left_shift = int32_attr(args, "input_shift", 0, 31);
  p.scaling.diff_min = int32_attr(args, "diff_min", INT32_MIN, 0);
  return p;
}

}  // namespace

void register_cortex_m_quantized_softmax(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_softmax.default";
  s.inputs = {{"input"}};
  s.attrs = {{"dim", AttrKind::kInt},
             {"input_multiplier", AttrKind::kInt},
             {"input_shift", AttrKind::kInt},
             {"diff_min", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    auto out = infer_int8_rows(ctx);
    check_kernel(ctx, quantized_softmax_prepare(decode(ctx, ctx.input(0))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    const SoftmaxParams p = decode(ctx, ctx.input(0).info());
    run_on_rows(rows_along(ctx, ctx.input(0).info()), ctx.input(0), ctx.output(),
                [&](const int8_t* in, int8_t* out) { quantized_softmax(p, in, out); });
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
