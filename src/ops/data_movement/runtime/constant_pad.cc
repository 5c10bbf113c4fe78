// ConstantPad: pads (before, after) per dim with a raw stored value; negative pads crop.
#include <cstring>

#include "cortexm/portable/constant_pad.h"
#include "runtime/ops/portable_layout.h"

namespace cortexm::runtime {

namespace {

// The input part that survives the crops and the output part it lands in.
void regions(const OpContext& ctx, TensorView* src, TensorView* dst) {
  const auto* pad = ctx.op.params_as_ConstantPadParams()->pad();
  const TensorView in = ctx.input(0), out = ctx.output();
  *src = in;
  *dst = out;
  int64_t src_offset = 0, dst_offset = 0;
  for (int32_t d = 0; d < in.rank; ++d) {
    const int64_t before = pad->Get(2 * d), after = pad->Get(2 * d + 1);
    const int64_t extent = in.shape[d] + (before < 0 ? before : 0) + (after < 0 ? after : 0);
    src->shape[d] = dst->shape[d] = extent;
    src_offset += (before < 0 ? -before : 0) * in.strides[d];
    dst_offset += (before > 0 ? before : 0) * out.strides[d];
  }
  if (in.data) src->data = in.data + src_offset * static_cast<int64_t>(in.element_size());
  if (out.data) dst->data = out.data + dst_offset * static_cast<int64_t>(out.element_size());
}

template <typename T>
void fill(uint8_t* data, int64_t count, T value) {
  T* out = reinterpret_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) out[i] = value;
}

// The fill value as one element's raw bytes.
void fill_value(DType dtype, double v, uint8_t* bytes) {
  switch (dtype) {
    case DType::kFloat32: { const float x = static_cast<float>(v); std::memcpy(bytes, &x, 4); break; }
    case DType::kInt8: { const int8_t x = static_cast<int8_t>(v); std::memcpy(bytes, &x, 1); break; }
    case DType::kInt16: { const int16_t x = static_cast<int16_t>(v); std::memcpy(bytes, &x, 2); break; }
    case DType::kInt32: { const int32_t x = static_cast<int32_t>(v); std::memcpy(bytes, &x, 4); break; }
    case DType::kInt64: { const int64_t x = static_cast<int64_t>(v); std::memcpy(bytes, &x, 8); break; }
    case DType::kBool: bytes[0] = v != 0.0 ? 1 : 0; break;
    case DType::kUInt8: bytes[0] = static_cast<uint8_t>(v); break;
  }
}

// Torch's pad order (last dim first) from the per-dim pairs; value points at `bytes`.
portable::ConstantPadParams portable_params(const OpContext& ctx, uint8_t* bytes) {
  const auto* params = ctx.op.params_as_ConstantPadParams();
  const TensorView in = ctx.input(0);
  auto p = moved_bytes_params<portable::ConstantPadParams>(ctx);
  p.pad_length = 2 * in.rank;
  for (int32_t i = 0; i < in.rank; ++i) {
    const int32_t d = in.rank - 1 - i;
    p.pad[2 * i] = params->pad()->Get(2 * d);
    p.pad[2 * i + 1] = params->pad()->Get(2 * d + 1);
  }
  fill_value(in.dtype, params->value(), bytes);
  p.value = bytes;
  return p;
}

}  // namespace

static Status prepare_portable(const OpContext& ctx) {
  uint8_t bytes[8] = {};
  return check_contiguous_kernel(ctx, [&] { return portable::constant_pad_prepare(portable_params(ctx, bytes)); });
}

Status prepare_constant_pad(const OpContext& ctx) {
  const auto* params = ctx.op.params_as_ConstantPadParams();
  const TensorView in = ctx.input(0), out = ctx.output();
  CORTEXM_RETURN_IF_STATUS(require_input_dtype(ctx));
  if (in.rank != out.rank) return ctx.fail("output.rank", out.rank, "must be the input's");
  const int64_t count = params->pad() ? params->pad()->size() : 0;
  if (count != 2 * in.rank) return ctx.fail("params.pad.size", count, "must be 2 * input rank");
  if (const int64_t m = misalignment(params->pad()))
    return ctx.fail("params.pad.address % 8", m, "must be 0 (malformed file)");
  for (int32_t d = 0; d < in.rank; ++d) {
    const int64_t before = params->pad()->Get(2 * d), after = params->pad()->Get(2 * d + 1);
    if (before < -in.shape[d] || after < -in.shape[d] || before > INT32_MAX || after > INT32_MAX)
      return ctx.fail("params.pad", before, "is out of range", 2 * d);
    if (in.shape[d] + (before < 0 ? before : 0) + (after < 0 ? after : 0) < 0)
      return ctx.fail("params.pad", before, "crops the dim to a negative size", 2 * d);
    if (out.shape[d] != in.shape[d] + before + after)
      return ctx.fail("output.shape", out.shape[d], "must be input + pad before + pad after", d);
  }
  const double v = params->value();
  double lo = 0, hi = 0;
  switch (in.dtype) {
    case DType::kFloat32: return prepare_portable(ctx);
    case DType::kInt8: lo = -128; hi = 127; break;
    case DType::kInt16: lo = -32768; hi = 32767; break;
    case DType::kInt32: lo = -2147483648.0; hi = 2147483647.0; break;
    case DType::kUInt8: lo = 0; hi = 255; break;
    case DType::kBool: return prepare_portable(ctx);
    case DType::kInt64: lo = -9.2e18; hi = 9.2e18; break;
  }
  // NaN, inf and 1e300 have no int64 value: the host message reads the value from the file.
  if (!(v >= lo && v <= hi)) return ctx.fail("params.value", 0, "does not fit the tensor's dtype");
  return prepare_portable(ctx);
}

void run_constant_pad(const OpContext& ctx) {
  if (all_contiguous(ctx)) {
    uint8_t bytes[8] = {};
    portable::constant_pad(portable_params(ctx, bytes), ctx.input(0).data, ctx.output().data);
    return;
  }
  const TensorView out = ctx.output();
  const double v = ctx.op.params_as_ConstantPadParams()->value();
  // Every output element is either padding or copied from the input: fill all, then copy.
  TensorView flat = out;
  const int64_t n = out.numel();
  switch (out.dtype) {
    case DType::kFloat32: fill<float>(flat.data, n, static_cast<float>(v)); break;
    case DType::kInt8: fill<int8_t>(flat.data, n, static_cast<int8_t>(v)); break;
    case DType::kInt16: fill<int16_t>(flat.data, n, static_cast<int16_t>(v)); break;
    case DType::kInt32: fill<int32_t>(flat.data, n, static_cast<int32_t>(v)); break;
    case DType::kInt64: fill<int64_t>(flat.data, n, static_cast<int64_t>(v)); break;
    case DType::kBool: fill<uint8_t>(flat.data, n, v != 0.0 ? 1 : 0); break;
    case DType::kUInt8: fill<uint8_t>(flat.data, n, static_cast<uint8_t>(v)); break;
  }
  TensorView src, dst;
  regions(ctx, &src, &dst);
  copy_logical(src, dst);
}

}  // namespace cortexm::runtime
