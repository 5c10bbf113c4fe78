// The params of the convolution kernels (conv2d, depthwise, transposed, the 16x8 and 16x16 conv2d): one
// encode (kernel params -> fb::Conv2dParams) and one decode (table -> kernel params) for all. Each
// kernel has only some of the table's fields: the transposed conv has no dilation but an output
// padding, the 16x8 conv no offsets, the depthwise conv a depth multiplier, the int8 conv2d a
// folded bias flag; the others keep their defaults. The shapes are not stored: they come from the tensors.
#pragma once

#include <type_traits>

#include "cortexm/kernels/quantized_conv2d.h"
#include "cortexm/kernels/quantized_conv2d_s16.h"
#include "cortexm/kernels/quantized_conv2d_s16w16.h"
#include "cortexm/kernels/quantized_depthwise_conv2d.h"
#include "cortexm/kernels/quantized_transpose_conv2d.h"
#include "program/program_generated.h"

namespace cortexm::program {

template <class P>
constexpr bool kTransposedConv = std::is_same_v<P, TransposeConv2dParams>;
template <class P>
constexpr bool kDepthwiseConv = std::is_same_v<P, DepthwiseConv2dParams>;
template <class P>
constexpr bool kPlainConv = std::is_same_v<P, Conv2dParams>;
// The 16x8 and 16x16 convs (Conv2dS16Params and its 16x16 twin) have no offsets.
template <class P>
constexpr bool kConvHasOffsets = !std::is_base_of_v<Conv2dS16Params, P>;

// Stride, dilation and padding of any convolution (a transposed one has dilation 1).
template <class P>
ConvGeometry conv_geometry(const P& p) {
  if constexpr (kTransposedConv<P>) {
    ConvGeometry g;
    g.stride_h = p.stride_h;
    g.stride_w = p.stride_w;
    g.padding = p.padding;
    return g;
  } else {
    return p.geometry;
  }
}

// Offsets, activation range and per-channel requantization of any convolution (the 16x8 conv's
// offsets are 0).
template <class P>
ConvQuantParams conv_quant(const P& p) {
  if constexpr (kConvHasOffsets<P>) {
    return p.quant;
  } else {
    ConvQuantParams q;
    q.activation_min = p.activation_min;
    q.activation_max = p.activation_max;
    q.multipliers = p.multipliers;
    q.shifts = p.shifts;
    return q;
  }
}

// The inverses: a transposed conv keeps no dilation, the 16x8 conv no offsets.
template <class P>
void set_conv_geometry(P* p, const ConvGeometry& g) {
  if constexpr (kTransposedConv<P>) {
    p->stride_h = g.stride_h;
    p->stride_w = g.stride_w;
    p->padding = g.padding;
  } else {
    p->geometry = g;
  }
}

template <class P>
void set_conv_quant(P* p, const ConvQuantParams& q) {
  if constexpr (kConvHasOffsets<P>) {
    p->quant = q;
  } else {
    p->activation_min = q.activation_min;
    p->activation_max = q.activation_max;
    p->multipliers = q.multipliers;
    p->shifts = q.shifts;
  }
}

// p.output.c multipliers and shifts.
template <class P>
flatbuffers::Offset<fb::Conv2dParams> encode_conv(flatbuffers::FlatBufferBuilder& b, const P& p) {
  const ConvGeometry g = conv_geometry(p);
  const ConvQuantParams q = conv_quant(p);
  const auto channels = static_cast<size_t>(p.output.c);
  const auto multipliers = b.CreateVector(q.multipliers, channels);
  const auto shifts = b.CreateVector(q.shifts, channels);
  fb::Conv2dParamsBuilder t(b);
  t.add_stride_h(g.stride_h);
  t.add_stride_w(g.stride_w);
  t.add_dilation_h(g.dilation_h);
  t.add_dilation_w(g.dilation_w);
  t.add_pad_top(g.padding.top);
  t.add_pad_left(g.padding.left);
  t.add_pad_bottom(g.padding.bottom);
  t.add_pad_right(g.padding.right);
  t.add_input_offset(q.input_offset);
  t.add_output_offset(q.output_offset);
  t.add_activation_min(q.activation_min);
  t.add_activation_max(q.activation_max);
  t.add_multipliers(multipliers);
  t.add_shifts(shifts);
  if constexpr (kDepthwiseConv<P>) t.add_depth_multiplier(p.depth_multiplier);
  if constexpr (kPlainConv<P>) t.add_bias_includes_input_offset(p.bias_includes_input_offset);
  if constexpr (kTransposedConv<P>) {
    t.add_output_padding_h(p.output_padding_h);
    t.add_output_padding_w(p.output_padding_w);
  }
  return t.Finish();
}

// Fills p from the table but its shapes; the multipliers and shifts point into the table (nullptr
// when absent). Fails on a field the kernel does not have that is not at its default.
template <class P>
Error decode_conv(const fb::Conv2dParams& t, P* p) {
  if constexpr (!kTransposedConv<P>) {
    if (t.output_padding_h() != 0)
      return invalid("params.output_padding_h", t.output_padding_h(), "must be 0");
    if (t.output_padding_w() != 0)
      return invalid("params.output_padding_w", t.output_padding_w(), "must be 0");
  }
  if constexpr (!kDepthwiseConv<P>) {
    if (t.depth_multiplier() != 1)
      return invalid("params.depth_multiplier", t.depth_multiplier(), "must be 1");
  }
  if constexpr (kPlainConv<P>) {
    p->bias_includes_input_offset = t.bias_includes_input_offset();
  } else if (t.bias_includes_input_offset()) {
    return invalid("params.bias_includes_input_offset", 1, "must be false (conv2d only)");
  }
  ConvGeometry g;
  g.stride_h = t.stride_h();
  g.stride_w = t.stride_w();
  g.dilation_h = t.dilation_h();
  g.dilation_w = t.dilation_w();
  g.padding = {t.pad_top(), t.pad_left(), t.pad_bottom(), t.pad_right()};
  ConvQuantParams q;
  q.input_offset = t.input_offset();
  q.output_offset = t.output_offset();
  q.activation_min = t.activation_min();
  q.activation_max = t.activation_max();
  q.multipliers = t.multipliers() ? t.multipliers()->data() : nullptr;
  q.shifts = t.shifts() ? t.shifts()->data() : nullptr;
  if constexpr (kTransposedConv<P>) {
    if (g.dilation_h != 1) return invalid("params.dilation_h", g.dilation_h, "must be 1");
    if (g.dilation_w != 1) return invalid("params.dilation_w", g.dilation_w, "must be 1");
    p->output_padding_h = t.output_padding_h();
    p->output_padding_w = t.output_padding_w();
  }
  if constexpr (kDepthwiseConv<P>) p->depth_multiplier = t.depth_multiplier();
  if constexpr (!kConvHasOffsets<P>) {
    if (q.input_offset != 0)
      return invalid("params.input_offset", q.input_offset, "must be 0 (symmetric int16)");
    if (q.output_offset != 0)
      return invalid("params.output_offset", q.output_offset, "must be 0 (symmetric int16)");
  }
  set_conv_geometry(p, g);
  set_conv_quant(p, q);
  return kOk;
}

}  // namespace cortexm::program
