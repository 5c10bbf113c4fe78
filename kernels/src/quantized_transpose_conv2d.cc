#include "cortexm/kernels/quantized_transpose_conv2d.h"

#include "cortexm/kernels/requantize.h"

namespace cortexm {

namespace {

int32_t transposed_extent(int32_t in, int32_t kernel, int32_t stride, int32_t before,
                          int32_t after, int32_t output_padding) {
  const int64_t e = (int64_t{in} - 1) * stride + kernel - before - after + output_padding;
  return e < 0 ? 0 : (e > INT32_MAX ? INT32_MAX : static_cast<int32_t>(e));
}

// Input index feeding output index `out` through tap `tap`, or -1.
inline int64_t source_index(int64_t out, int32_t tap, int32_t stride, int32_t pad, int32_t extent) {
  const int64_t full = out + pad - tap;
  if (full < 0 || full % stride != 0) return -1;
  const int64_t in = full / stride;
  return in < extent ? in : -1;
}

inline uint32_t dot(const int8_t* __restrict weights, const int16_t* __restrict column,
                    int32_t length) {
  int32_t sum = 0;
  for (int32_t i = 0; i < length; ++i) sum += column[i] * static_cast<int16_t>(weights[i]);
  return static_cast<uint32_t>(sum);
}

}  // namespace

Dims4 quantized_transpose_conv2d_output_dims(const TransposeConv2dParams& p) {
  Dims4 out;
  out.n = p.input.n;
  out.h = transposed_extent(p.input.h, p.filter.h, p.stride_h, p.padding.top, p.padding.bottom,
                            p.output_padding_h);
  out.w = transposed_extent(p.input.w, p.filter.w, p.stride_w, p.padding.left, p.padding.right,
                            p.output_padding_w);
  out.c = p.filter.n;
  return out;
}

CORTEXM_PREPARE_STEP Error quantized_transpose_conv2d_prepare(const TransposeConv2dParams& p) {
  const ConvQuantParams& q = p.quant;
  if (p.input.n < 1) return invalid("input.shape[0]", p.input.n, "must be >= 1");
  if (p.input.h < 1) return invalid("input.shape[1]", p.input.h, "must be >= 1");
  if (p.input.w < 1) return invalid("input.shape[2]", p.input.w, "must be >= 1");
  if (p.input.c < 1) return invalid("input.shape[3]", p.input.c, "must be >= 1");
  if (p.filter.n < 1) return invalid("weight.shape[0]", p.filter.n, "must be >= 1");
  if (p.filter.h < 1) return invalid("weight.shape[1]", p.filter.h, "must be >= 1");
  if (p.filter.w < 1) return invalid("weight.shape[2]", p.filter.w, "must be >= 1");
  if (p.filter.c != p.input.c)
    return invalid("weight.shape[3]", p.filter.c, "must equal input.shape[3] (groups 1)");
  // One column of int16 x int8 products stays below 2^31 in magnitude.
  if (int64_t{p.filter.h} * p.filter.w * p.filter.c > 65536)
    return invalid("weight.shape[3]", p.filter.c, "makes KH * KW * C_in exceed 65536");
  CORTEXM_RETURN_IF_ERROR(check_conv_window(p.stride_h, p.stride_w, 1, 1, p.padding.top, p.padding.left,
                                            p.padding.bottom, p.padding.right));  // dilation 1
  if (p.output_padding_h < 0 || p.output_padding_h >= p.stride_h)
    return invalid("output_padding", p.output_padding_h, "must be in [0, stride)", 0);
  if (p.output_padding_w < 0 || p.output_padding_w >= p.stride_w)
    return invalid("output_padding", p.output_padding_w, "must be in [0, stride)", 1);
  const Dims4 o = quantized_transpose_conv2d_output_dims(p);
  if (o.h < 1) return invalid("padding", p.padding.top, "leaves no output rows", 0);
  if (o.w < 1) return invalid("padding", p.padding.left, "leaves no output columns", 1);
  if (p.output.n != o.n) return invalid("output.shape[0]", p.output.n, "must equal the batch");
  if (p.output.h != o.h) return invalid("output.shape[1]", p.output.h, "must equal the computed height");
  if (p.output.w != o.w) return invalid("output.shape[2]", p.output.w, "must equal the computed width");
  if (p.output.c != o.c) return invalid("output.shape[3]", p.output.c, "must equal the output channels");
  return validate_conv_quant(q, p.filter.n);
}

size_t quantized_transpose_conv2d_scratch_size(const TransposeConv2dParams& p, Isa /*isa*/) {
  if (p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  return sizeof(int16_t) * static_cast<size_t>(p.filter.h) * p.filter.w * p.filter.c;
}

// Gathers, per output pixel, the inputs its taps read into one column laid out like a filter
// row (kh, kw, c), then takes one dot product per output channel.
void quantized_transpose_conv2d(const TransposeConv2dParams& p, const int8_t* input,
                                const int8_t* filter, const int32_t* bias, int8_t* output,
                                void* scratch) {
  const ConvQuantParams q = p.quant;  // a local copy: output stores cannot alias it
  const int32_t kh_n = p.filter.h, kw_n = p.filter.w, in_c = p.input.c, out_c = p.filter.n;
  const int32_t length = kh_n * kw_n * in_c;
  int16_t* column = static_cast<int16_t*>(scratch);
  for (int32_t n = 0; n < p.output.n; ++n) {
    const int8_t* image = input + int64_t{n} * p.input.h * p.input.w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        int16_t* c = column;
        for (int32_t kh = 0; kh < kh_n; ++kh) {
          const int64_t iy = source_index(oy, kh, p.stride_h, p.padding.top, p.input.h);
          for (int32_t kw = 0; kw < kw_n; ++kw, c += in_c) {
            const int64_t ix =
                iy < 0 ? -1 : source_index(ox, kw, p.stride_w, p.padding.left, p.input.w);
            if (ix < 0) {
              for (int32_t i = 0; i < in_c; ++i) c[i] = 0;
              continue;
            }
            const int8_t* pixel = image + (iy * p.input.w + ix) * in_c;
            for (int32_t i = 0; i < in_c; ++i)
              c[i] = static_cast<int16_t>(pixel[i] + q.input_offset);
          }
        }
        int8_t* out = output + ((int64_t{n} * p.output.h + oy) * p.output.w + ox) * out_c;
        for (int32_t oc = 0; oc < out_c; ++oc) {
          const uint32_t acc = dot(filter + int64_t{oc} * length, column, length) +
                               static_cast<uint32_t>(bias ? bias[oc] : 0);
          const int32_t scaled =
              requantize(static_cast<int32_t>(acc), q.multipliers[oc], q.shifts[oc]);
          out[oc] = static_cast<int8_t>(
              clamp(static_cast<int32_t>(static_cast<uint32_t>(scaled) +
                                         static_cast<uint32_t>(q.output_offset)),
                    q.activation_min, q.activation_max));
        }
      }
    }
  }
}

}  // namespace cortexm
