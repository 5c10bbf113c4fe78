#include "cortexm/portable/convolution.h"

namespace cortexm::portable {

namespace {

struct ConvGeometry {
  int64_t n, c_in, h, w, c_out, kh, kw, oh, ow, groups;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};

// 1-D convolutions run as 2-D with H = 1.
ConvGeometry geometry(const ConvolutionParams& p) {
  const bool one_d = p.input.rank == 3;
  ConvGeometry g;
  g.n = p.input.dims[0];
  g.c_in = p.input.dims[1];
  g.h = one_d ? 1 : p.input.dims[2];
  g.w = p.input.dims[one_d ? 2 : 3];
  g.c_out = p.weight.dims[0];
  g.kh = one_d ? 1 : p.weight.dims[2];
  g.kw = p.weight.dims[one_d ? 2 : 3];
  g.groups = p.groups;
  g.stride_h = one_d ? 1 : p.stride[0];
  g.stride_w = p.stride[1];
  g.pad_h = one_d ? 0 : p.padding[0];
  g.pad_w = p.padding[1];
  g.dil_h = one_d ? 1 : p.dilation[0];
  g.dil_w = p.dilation[1];
  g.oh = (g.h + 2 * g.pad_h - g.dil_h * (g.kh - 1) - 1) / g.stride_h + 1;
  g.ow = (g.w + 2 * g.pad_w - g.dil_w * (g.kw - 1) - 1) / g.stride_w + 1;
  return g;
}

}  // namespace

Error convolution_prepare(const ConvolutionParams& p, Shape* output) {
  CORTEXM_RETURN_IF_ERROR(check_shape(p.input, "input"));
  CORTEXM_RETURN_IF_ERROR(check_shape(p.weight, "weight"));
  if (p.input.rank != 3 && p.input.rank != 4)
    return invalid("input.rank", p.input.rank, "must be 3 (NCW) or 4 (NCHW)");
  if (p.weight.rank != p.input.rank) return invalid("weight.rank", p.weight.rank, "must equal the input rank");
  constexpr int64_t kLimit = int64_t{1} << 30;
  for (int i = 0; i < 2; ++i) {
    if (p.stride[i] < 1 || p.stride[i] > kLimit) return invalid("stride", p.stride[i], "must be in [1, 2^30]", i);
    if (p.dilation[i] < 1 || p.dilation[i] > kLimit) return invalid("dilation", p.dilation[i], "must be in [1, 2^30]", i);
    if (p.padding[i] < 0 || p.padding[i] > kLimit) return invalid("padding", p.padding[i], "must be in [0, 2^30]", i);
  }
  for (int d = 1; d < p.weight.rank; ++d)
    if (p.weight.dims[d] < 1) return invalid("weight.shape", p.weight.dims[d], "must be >= 1", d);
  const int64_t c_in = p.input.dims[1], c_out = p.weight.dims[0];
  if (p.groups < 1 || p.groups > kLimit) return invalid("groups", p.groups, "must be in [1, 2^30]");
  if (c_in % p.groups != 0) return invalid("groups", p.groups, "must divide the input channels");
  if (c_out % p.groups != 0) return invalid("groups", p.groups, "must divide the output channels");
  if (p.weight.dims[1] * p.groups != c_in)
    return invalid("weight.shape", p.weight.dims[1], "must be input channels / groups", 1);
  const ConvGeometry g = geometry(p);
  if (g.h + 2 * g.pad_h < g.dil_h * (g.kh - 1) + 1)
    return invalid("input.shape", g.h, "is smaller than the dilated kernel", 2);
  if (g.w + 2 * g.pad_w < g.dil_w * (g.kw - 1) + 1)
    return invalid("input.shape", g.w, "is smaller than the dilated kernel", p.input.rank - 1);
  Shape out;
  out.rank = p.input.rank;
  out.dims[0] = g.n;
  out.dims[1] = g.c_out;
  if (out.rank == 4) out.dims[2] = g.oh;
  out.dims[out.rank - 1] = g.ow;
  CORTEXM_RETURN_IF_ERROR(check_shape(out, "output"));
  if (output) *output = out;
  return kOk;
}

void convolution_f32(const ConvolutionParams& p, const float* x, const float* w, const float* bias,
                     float* y) {
  const ConvGeometry s = geometry(p);
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t oc = 0; oc < s.c_out; ++oc) {
      float* out = y + ((n * s.c_out + oc) * s.oh) * s.ow;
      const float b = bias ? bias[oc] : 0.0f;
      for (int64_t i = 0; i < s.oh * s.ow; ++i) out[i] = b;
      const int64_t g = oc / cout_g;
      for (int64_t ic = 0; ic < cin_g; ++ic) {
        const float* in = x + ((n * s.c_in + g * cin_g + ic) * s.h) * s.w;
        for (int64_t ky = 0; ky < s.kh; ++ky) {
          for (int64_t kx = 0; kx < s.kw; ++kx) {
            const float wv = w[((oc * cin_g + ic) * s.kh + ky) * s.kw + kx];
            // Output columns whose input column lies inside the image.
            const int64_t off_x = kx * s.dil_w - s.pad_w;
            const int64_t ox_begin = off_x >= 0 ? 0 : (-off_x + s.stride_w - 1) / s.stride_w;
            int64_t ox_end = s.w - off_x <= 0 ? 0 : (s.w - off_x + s.stride_w - 1) / s.stride_w;
            if (ox_end > s.ow) ox_end = s.ow;
            for (int64_t oy = 0; oy < s.oh; ++oy) {
              const int64_t iy = oy * s.stride_h + ky * s.dil_h - s.pad_h;
              if (iy < 0 || iy >= s.h) continue;
              const float* row = in + iy * s.w;
              float* orow = out + oy * s.ow;
              if (s.stride_w == 1) {
                for (int64_t ox = ox_begin; ox < ox_end; ++ox) orow[ox] += wv * row[ox + off_x];
              } else {
                for (int64_t ox = ox_begin; ox < ox_end; ++ox)
                  orow[ox] += wv * row[ox * s.stride_w + off_x];
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace cortexm::portable
