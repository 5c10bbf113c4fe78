// cortex_m.quantized_mean: int8 mean over `dim` (TFLite's integer Mean). The reduced dims must
// form one block in the input's memory order (dim_order), so the kernel sees [outer, reduce, inner]
// bytes: an NCHW mean over H and W is [N*C, H*W, 1], a channels-last one [N, H*W, C]. The output
// keeps the input's dim order (without the reduced dims unless keepdim). cortex_m.quantized_mean_s16:
// the same over symmetric int16 (offsets 0).
#include "cortexm/kernels/quantized_mean.h"

#include <algorithm>

#include "ops/cortex_m_util.h"
#include "ops/reduction/runtime/mean_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

struct MeanCall {
  MeanParams params;
  std::vector<uint8_t> reduced;    // the reduced dims, ascending
  std::vector<int64_t> order;      // input memory order, outermost first
  std::vector<int64_t> out_shape;  // logical
  std::vector<int64_t> out_order;
};

MeanCall decode(const OpArgs& args, const TensorInfo& input) {
  const bool int16 = input.dtype == DType::kInt16;
  MeanCall call;
  const int64_t rank = input.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  const auto& dims = args.ints("dim");
  if (dims.empty()) args.fail("attribute 'dim' must name at least one dim");
  for (int64_t d : dims) {
    const int64_t n = normalize_dim(args, "dim", d, rank);
    if (reduced[static_cast<size_t>(n)]) args.fail("attribute 'dim' repeats dim " + std::to_string(n));
    reduced[static_cast<size_t>(n)] = true;
  }
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[static_cast<size_t>(d)]) call.reduced.push_back(static_cast<uint8_t>(d));
  call.order = input.effective_dim_order();
  int64_t first = -1, last = -1;
  for (int64_t k = 0; k < rank; ++k) {
    if (!reduced[static_cast<size_t>(call.order[static_cast<size_t>(k)])]) continue;
    if (first < 0) first = k;
    last = k;
  }
  if (last - first + 1 != static_cast<int64_t>(dims.size()))
    args.fail("the reduced dims must be one block in the input's memory order");
  int64_t outer = 1, reduce = 1, inner = 1;
  for (int64_t k = 0; k < rank; ++k) {
    const int64_t e = input.shape[static_cast<size_t>(call.order[static_cast<size_t>(k)])];
    (k < first ? outer : k > last ? inner : reduce) *= e;
  }
  if (outer > INT32_MAX || reduce > INT32_MAX || inner > INT32_MAX)
    args.fail("input " + shape_to_string(input.shape) + " is too large");
  const bool keepdim = args.b("keepdim");
  std::vector<int64_t> new_index(static_cast<size_t>(rank), -1);
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[static_cast<size_t>(d)] && !keepdim) continue;
    new_index[static_cast<size_t>(d)] = static_cast<int64_t>(call.out_shape.size());
    call.out_shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : input.shape[static_cast<size_t>(d)]);
  }
  for (int64_t d : call.order)
    if (new_index[static_cast<size_t>(d)] >= 0) call.out_order.push_back(new_index[static_cast<size_t>(d)]);
  MeanParams& p = call.params;
  p.outer = static_cast<int32_t>(outer);
  p.reduce = static_cast<int32_t>(reduce);
  p.inner = static_cast<int32_t>(inner);
  p.input_offset = int32_attr(args, "input_offset", int16 ? 0 : -127, int16 ? 0 : 128);
  p.output_offset = int32_attr(args, "output_offset", int16 ? 0 : -128, int16 ? 0 : 127);
  p.multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.shift = int32_attr(args, "output_shift", -31, 30);
  p.activation_min = int32_attr(args, "activation_min", int16 ? -32768 : -128, int16 ? 32767 : 127);
  p.activation_max = int32_attr(args, "activation_max", int16 ? -32768 : -128, int16 ? 32767 : 127);
  return call;
}

template <class T>
constexpr DType kDType = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;

template <class T, Error (*Prepare)(const MeanParams&)>
std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_dtype(ctx, 0, {kDType<T>});
  check_scratch_bytes(ctx);
  if (ctx.input(0).rank() < 1) ctx.fail("input must have rank >= 1");
  for (int64_t d : ctx.input(0).shape)
    if (d < 1) ctx.fail("input " + shape_to_string(ctx.input(0).shape) + " must not be empty");
  const MeanCall call = decode(ctx, ctx.input(0));
  check_kernel(ctx, Prepare(call.params));
  TensorInfo out = make_info(kDType<T>, call.out_shape);
  out.dim_order = call.out_order;
  return {out};
}

// Logical contiguous data <-> bytes in `order` (outermost first), for a shape.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

template <bool kToMemory, class T>
void permute(const std::vector<int64_t>& shape, const std::vector<int64_t>& order,
             const T* src, T* dst) {
  const std::vector<int64_t> logical = strides_of(shape);
  std::vector<int64_t> ordered_shape;
  for (int64_t d : order) ordered_shape.push_back(shape[static_cast<size_t>(d)]);
  int64_t total = 1;
  for (int64_t e : shape) total *= e;
  std::vector<int64_t> index(order.size(), 0);
  for (int64_t m = 0; m < total; ++m) {
    int64_t l = 0;
    for (size_t k = 0; k < order.size(); ++k) l += index[k] * logical[static_cast<size_t>(order[k])];
    if (kToMemory) dst[m] = src[l];
    else dst[l] = src[m];
    for (size_t k = order.size(); k-- > 0;) {
      if (++index[k] < ordered_shape[k]) break;
      index[k] = 0;
    }
  }
}

template <class T, void (*Run)(const MeanParams&, const T*, T*, void*)>
void kernel(const KernelContext& ctx) {
  const TensorInfo& in = ctx.input(0).info();
  const MeanCall call = decode(ctx, in);
  std::vector<T> elements(static_cast<size_t>(in.numel()));
  permute<true>(in.shape, call.order, ctx.input(0).data<T>(), elements.data());
  std::vector<T> out(static_cast<size_t>(ctx.output().numel()));
  std::vector<int32_t> scratch(quantized_mean_scratch_size(call.params, Isa::kScalar) / 4 + 1);
  Run(call.params, elements.data(), out.data(), scratch.data());
  permute<false>(call.out_shape, call.out_order, out.data(), ctx.output().data<T>());
}

template <class T, Error (*Prepare)(const MeanParams&),
          void (*Run)(const MeanParams&, const T*, T*, void*)>
OpSchema mean_schema(const char* name, fb::KernelId kernel_id) {
  constexpr bool kInt16 = sizeof(T) == 2;
  OpSchema s;
  s.name = name;
  s.inputs = {{"input"}};
  s.attrs = {{"dim", AttrKind::kInts},
             {"keepdim", AttrKind::kBool},
             {"input_offset", AttrKind::kInt},
             {"output_offset", AttrKind::kInt},
             {"output_multiplier", AttrKind::kInt},
             {"output_shift", AttrKind::kInt},
             {"activation_min", AttrKind::kInt, false, AttrValue(int64_t{kInt16 ? -32768 : -128})},
             {"activation_max", AttrKind::kInt, false, AttrValue(int64_t{kInt16 ? 32767 : 127})},
             scratch_bytes_attr()};
  s.infer = infer<T, Prepare>;
  s.kernel = kernel<T, Run>;
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const MeanCall call = decode(node, node.input(0));
    return program::encoded(kernel_id, program::encode_mean(b.fbb(), call.reduced, call.params));
  };
  s.scratch = [](const NodeContext& node, Isa isa) {
    return quantized_mean_scratch_size(decode(node, node.input(0)).params, isa);
  };
  return s;
}

}  // namespace

void register_cortex_m_quantized_mean(OpRegistry& registry) {
  registry.add(mean_schema<int8_t, quantized_mean_prepare, quantized_mean>(
      "cortex_m.quantized_mean.default", fb::KernelId_QuantizedMean));
}

void register_cortex_m_quantized_mean_s16(OpRegistry& registry) {
  registry.add(mean_schema<int16_t, quantized_mean_s16_prepare, quantized_mean_s16>(
      "cortex_m.quantized_mean_s16.default", fb::KernelId_QuantizedMeanS16));
}

}  // namespace cortexm::ops
