// The cortex_m elementwise binary ops with numpy broadcasting, one descriptor each over one
// implementation: add / maximum / minimum rescale each input (arm_elementwise_add_s8's
// arithmetic; sub subtracts the second), mul rescales the product (arm_elementwise_mul_s8); the _s16 twins are symmetric
// int16 (no zero points). Kernel params <-> program table: ops/binary/runtime/binary_codec.h.
#include <limits>

#include "cortexm/kernels/quantized_add.h"
#include "cortexm/kernels/quantized_add_s16.h"
#include "cortexm/kernels/quantized_maximum.h"
#include "cortexm/kernels/quantized_minimum.h"
#include "cortexm/kernels/quantized_mul.h"
#include "cortexm/kernels/quantized_mul_s16.h"
#include "ops/binary/binary_util.h"
#include "ops/binary/runtime/binary_codec.h"
#include "program/params_builder.h"

namespace cortexm::ops {

namespace {

using program::has_offsets;
using program::rescales_inputs;

// The op's attributes, in the order its schema lists them.
template <class P>
std::vector<std::string> binary_attrs() {
  std::vector<std::string> names;
  for (const char* input : {"self", "other", "output"}) {
    const std::string prefix = input;
    if constexpr (has_offsets<P>::value) names.push_back(prefix + "_zero_point");
    if (rescales_inputs<P>::value || prefix == "output") {
      names.push_back(prefix + "_multiplier");
      names.push_back(prefix + "_shift");
    }
  }
  return names;
}

template <class P, class T>
P decode(const OpArgs& args, const TensorInfo& a, const TensorInfo& b) {
  constexpr int64_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  P p;
  p.shape = broadcast_of(args, a, b);
  if constexpr (has_offsets<P>::value) {
    p.lhs_offset = -int32_attr(args, "self_zero_point", lo, hi);
    p.rhs_offset = -int32_attr(args, "other_zero_point", lo, hi);
    p.output_offset = int32_attr(args, "output_zero_point", lo, hi);
  }
  if constexpr (rescales_inputs<P>::value) {
    p.lhs_multiplier = int32_attr(args, "self_multiplier", 0, INT32_MAX);
    p.lhs_shift = int32_attr(args, "self_shift", -31, 30);
    p.rhs_multiplier = int32_attr(args, "other_multiplier", 0, INT32_MAX);
    p.rhs_shift = int32_attr(args, "other_shift", -31, 30);
  }
  p.output_multiplier = int32_attr(args, "output_multiplier", 0, INT32_MAX);
  p.output_shift = int32_attr(args, "output_shift", -31, 30);
  p.activation_min = int32_attr(args, "activation_min", lo, hi);
  p.activation_max = int32_attr(args, "activation_max", lo, hi);
  return p;
}

template <class P, class T, Error (*Prepare)(const P&), void (*Run)(const P&, const T*, const T*, T*)>
void add_binary(OpRegistry& registry, const char* name, fb::KernelId kernel_id, int in_place_input,
                bool elementwise_passes = false) {
  constexpr DType dtype = sizeof(T) == 1 ? DType::kInt8 : DType::kInt16;
  OpSchema s;
  s.name = name;
  s.inputs = {{"self"}, {"other"}};
  s.in_place_input = in_place_input;
  // Taken by ActivationFusion and SinkDimOrderClones (add and mul, not yet sub, maximum, minimum).
  s.fuses_activation = elementwise_passes;
  if (elementwise_passes) s.layout_following_inputs = {0, 1};
  for (const std::string& attr : binary_attrs<P>()) s.attrs.push_back({attr, AttrKind::kInt});
  s.attrs.push_back({"activation_min", AttrKind::kInt, false,
                     AttrValue(int64_t{std::numeric_limits<T>::min()})});
  s.attrs.push_back({"activation_max", AttrKind::kInt, false,
                     AttrValue(int64_t{std::numeric_limits<T>::max()})});
  s.infer = [](const InferContext& ctx) {
    auto out = infer_binary(ctx, dtype);
    check_kernel(ctx, Prepare(decode<P, T>(ctx, ctx.input(0), ctx.input(1))));
    return out;
  };
  s.kernel = [](const KernelContext& ctx) {
    P p = decode<P, T>(ctx, ctx.input(0).info(), ctx.input(1).info());
    ctx.take_host_variant(&p);
    Run(p, ctx.input(0).data<T>(), ctx.input(1).data<T>(), ctx.output().data<T>());
  };
  s.encode = [kernel_id](program::ParamsBuilder& b, const NodeContext& node) {
    const P p = decode<P, T>(node, node.input(0), node.input(1));
    return program::encoded(kernel_id, program::encode_binary(b.fbb(), p));
  };
  registry.add(std::move(s));
}

}  // namespace

// The kernels of mul and the int16 twins declare their pointers __restrict: not in place.
constexpr int kNotInPlace = -1;

void register_cortex_m_binary_ops(OpRegistry& registry) {
  add_binary<AddParams, int8_t, quantized_add_prepare, quantized_add>(
      registry, "cortex_m.quantized_add.default", fb::KernelId_QuantizedAdd, 0, true);
  add_binary<SubParams, int8_t, quantized_sub_prepare, quantized_sub>(
      registry, "cortex_m.quantized_sub.default", fb::KernelId_QuantizedSub, 0);
  add_binary<MinMaxParams, int8_t, quantized_maximum_prepare, quantized_maximum>(
      registry, "cortex_m.quantized_maximum.default", fb::KernelId_QuantizedMaximum, 0);
  add_binary<MinMaxParams, int8_t, quantized_minimum_prepare, quantized_minimum>(
      registry, "cortex_m.quantized_minimum.default", fb::KernelId_QuantizedMinimum, 0);
  add_binary<MulParams, int8_t, quantized_mul_prepare, quantized_mul>(
      registry, "cortex_m.quantized_mul.default", fb::KernelId_QuantizedMul, kNotInPlace, true);
  add_binary<AddS16Params, int16_t, quantized_add_s16_prepare, quantized_add_s16>(
      registry, "cortex_m.quantized_add_s16.default", fb::KernelId_QuantizedAddS16, kNotInPlace, true);
  add_binary<MulS16Params, int16_t, quantized_mul_s16_prepare, quantized_mul_s16>(
      registry, "cortex_m.quantized_mul_s16.default", fb::KernelId_QuantizedMulS16, kNotInPlace, true);
}

}  // namespace cortexm::ops
