// aten.constant_pad_nd.default: pads with `value`; `pad` holds (left, right) pairs from the last
// dim backwards, as torch; negative pads crop. Any dtype: for integer dtypes `value` is a raw
// stored value, truncated toward zero like torch (it must fit the dtype); per-tensor qparams
// pass through.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ops/op_util.h"

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
    if (!(value >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
          value <= static_cast<double>(std::numeric_limits<T>::max())))
      args.fail("attribute 'value' = " + std::to_string(value) + " does not fit the input's dtype");
    return static_cast<T>(value);
  }
}

template <typename T>
void pad(const OpArgs& args, const Tensor& input, Tensor& output,
         const std::vector<std::pair<int64_t, int64_t>>& pads) {
  const T value = fill_value<T>(args, args.f("value"));
  T* out = output.data<T>();
  const T* in = input.data<T>();
  const int64_t n = output.numel();
  for (int64_t i = 0; i < n; ++i) out[i] = value;
  const auto& in_shape = input.shape();
  const auto& out_shape = output.shape();
  const int64_t rank = static_cast<int64_t>(in_shape.size());
  if (n == 0 || input.numel() == 0) return;
  if (rank == 0) {
    out[0] = in[0];
    return;
  }
  // The region of the output that comes from the input: count[d] elements from out_begin[d],
  // read from in_begin[d].
  std::vector<int64_t> count(rank), in_begin(rank), out_begin(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t left = pads[d].first;
    out_begin[d] = std::max<int64_t>(0, left);
    const int64_t out_end = std::min(out_shape[d], in_shape[d] + left);
    if (out_end <= out_begin[d]) return;
    count[d] = out_end - out_begin[d];
    in_begin[d] = out_begin[d] - left;
  }
  const std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  const std::vector<int64_t> out_strides = contiguous_strides(out_shape);
  int64_t in_off = 0, out_off = 0;
  for (int64_t d = 0; d < rank; ++d) {
    in_off += in_begin[d] * in_strides[d];
    out_off += out_begin[d] * out_strides[d];
  }
  const size_t row = static_cast<size_t>(count[rank - 1]) * sizeof(T);
  std::vector<int64_t> idx(rank, 0);
  while (true) {
    std::memcpy(out + out_off, in + in_off, row);
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      in_off += in_strides[d];
      out_off += out_strides[d];
      if (++idx[d] < count[d]) break;
      in_off -= in_strides[d] * count[d];
      out_off -= out_strides[d] * count[d];
      idx[d] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace

void register_aten_constant_pad_nd(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.constant_pad_nd.default";
  s.inputs = {{"self"}};
  s.attrs = {{"pad", AttrKind::kInts}, {"value", AttrKind::kFloat, false, AttrValue(0.0)}};
  s.is_data_movement = true;
  s.infer = [](const InferContext& ctx) {
    const TensorInfo& in = ctx.input(0);
    const auto pads = resolve(ctx, in.shape);
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
    TensorInfo out = make_info(in.dtype, shape);
    out.qparams = passthrough_qparams(in);
    return std::vector<TensorInfo>{out};
  };
  s.kernel = [](const KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output();
    const auto pads = resolve(ctx, in.shape());
    switch (in.dtype()) {
      case DType::kFloat32: pad<float>(ctx, in, out, pads); break;
      case DType::kInt8: pad<int8_t>(ctx, in, out, pads); break;
      case DType::kUInt8: pad<uint8_t>(ctx, in, out, pads); break;
      case DType::kInt16: pad<int16_t>(ctx, in, out, pads); break;
      case DType::kInt32: pad<int32_t>(ctx, in, out, pads); break;
      case DType::kInt64: pad<int64_t>(ctx, in, out, pads); break;
      case DType::kBool: pad<bool>(ctx, in, out, pads); break;
    }
  };
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
