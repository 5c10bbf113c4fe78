// aten.constant_pad_nd.default: pads with `value`; `pad` holds (left, right) pairs from the last
// dim backwards, as torch; negative pads crop. Any dtype: for integer dtypes `value` is a raw
// stored value, truncated toward zero like torch (it must fit the dtype); per-tensor qparams
// pass through (portable::constant_pad).
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cortexm/portable/constant_pad.h"
#include "ops/data_movement/moved_bytes.h"

namespace cortexm::ops {

namespace {

// Pad (left, right) per dim, in dim order.
std::vector<std::pair<int64_t, int64_t>> resolve(const OpArgs& args,
                                                 const std::vector<int64_t>& shape) {
  const std::vector<int64_t>& pad = args.ints("pad");
  const size_t rank = shape.size();
  if (pad.size() % 2)
    args.fail("attribute 'pad' = " + shape_to_string(pad) + " must have an even length");
  if (pad.size() > 2 * rank)
    args.fail("attribute 'pad' = " + shape_to_string(pad) + " pads " +
              std::to_string(pad.size() / 2) + " dims, the input has rank " +
              std::to_string(rank));
  std::vector<std::pair<int64_t, int64_t>> pads(rank, {0, 0});
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const size_t d = rank - 1 - i;
    pads[d] = {pad[2 * i], pad[2 * i + 1]};
    // Like torch, the crops alone must fit the dim (padding does not make room for them).
    if (shape[d] + std::min<int64_t>(pad[2 * i], 0) + std::min<int64_t>(pad[2 * i + 1], 0) < 0)
      args.fail("attribute 'pad' = " + shape_to_string(pad) + " crops dim " + std::to_string(d) +
                " (size " + std::to_string(shape[d]) + ") to a negative size");
  }
  return pads;
}

template <typename T>
T fill_value(const OpArgs& args, double value) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value != 0.0;
  } else {
    // max() + 1 = 2^digits bounds int64 too (its max() rounds up to 2^63 as a double).
    if (!(value >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
          value <= static_cast<double>(std::numeric_limits<T>::max()) &&
          value < std::ldexp(1.0, std::numeric_limits<T>::digits)))
      args.fail("attribute 'value' = " + std::to_string(value) + " does not fit the input's dtype");
    return static_cast<T>(value);
  }
}

// The fill value as the raw bytes of one element of the input's dtype.
template <typename T>
void write_fill_value(const OpArgs& args, uint8_t* bytes) {
  const T value = fill_value<T>(args, args.f("value"));
  std::memcpy(bytes, &value, sizeof(T));
}

}  // namespace

void register_aten_constant_pad_nd(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.constant_pad_nd.default";
  s.layout_following_inputs = {0};
  s.inputs = {{"self"}};
  s.attrs = {{"pad", AttrKind::kInts}, {"value", AttrKind::kFloat, false, AttrValue(0.0)}};
  s.is_data_movement = true;
  // On quantized data the pad value is the stored integer of the real one (0.0 when unset).
  s.quantize_attrs = [](Attrs& attrs, const std::function<double(double)>& quantize) {
    for (auto& [key, value] : attrs)
      if (key == "value") {
        value = quantize(std::get<double>(value));
        return;
      }
    attrs.emplace_back("value", quantize(0.0));
  };
  s.encode = [](program::ParamsBuilder& b, const NodeContext& node) {
    std::vector<int64_t> per_dim;  // (before, after) per dim, in dim order
    for (const auto& [before, after] : resolve(node, node.input(0).shape)) {
      per_dim.push_back(before);
      per_dim.push_back(after);
    }
    return program::encoded(fb::KernelId_ConstantPad,
                            fb::CreateConstantPadParams(b.fbb(), b.fbb().CreateVector(per_dim), node.f("value")));
  };
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const auto pads = resolve(ctx, in.shape);
    portable_shape(ctx, in.shape);  // rank <= 6
    std::vector<int64_t> shape = in.shape;
    for (size_t d = 0; d < shape.size(); ++d) shape[d] += pads[d].first + pads[d].second;
    const double value = ctx.f("value");
    switch (in.dtype) {
      case DType::kInt8: fill_value<int8_t>(ctx, value); break;
      case DType::kUInt8: fill_value<uint8_t>(ctx, value); break;
      case DType::kInt16: fill_value<int16_t>(ctx, value); break;
      case DType::kInt32: fill_value<int32_t>(ctx, value); break;
      case DType::kInt64: fill_value<int64_t>(ctx, value); break;
      default: break;
    }
    TensorInfo out = moved_info(in, shape);
    out.dim_order = in.effective_dim_order();  // the runtime pads in any layout
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& pad = ctx.ints("pad");
    alignas(8) uint8_t value[8] = {};
    switch (in.dtype()) {
      case DType::kFloat32: write_fill_value<float>(ctx, value); break;
      case DType::kInt8: write_fill_value<int8_t>(ctx, value); break;
      case DType::kUInt8: write_fill_value<uint8_t>(ctx, value); break;
      case DType::kInt16: write_fill_value<int16_t>(ctx, value); break;
      case DType::kInt32: write_fill_value<int32_t>(ctx, value); break;
      case DType::kInt64: write_fill_value<int64_t>(ctx, value); break;
      case DType::kBool: write_fill_value<bool>(ctx, value); break;
    }
    portable::ConstantPadParams params;
    params.pad_length = static_cast<int32_t>(pad.size());
    for (size_t i = 0; i < pad.size() && i < 2 * portable::kMaxDims; ++i) params.pad[i] = pad[i];
    params.value = value;
    run_moved_bytes(ctx, "constant_pad", params, portable::constant_pad_prepare, portable::constant_pad);
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
