"""CONV_2D and DEPTHWISE_CONV_2D -> aten.convolution.default on NCHW values (int8, or 16x8: int16
activations with zero point 0 and an int64 bias; int8 per-tensor or per-channel weights, SAME / VALID padding, dilation, depth multiplier, fused activations). SAME's
extra bottom / right row is an int8 constant_pad_nd of the input zero point, which the lowering
folds into the kernel's padding (TFLite's padded taps add nothing, as the zero point's do)."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .common import (activation_of, activation_types, bias_constant, bias_data, check_16x8_range, check_shape,
                     int8_weights, padding_of, window)
from .importer import Malformed, Unsupported, tflite_op

CONVOLUTION = "aten.convolution.default"
PAD = "aten.constant_pad_nd.default"


def _conv(ctx, op, weight_nchw, scales, zero_points, out_channels, groups, stride, dilation, padding, activation):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t = ctx.tensor(x_i)
    bias_type = activation_types(ctx, x_i, out_i, "convolutions")
    if len(x_t.shape) != 4:
        raise Unsupported(f"input rank {len(x_t.shape)} (4 expected)")
    if any(int(z) != 0 for z in zero_points):
        raise Unsupported("weights with a nonzero zero point (TFLite's int8 convolutions take symmetric weights)")
    _, h, w, _ = x_t.shape
    kh, kw = weight_nchw.shape[2], weight_nchw.shape[3]
    oh, top, bottom = window(padding, h, kh, stride[0], dilation[0])
    ow, left, right = window(padding, w, kw, stride[1], dilation[1])
    q_in = ctx.qparams(x_i)
    s_in = q_in["scales"][0]
    x = ctx.value(x_i, "nchw")
    pads = [top, left]
    if top != bottom or left != right:
        x = ctx.g.call(PAD, [x], {"pad": [left, right, top, bottom], "value": float(q_in["zero_points"][0])},
                       source=ctx.source())
        pads = [0, 0]
    x = ctx.g.call("quantized_decomposed.dequantize_per_tensor.default", [x],
                   {"scale": s_in, "zero_point": q_in["zero_points"][0], "quant_min": x.qparams["quant_min"],
                    "quant_max": x.qparams["quant_max"], "dtype": x.dtype}, source=ctx.source())
    per_channel = scales.size > 1
    weight = ctx.constant(op.inputs[1], weight_nchw, scales.tolist(), [0] * scales.size, 0 if per_channel else None,
                          "int8", -128, 127)
    inputs = [x, weight]
    bias = bias_data(ctx, op, 2, out_channels, bias_type)
    if bias_type == "INT64":
        check_16x8_range(weight_nchw, bias, s_in, scales.tolist(), ctx.qparams(out_i)["scales"][0])
    if bias is not None:
        # cortexm's lowering computes the bias scale as input scale x weight scale in double, as
        # TFLite Micro's effective scale does: equal scales make it take the integers as they are.
        inputs.append(bias_constant(ctx, op, 2, bias, [s_in * float(s) for s in scales.tolist()], bias_type))
    y = ctx.g.call(CONVOLUTION, inputs, {"stride": list(stride), "padding": pads, "dilation": list(dilation),
                                         "transposed": False, "output_padding": [0, 0], "groups": groups},
                   source=ctx.source())
    check_shape(ctx, out_i, y.shape, ctx.tensor(out_i).shape, "nchw")
    ctx.quantize_output(out_i, y, "nchw", activation)


def _input_depth(ctx) -> int:
    shape = ctx.tensor(ctx.input_index(0)).shape
    if len(shape) != 4:
        raise Malformed(f"input shape {list(shape)} (NHWC expected)")
    return shape[3]


@tflite_op("CONV_2D")
def conv_2d(ctx, op):
    o = ctx.options(S.OPTIONS_CONV2D)
    stride = (o.scalar(S.CONV2D_STRIDE_H, "int32", "stride_h"), o.scalar(S.CONV2D_STRIDE_W, "int32", "stride_w"))
    dilation = (o.scalar(S.CONV2D_DILATION_H, "int32", "dilation_h_factor", 1),
                o.scalar(S.CONV2D_DILATION_W, "int32", "dilation_w_factor", 1))
    data, scales, zps = int8_weights(ctx, ctx.input_index(1), 0)
    if data.ndim != 4:
        raise Malformed(f"filter rank {data.ndim} (OHWI expected)")
    c_in = _input_depth(ctx)
    c_out, _, _, c_per_group = data.shape
    if c_per_group < 1 or c_in % c_per_group or c_out % (c_in // c_per_group):
        raise Malformed(f"filter input depth {c_per_group} does not divide the input's {c_in} channels into groups")
    _conv(ctx, op, data.transpose(0, 3, 1, 2), scales, zps, c_out, c_in // c_per_group, stride, dilation,
          padding_of(o, S.CONV2D_PADDING), activation_of(o, S.CONV2D_ACTIVATION))


@tflite_op("DEPTHWISE_CONV_2D")
def depthwise_conv_2d(ctx, op):
    o = ctx.options(S.OPTIONS_DEPTHWISE_CONV2D)
    stride = (o.scalar(S.DW_STRIDE_H, "int32", "stride_h"), o.scalar(S.DW_STRIDE_W, "int32", "stride_w"))
    dilation = (o.scalar(S.DW_DILATION_H, "int32", "dilation_h_factor", 1),
                o.scalar(S.DW_DILATION_W, "int32", "dilation_w_factor", 1))
    data, scales, zps = int8_weights(ctx, ctx.input_index(1), 3)
    if data.ndim != 4 or data.shape[0] != 1:
        raise Malformed(f"filter shape {list(data.shape)} ([1, KH, KW, C x multiplier] expected)")
    c_in = _input_depth(ctx)
    c_out = data.shape[3]
    if c_in < 1 or c_out % c_in:
        raise Malformed(f"filter depth {c_out} is not a multiple of the input's {c_in} channels")
    multiplier = o.scalar(S.DW_DEPTH_MULTIPLIER, "int32", "depth_multiplier")
    if multiplier not in (0, c_out // c_in):
        raise Malformed(f"depth_multiplier {multiplier} is not filter depth / input depth = {c_out // c_in}")
    # [1, KH, KW, C*m] -> [C*m, 1, KH, KW]: output channel c*m + k reads input channel c, as groups = C does.
    weight = data[0].transpose(2, 0, 1)[:, None, :, :]
    _conv(ctx, op, weight, scales, zps, c_out, c_in, stride, dilation,
          padding_of(o, S.DW_PADDING), activation_of(o, S.DW_ACTIVATION))


def _transpose_padding(padding: str, out_size: int, kernel: int, stride: int) -> int:
    """The padding TFLite Micro's transpose conv crops before the first output row / column:
    ComputePaddingHeightWidth run on the transpose conv's output size (C++ truncating division)."""
    if stride < 1 or kernel < 1:
        raise Malformed(f"stride {stride} and kernel {kernel} must be >= 1")
    if padding == "SAME":
        conv_out = (out_size + stride - 1) // stride
    elif padding == "VALID":
        conv_out = int((out_size + stride - kernel) / stride)
    else:
        raise Unsupported(f"padding {padding}")
    return max((conv_out - 1) * stride + kernel - out_size, 0) // 2


@tflite_op("TRANSPOSE_CONV")
def transpose_conv(ctx, op):
    """-> aten.convolution.default with transposed = True (int8, per-tensor or per-channel weights,
    optional bias, fused activation): TFLite Micro scatters every input over its taps, crops
    `padding` rows / columns before the output and keeps the output tensor's size. The graph's
    convolution crops `padding` on both sides and adds output_padding at the end; when TFLite's
    crop after the output is larger (SAME with an odd total), an int8 slice takes the extra row."""
    o = ctx.options(S.OPTIONS_TRANSPOSE_CONV)
    stride = (o.scalar(S.TRANSPOSE_CONV_STRIDE_H, "int32", "stride_h"),
              o.scalar(S.TRANSPOSE_CONV_STRIDE_W, "int32", "stride_w"))
    padding = padding_of(o, S.TRANSPOSE_CONV_PADDING)
    activation = activation_of(o, S.TRANSPOSE_CONV_ACTIVATION)
    bias_type = o.scalar(S.TRANSPOSE_CONV_QUANTIZED_BIAS_TYPE, "int8", "quantized_bias_type", 0)
    if bias_type not in (0, 2):  # 0: the default, 2: INT32
        raise Unsupported(f"quantized_bias_type {S.TENSOR_TYPES.get(bias_type, bias_type)} (int32 is imported)")
    x_i, out_i = ctx.input_index(2), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if (x_t.type, out_t.type) != ("INT8", "INT8"):
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 transpose convolutions are imported")
    if len(x_t.shape) != 4 or len(out_t.shape) != 4:
        raise Malformed(f"input shape {list(x_t.shape)} and output shape {list(out_t.shape)} (NHWC expected)")
    shape_t = ctx.tensor(ctx.input_index(0))
    if shape_t.data is None or shape_t.data.size != 4 or shape_t.data.reshape(-1).tolist() != list(out_t.shape):
        raise Unsupported(f"output_shape tensor {op.inputs[0]} is not a constant equal to the output's shape "
                          f"{list(out_t.shape)}")
    data, scales, zps = int8_weights(ctx, ctx.input_index(1), 0)
    if data.ndim != 4:
        raise Malformed(f"filter rank {data.ndim} (OHWI expected)")
    c_out, kh, kw, c_in = data.shape
    n, h, w, c = x_t.shape
    if c != c_in or out_t.shape[3] != c_out or out_t.shape[0] != n:
        raise Malformed(f"filter shape {list(data.shape)} does not fit input {list(x_t.shape)} and output "
                        f"{list(out_t.shape)}")
    if any(int(z) != 0 for z in zps):
        raise Unsupported("weights with a nonzero zero point (TFLite's int8 transpose convolution takes "
                          "symmetric weights)")
    pads, output_padding, crop = [], [], []
    for size, out_size, k, s in ((h, out_t.shape[1], kh, stride[0]), (w, out_t.shape[2], kw, stride[1])):
        before = _transpose_padding(padding, out_size, k, s)
        extent = (size - 1) * s + k - 2 * before  # the graph's convolution output, output_padding 0
        if extent < 1 or out_size - extent >= s:
            raise Unsupported(f"output size {out_size} for input size {size}, kernel {k}, stride {s} and "
                              f"padding {before} (the scattered rows end {out_size - extent} before it)")
        pads.append(before)
        output_padding.append(max(out_size - extent, 0))
        crop.append(out_size)
    q_in = ctx.qparams(x_i)
    s_in = q_in["scales"][0]
    x = ctx.dequantized(x_i, "nchw")
    weight = ctx.constant(op.inputs[1], data.transpose(3, 0, 1, 2), scales.tolist(), [0] * scales.size,
                          1 if scales.size > 1 else None, "int8", -128, 127)
    inputs = [x, weight]
    bias = bias_data(ctx, op, 3, c_out)
    if bias is not None:
        inputs.append(bias_constant(ctx, op, 3, bias, [s_in * float(s) for s in scales.tolist()]))
    y = ctx.g.call(CONVOLUTION, inputs, {"stride": list(stride), "padding": pads, "dilation": [1, 1],
                                         "transposed": True, "output_padding": output_padding, "groups": 1},
                   source=ctx.source())
    out = ctx.quantize_output(out_i, y, "nchw", activation)
    for dim, size in ((2, crop[0]), (3, crop[1])):
        if out.shape[dim] != size:
            out = ctx.g.call("aten.slice_copy.Tensor", [out], {"dim": dim, "start": 0, "end": size, "step": 1},
                             source=ctx.source())
    check_shape(ctx, out_i, out.shape, out_t.shape, "nchw")
    ctx.set_value(out_i, out, "nchw")
