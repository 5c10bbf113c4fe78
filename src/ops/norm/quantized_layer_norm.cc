// cortex_m.quantized_layer_norm: int8 layer norm over the trailing `normalized_rank` dims of a
// contiguous input (quantized_layer_norm.h's integer arithmetic); optional int16 weight and int32
// bias with one value per row element. The output is int8, contiguous, of the input's shape.
#include "cortexm/kernels/quantized_layer_norm.h"

#include "ops/output_requantization.h"
#include "ops/norm/norm_schema.h"
#include "ops/norm/runtime/layer_norm_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

LayerNormParams decode(const OpArgs& args, const TensorInfo& input) {
  const int64_t rank = input.rank();
  const int64_t normalized = args.i("normalized_rank");
  if (normalized < 1 || normalized > rank)
    args.fail("attribute 'normalized_rank' = " + std::to_string(normalized) + " must be in [1, " +
              std::to_string(rank) + "] (the input's rank)");
  int64_t rows = 1, row_size = 1;
  for (int64_t d = 0; d < rank; ++d) (d < rank - normalized ? rows : row_size) *= input.shape[static_cast<size_t>(d)];
  if (rows > INT32_MAX || row_size > INT32_MAX)
    args.fail("input " + shape_to_string(input.shape) + " is too large");
  LayerNormParams p;
  p.rows = static_cast<int32_t>(rows);
  p.row_size = static_cast<int32_t>(row_size);
  p.eps_term = args.i("eps_term");
  p.product_shift = int32_attr(args, "product_shift", 0, 31);
  read_output_requantization(args, "output_zero_point", -128, 127, &p);
  return p;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {DType::kInt8});
  const TensorInfo& in = ctx.input(0);
  if (in.rank() < 1) ctx.fail("input must have rank >= 1");
  for (int64_t d : in.shape)
    if (d < 1) ctx.fail("input " + shape_to_string(in.shape) + " must not be empty");
  if (!in.contiguous()) ctx.fail("input " + info_to_string(in) + " must be contiguous");
  const LayerNormParams p = decode(ctx, in);
  check_kernel(ctx, quantized_layer_norm_prepare(p));
  const char* names[] = {"", "weight", "bias"};
  const DType dtypes[] = {DType::kInt8, DType::kInt16, DType::kInt32};
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (!ctx.has_input(i)) continue;
    require_dtype(ctx, i, {dtypes[i]});
    if (ctx.input(i).numel() != p.row_size || !ctx.input(i).contiguous())
      ctx.fail(std::string(names[i]) + " " + info_to_string(ctx.input(i)) + " must hold " +
               std::to_string(p.row_size) + " contiguous values, one per row element");
  }
  return {make_info(DType::kInt8, in.shape)};
}

void kernel(const KernelContext& ctx) {
  const LayerNormParams p = decode(ctx, ctx.input(0).info());
  quantized_layer_norm(p, ctx.input(0).data<int8_t>(),
                       ctx.has_input(1) ? ctx.input(1).data<int16_t>() : nullptr,
                       ctx.has_input(2) ? ctx.input(2).data<int32_t>() : nullptr,
                       ctx.output().data<int8_t>());
}

}  // namespace

void register_cortex_m_quantized_layer_norm(OpRegistry& registry) {
  OpSchema s;
  s.name = "cortex_m.quantized_layer_norm.default";
  s.inputs = {{"input"}, {"weight", true}, {"bias", true}};
  s.attrs = norm_attrs("normalized_rank", -128, 127, false);
  s.infer = infer;
  s.kernel = kernel;
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    const LayerNormParams p = decode(node, node.input(0));
    return program::encoded(fb::KernelId_QuantizedLayerNorm,
                            program::encode_layer_norm(b.fbb(), static_cast<int32_t>(node.i("normalized_rank")), p));
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
