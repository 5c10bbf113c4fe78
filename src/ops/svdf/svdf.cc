// cortex_m.quantized_svdf_state and cortex_m.quantized_svdf_output: TFLite's int8 SVDF (int16
// activation state) as TFLite Micro computes it, its two stages over an explicit state tensor
// (runtime/svdf_kernels.h): stage 1 moves the state one step older and writes each filter's feature
// dot product as its newest entry; stage 2 reduces the state against the time weights into the
// int8 output. cortexm.from_tflite makes them, with the state a program input and the new state a
// program output (python/cortexm/tflite/recurrent.py).
#include "ops/cortex_m_util.h"
#include "ops/svdf/runtime/svdf_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

void require_matrix(const InferContext& ctx, size_t i, DType dtype, const char* name) {
  require_dtype(ctx, i, {dtype});
  const TensorInfo& t = ctx.input(i);
  if (t.rank() != 2 || !t.contiguous() || t.shape[0] < 1 || t.shape[1] < 1 || t.shape[0] > INT32_MAX ||
      t.shape[1] > INT32_MAX)
    ctx.fail(std::string(name) + " " + info_to_string(t) + " must be a contiguous non-empty matrix");
}

int32_t extent(const TensorInfo& t, size_t d) { return static_cast<int32_t>(t.shape[d]); }

// Stage 1: input [B, I] int8, state [B, F * M] int16, feature weights [F, I] int8.
SvdfStateParams decode_state(const OpArgs& args, const TensorInfo& x, const TensorInfo& state, const TensorInfo& w) {
  SvdfStateParams p;
  p.shape.memory = int32_attr(args, "memory", 1, INT32_MAX);
  p.input_offset = int32_attr(args, "input_offset", -127, 128);
  p.state_zero_point = int32_attr(args, "state_zero_point", -32768, 32767);
  p.multiplier = int32_attr(args, "multiplier", 0, INT32_MAX);
  p.shift = int32_attr(args, "shift", -31, 30);
  p.shape.batches = extent(x, 0);
  p.shape.input_size = extent(x, 1);
  p.shape.filters = extent(w, 0);
  if (w.shape[1] != x.shape[1] || state.shape[0] != x.shape[0] ||
      state.shape[1] != int64_t{p.shape.filters} * p.shape.memory)
    args.fail("input " + shape_to_string(x.shape) + ", state " + shape_to_string(state.shape) +
              " and feature_weights " + shape_to_string(w.shape) + " must be [B, I], [B, F * memory] and [F, I]");
  return p;
}

// Stage 2: state [B, F * M] int16, time weights [F, M] int16, bias [F / rank] int32.
SvdfOutputParams decode_output(const OpArgs& args, const TensorInfo& state, const TensorInfo& w) {
  SvdfOutputParams p;
  p.shape.rank = int32_attr(args, "rank", 1, INT32_MAX);
  p.state_zero_point = int32_attr(args, "state_zero_point", -32768, 32767);
  p.output_offset = int32_attr(args, "output_zero_point", -128, 127);
  p.multiplier = int32_attr(args, "multiplier", 0, INT32_MAX);
  p.shift = int32_attr(args, "shift", -31, 30);
  p.shape.batches = extent(state, 0);
  p.shape.filters = extent(w, 0);
  p.shape.memory = extent(w, 1);
  if (state.shape[1] != int64_t{p.shape.filters} * p.shape.memory)
    args.fail("state " + shape_to_string(state.shape) + " must be [B, F * M] for time_weights " +
              shape_to_string(w.shape));
  return p;
}

}  // namespace

void register_cortex_m_quantized_svdf_state(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_svdf_state.default";
  s.inputs = {{"input"}, {"state"}, {"feature_weights"}};
  s.attrs = {{"memory", AttrKind::kInt}, {"input_offset", AttrKind::kInt}, {"state_zero_point", AttrKind::kInt},
             {"multiplier", AttrKind::kInt}, {"shift", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    require_matrix(ctx, 0, DType::kInt8, "input");
    require_matrix(ctx, 1, DType::kInt16, "state");
    require_matrix(ctx, 2, DType::kInt8, "feature_weights");
    check_kernel(ctx, svdf_state_prepare(decode_state(ctx, ctx.input(0), ctx.input(1), ctx.input(2))));
    return std::vector<TensorInfo>{make_info(DType::kInt16, ctx.input(1).shape)};
  };
  s.kernel = [](const KernelContext& ctx) {
    const SvdfStateParams p = decode_state(ctx, ctx.input(0).info(), ctx.input(1).info(), ctx.input(2).info());
    svdf_state(p, ctx.input(0).data<int8_t>(), ctx.input(1).data<int16_t>(), ctx.input(2).data<int8_t>(),
               ctx.output().data<int16_t>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const SvdfStateParams p = decode_state(node, node.input(0), node.input(1), node.input(2));
    return program::encoded(fb::KernelId_QuantizedSvdfState, program::encode_svdf_state(b.fbb(), p));
  };
  registry.add(std::move(s));
}

void register_cortex_m_quantized_svdf_output(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_svdf_output.default";
  s.inputs = {{"state"}, {"time_weights"}, {"bias", true}};
  s.attrs = {{"rank", AttrKind::kInt}, {"state_zero_point", AttrKind::kInt}, {"output_zero_point", AttrKind::kInt},
             {"multiplier", AttrKind::kInt}, {"shift", AttrKind::kInt}};
  s.infer = [](const InferContext& ctx) {
    require_matrix(ctx, 0, DType::kInt16, "state");
    require_matrix(ctx, 1, DType::kInt16, "time_weights");
    const SvdfOutputParams p = decode_output(ctx, ctx.input(0), ctx.input(1));
    check_kernel(ctx, svdf_output_prepare(p));
    if (ctx.has_input(2)) {
      require_dtype(ctx, 2, {DType::kInt32});
      if (ctx.input(2).rank() != 1 || ctx.input(2).numel() != p.shape.units())
        ctx.fail("bias " + info_to_string(ctx.input(2)) + " must be [" + std::to_string(p.shape.units()) + "]");
    }
    return std::vector<TensorInfo>{make_info(DType::kInt8, {ctx.input(0).shape[0], p.shape.units()})};
  };
  s.kernel = [](const KernelContext& ctx) {
    const SvdfOutputParams p = decode_output(ctx, ctx.input(0).info(), ctx.input(1).info());
    svdf_output(p, ctx.input(0).data<int16_t>(), ctx.input(1).data<int16_t>(),
                ctx.has_input(2) ? ctx.input(2).data<int32_t>() : nullptr, ctx.output().data<int8_t>());
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const SvdfOutputParams p = decode_output(node, node.input(0), node.input(1));
    return program::encoded(fb::KernelId_QuantizedSvdfOutput, program::encode_svdf_output(b.fbb(), p));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
