#include "cortexm/portable/constant_pad.h"

#include <string.h>

namespace cortexm::portable {

namespace {

// (before, after) of dim d.
void dim_pads(const ConstantPadParams& p, int d, int64_t* before, int64_t* after) {
  const int i = p.input.rank - 1 - d;  // pair index, counted from the last dim
  *before = 2 * i < p.pad_length ? p.pad[2 * i] : 0;
  *after = 2 * i < p.pad_length ? p.pad[2 * i + 1] : 0;
}

Shape output_shape(const ConstantPadParams& p) {
  Shape out = p.input;
  for (int d = 0; d < p.input.rank; ++d) {
    int64_t before, after;
    dim_pads(p, d, &before, &after);
    out.dims[d] += before + after;
  }
  return out;
}

template <typename T>
void fill(T* out, int64_t n, const void* value) {
  T v;
  memcpy(&v, value, sizeof(T));
  for (int64_t i = 0; i < n; ++i) out[i] = v;
}

}  // namespace

Error constant_pad_prepare(const ConstantPadParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "self"));
  CORTEXM_RETURN_IF_ERROR(check_element_size(p.element_size));
  if (p.pad_length < 0 || p.pad_length % 2 != 0)
    return invalid("pad.length", p.pad_length, "must be even and >= 0");
  if (p.pad_length > 2 * p.input.rank)
    return invalid("pad.length", p.pad_length, "must be at most twice the input rank");
  if (p.value == nullptr) return invalid("value", 0, "must point at one element");
  for (int i = 0; i < p.pad_length; ++i)
    if (p.pad[i] < -(int64_t{1} << 40) || p.pad[i] > (int64_t{1} << 40))
      return invalid("pad", p.pad[i], "is too large", i);
  for (int d = 0; d < p.input.rank; ++d) {
    int64_t before, after;
    dim_pads(p, d, &before, &after);
    const int64_t crops = (before < 0 ? before : 0) + (after < 0 ? after : 0);
    if (p.input.dims[d] + crops < 0)
      return invalid("pad", before < 0 ? before : after, "crops the dim to a negative size",
                     2 * (p.input.rank - 1 - d));
  }
  const Shape out = output_shape(p);
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

void constant_pad(const ConstantPadParams& p, const void* input, void* output) {
  const Shape out_shape = output_shape(p);
  const int64_t n = out_shape.numel();
  if (n == 0) return;
  switch (p.element_size) {
    case 1: fill(static_cast<uint8_t*>(output), n, p.value); break;
    case 2: fill(static_cast<uint16_t*>(output), n, p.value); break;
    case 4: fill(static_cast<uint32_t*>(output), n, p.value); break;
    default: fill(static_cast<uint64_t*>(output), n, p.value); break;
  }
  const int rank = p.input.rank;
  if (p.input.numel() == 0) return;
  if (rank == 0) {
    memcpy(output, input, static_cast<size_t>(p.element_size));
    return;
  }
  // The output region that comes from the input: count[d] entries from out_begin[d], read from
  // in_begin[d].
  int64_t count[kMaxDims], in_off = 0, out_off = 0;
  int64_t in_strides[kMaxDims], out_strides[kMaxDims];
  int64_t is = p.element_size, os = p.element_size;
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[d] = is;
    out_strides[d] = os;
    is *= p.input.dims[d];
    os *= out_shape.dims[d];
  }
  for (int d = 0; d < rank; ++d) {
    int64_t before, after;
    dim_pads(p, d, &before, &after);
    const int64_t out_begin = before > 0 ? before : 0;
    const int64_t out_end_in = p.input.dims[d] + before;
    const int64_t out_end = out_shape.dims[d] < out_end_in ? out_shape.dims[d] : out_end_in;
    if (out_end <= out_begin) return;
    count[d] = out_end - out_begin;
    in_off += (out_begin - before) * in_strides[d];
    out_off += out_begin * out_strides[d];
  }
  const uint8_t* src = static_cast<const uint8_t*>(input);
  uint8_t* dst = static_cast<uint8_t*>(output);
  const size_t row = static_cast<size_t>(count[rank - 1] * p.element_size);
  int64_t index[kMaxDims] = {0, 0, 0, 0, 0, 0};
  while (true) {
    memcpy(dst + out_off, src + in_off, row);
    int d = rank - 2;
    for (; d >= 0; --d) {
      in_off += in_strides[d];
      out_off += out_strides[d];
      if (++index[d] < count[d]) break;
      in_off -= in_strides[d] * count[d];
      out_off -= out_strides[d] * count[d];
      index[d] = 0;
    }
    if (d < 0) break;
  }
}

}  // namespace cortexm::portable
