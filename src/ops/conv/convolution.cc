// aten.convolution.default: float32 1-D (NCW) and 2-D (NCHW) convolution with groups, dilation,
// padding and optional bias (portable::convolution_f32; a program's FloatConvolution); transposed
// (weight [C_in, C_out / groups, KH, KW], output_padding) as torch's conv_transpose, on the host
// only: the portable kernels have no transposed convolution.
#include "cortexm/kernels/conv_params.h"
#include "cortexm/portable/convolution.h"
#include "ops/portable_call.h"
#include "ops/op_util.h"
#include "ops/conv/runtime/float_convolution_codec.h"

namespace cortexm::ops {

namespace {

struct ConvShape {
  int64_t n, c_in, h, w, c_out, kh, kw, oh, ow, groups;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  int64_t out_pad_h = 0, out_pad_w = 0;
};

// 1-D convolutions are computed as 2-D with H = 1.
ConvShape conv_shape(const OpArgs& args, const TensorInfo& input, const TensorInfo& weight) {
  const bool one_d = input.rank() == 3;
  auto pair = [&](const char* attr, int64_t one_d_h, int64_t* h, int64_t* w) {
    const auto& v = args.ints(attr);
    if (!conv_spatial_pair(v.data(), v.size(), one_d, one_d_h, h, w))
      args.fail("attribute '" + std::string(attr) + "' has " + std::to_string(v.size()) +
                " values, expected 1 or " + std::to_string(one_d ? 1 : 2));
  };
  ConvShape s{};
  const bool transposed = args.b("transposed");
  s.n = input.shape[0];
  s.c_in = input.shape[1];
  s.h = one_d ? 1 : input.shape[2];
  s.w = input.shape[one_d ? 2 : 3];
  s.groups = args.i("groups");
  if (s.groups < 1) args.fail("groups = " + std::to_string(s.groups) + " must be >= 1");
  s.c_out = transposed ? weight.shape[1] * s.groups : weight.shape[0];
  s.kh = one_d ? 1 : weight.shape[2];
  s.kw = weight.shape[one_d ? 2 : 3];
  pair("stride", 1, &s.stride_h, &s.stride_w);
  pair("padding", 0, &s.pad_h, &s.pad_w);
  pair("dilation", 1, &s.dil_h, &s.dil_w);
  if (s.c_in % s.groups || s.c_out % s.groups)
    args.fail("groups = " + std::to_string(s.groups) + " must divide in channels " +
              std::to_string(s.c_in) + " and out channels " + std::to_string(s.c_out));
  if (transposed) {
    if (weight.shape[0] != s.c_in)
      args.fail("transposed weight " + shape_to_string(weight.shape) + " expects " +
                std::to_string(weight.shape[0]) + " input channels, input has " +
                std::to_string(s.c_in));
  } else if (weight.shape[1] * s.groups != s.c_in) {
    args.fail("weight " + shape_to_string(weight.shape) + " expects " +
              std::to_string(weight.shape[1] * s.groups) + " input channels, input has " +
              std::to_string(s.c_in));
  }
  const Error window =
      check_conv_window(s.stride_h, s.stride_w, s.dil_h, s.dil_w, s.pad_h, s.pad_w, s.pad_h, s.pad_w);
  if (!window.ok()) args.fail(std::string(window.argument) + " " + window.requirement);
  if (transposed) {
    pair("output_padding", 0, &s.out_pad_h, &s.out_pad_w);
    if (s.out_pad_h < 0 || s.out_pad_w < 0 ||
        (s.out_pad_h >= s.stride_h && s.out_pad_h >= s.dil_h) ||
        (s.out_pad_w >= s.stride_w && s.out_pad_w >= s.dil_w))
      args.fail("output_padding must be >= 0 and smaller than stride or dilation");
    s.oh = (s.h - 1) * s.stride_h - 2 * s.pad_h + s.dil_h * (s.kh - 1) + s.out_pad_h + 1;
    s.ow = (s.w - 1) * s.stride_w - 2 * s.pad_w + s.dil_w * (s.kw - 1) + s.out_pad_w + 1;
    if (s.oh < 1 || s.ow < 1)
      args.fail("padding leaves an empty output for input " + shape_to_string(input.shape));
    return s;
  }
  s.oh = (s.h + 2 * s.pad_h - s.dil_h * (s.kh - 1) - 1) / s.stride_h + 1;
  s.ow = (s.w + 2 * s.pad_w - s.dil_w * (s.kw - 1) - 1) / s.stride_w + 1;
  if (s.h + 2 * s.pad_h < s.dil_h * (s.kh - 1) + 1 || s.w + 2 * s.pad_w < s.dil_w * (s.kw - 1) + 1)
    args.fail("input " + shape_to_string(input.shape) + " is smaller than the dilated kernel");
  return s;
}

std::vector<TensorInfo> infer(const InferContext& ctx) {
  require_rank(ctx, 0, {3, 4});
  require_dtype(ctx, 0, {DType::kFloat32});
  require_dtype(ctx, 1, {DType::kFloat32});
  const TensorInfo& input = ctx.input(0);
  const TensorInfo& weight = ctx.input(1);
  if (weight.rank() != input.rank())
    ctx.fail("weight " + shape_to_string(weight.shape) + " must have the input's rank " +
             std::to_string(input.rank()));
  const ConvShape s = conv_shape(ctx, input, weight);
  if (ctx.has_input(2)) {
    require_dtype(ctx, 2, {DType::kFloat32});
    if (ctx.input(2).shape != std::vector<int64_t>{s.c_out})
      ctx.fail("bias " + shape_to_string(ctx.input(2).shape) + " must be [" + std::to_string(s.c_out) + "]");
  }
  if (input.rank() == 3) return {make_info(DType::kFloat32, {s.n, s.c_out, s.ow})};
  return {make_info(DType::kFloat32, {s.n, s.c_out, s.oh, s.ow})};
}

// Scatters every input pixel times every tap into the output (products summed in float32).
void transposed_kernel(const KernelContext& ctx, const ConvShape& s) {
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  float* y = ctx.output().data<float>();
  const int64_t cin_g = s.c_in / s.groups, cout_g = s.c_out / s.groups;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oc = 0; oc < s.c_out; ++oc)
      for (int64_t i = 0; i < s.oh * s.ow; ++i)
        y[(n * s.c_out + oc) * s.oh * s.ow + i] = bias ? bias[oc] : 0.0f;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t ic = 0; ic < s.c_in; ++ic) {
      const int64_t g = ic / cin_g;
      for (int64_t iy = 0; iy < s.h; ++iy)
        for (int64_t ix = 0; ix < s.w; ++ix) {
          const float xv = x[((n * s.c_in + ic) * s.h + iy) * s.w + ix];
          for (int64_t j = 0; j < cout_g; ++j) {
            const int64_t oc = g * cout_g + j;
            float* out = y + (n * s.c_out + oc) * s.oh * s.ow;
            for (int64_t ky = 0; ky < s.kh; ++ky) {
              const int64_t oy = iy * s.stride_h + ky * s.dil_h - s.pad_h;
              if (oy < 0 || oy >= s.oh) continue;
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t ox = ix * s.stride_w + kx * s.dil_w - s.pad_w;
                if (ox < 0 || ox >= s.ow) continue;
                out[oy * s.ow + ox] += xv * w[((ic * cout_g + j) * s.kh + ky) * s.kw + kx];
              }
            }
          }
        }
    }
}

// The portable kernel's parameters of a convolution that is not transposed.
portable::ConvolutionParams portable_params(const OpArgs& args, const TensorInfo& input,
                                            const TensorInfo& weight) {
  const ConvShape s = conv_shape(args, input, weight);
  portable::ConvolutionParams params;
  params.input = portable_shape(args, input.shape, "input");
  params.weight = portable_shape(args, weight.shape, "weight");
  params.stride[0] = s.stride_h, params.stride[1] = s.stride_w;
  params.padding[0] = s.pad_h, params.padding[1] = s.pad_w;
  params.dilation[0] = s.dil_h, params.dilation[1] = s.dil_w;
  params.groups = s.groups;
  return params;
}

void kernel(const KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const Tensor& weight = ctx.input(1);
  if (ctx.b("transposed")) return transposed_kernel(ctx, conv_shape(ctx, input.info(), weight.info()));
  const portable::ConvolutionParams params = portable_params(ctx, input.info(), weight.info());
  check_portable(ctx, "convolution", portable::convolution_prepare(params));
  portable::convolution_f32(params, input.data<float>(), weight.data<float>(),
                            ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                            ctx.output().data<float>());
}

EncodedOp encode(program::ParamsBuilder& b, const NodeContext& node) {
  if (node.b("transposed"))
    node.fail("a transposed convolution has no float kernel in a program (the portable kernels have "
              "none): quantize it in int8 (precision='int8'; int16_activations names the values that need 16 "
              "bits) so cortexm.lower runs it as quantized_transpose_conv2d");
  flatbuffers::Offset<fb::FloatConvolutionParams> table;
  if (!program::encode_float_convolution(b.fbb(), portable_params(node, node.input(0), node.input(1)), &table))
    node.fail("stride, padding, dilation or groups does not fit a program's int32");
  return program::encoded(fb::KernelId_FloatConvolution, table);
}

}  // namespace

void register_aten_convolution(OpRegistry& registry) {
  OpSchema s;
  s.name = "aten.convolution.default";
  s.inputs = {{"input"}, {"weight"}, {"bias", true}};
  s.attrs = {{"stride", AttrKind::kInts},
             {"padding", AttrKind::kInts},
             {"dilation", AttrKind::kInts},
             {"transposed", AttrKind::kBool, false, AttrValue(false)},
             {"output_padding", AttrKind::kInts, false, AttrValue(std::vector<int64_t>{0})},
             {"groups", AttrKind::kInt, false, AttrValue(int64_t{1})}};
  s.infer = infer;
  s.kernel = kernel;
  s.encode = encode;
  registry.add(std::move(s));
}

}  // namespace cortexm::ops
