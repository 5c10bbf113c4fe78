"""Helpers the family modules share: TFLite's padding arithmetic and reading weight / bias
constants with their qparams."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .importer import Malformed, Unsupported


def window(padding: str, size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int, int]:
    """(output size, padding before, padding after) as TFLite's ComputePaddingHeightWidth."""
    if stride < 1 or dilation < 1 or kernel < 1:
        raise Malformed(f"stride {stride}, dilation {dilation} and kernel {kernel} must be >= 1")
    effective = (kernel - 1) * dilation + 1
    if padding == "SAME":
        out = (size + stride - 1) // stride
    elif padding == "VALID":
        out = (size - effective + stride) // stride
    else:
        raise Unsupported(f"padding {padding}")
    if out < 1:
        raise Malformed(f"a {kernel}-tap window (dilation {dilation}) over {size} gives no output")
    total = max((out - 1) * stride + effective - size, 0)
    return out, total // 2, total - total // 2


def padding_of(options, fid: int) -> str:
    value = options.scalar(fid, "int8", "padding")
    if value not in S.PADDING:
        raise Unsupported(f"padding = {value} (SAME = 0 or VALID = 1)")
    return S.PADDING[value]


def activation_of(options, fid: int) -> str:
    value = options.scalar(fid, "int8", "fused_activation_function")
    return S.ACTIVATIONS.get(value, f"ACTIVATION_{value}")


def int8_weights(ctx, i: int, channels_axis: int):
    """(data, scales float32 array, zero points) of the int8 constant tensor i; scales has one entry
    (per tensor) or one per index along channels_axis."""
    t = ctx.tensor(i)
    if t.data is None:
        raise Unsupported(f"weights tensor {i} '{t.name}' is not a constant")
    if t.type != "INT8":
        raise Unsupported(f"weights tensor {i} '{t.name}' is {t.type} (int8 weights are imported)")
    if t.quant is None:
        raise Unsupported(f"weights tensor {i} '{t.name}' has no quantization")
    q = t.quant
    if not q.per_tensor and q.axis != channels_axis:
        raise Unsupported(f"weights tensor {i} '{t.name}' is quantized along dimension {q.axis}, "
                          f"not the output channels' {channels_axis}")
    for s in q.scales.tolist():
        if not (np.isfinite(s) and s > 0):
            raise Unsupported(f"weights tensor {i} '{t.name}' has scale {s} (must be finite and > 0)")
    return t.data, q.scales, q.zero_points


ACTIVATION_TYPES = {("INT8", "INT8"): "INT32", ("INT16", "INT16"): "INT64"}  # (input, output) -> bias type


def activation_types(ctx, x_i: int, out_i: int, what: str) -> str:
    """The bias type for the input / output types of a convolution or fully connected layer: int8
    (int32 bias) or TFLite's 16x8 (int16 activations, int8 weights, int64 bias)."""
    types = (ctx.tensor(x_i).type, ctx.tensor(out_i).type)
    if types not in ACTIVATION_TYPES:
        raise Unsupported(f"input {types[0]} and output {types[1]}: int8 and 16x8 (int16) {what} are imported")
    if types[0] == "INT16":
        for i in (x_i, out_i):
            if ctx.qparams(i)["zero_points"][0] != 0:
                raise Unsupported(f"int16 tensor {i} has zero point {ctx.qparams(i)['zero_points'][0]} (16x8 takes 0)")
    return ACTIVATION_TYPES[types]


def bias_data(ctx, op, k: int, channels: int, bias_type: str = "INT32"):
    """The bias data of operator input k ([channels], int32, or int64 for 16x8), or None when absent."""
    if k >= len(op.inputs) or op.inputs[k] < 0:
        return None
    t = ctx.tensor(op.inputs[k])
    allowed = ("INT32", "INT64") if bias_type == "INT64" else ("INT32",)
    if t.data is None or t.type not in allowed:
        raise Unsupported(f"bias tensor {op.inputs[k]} '{t.name}' is {t.type}"
                          f"{'' if t.data is not None else ' and not constant'} (an {bias_type.lower()} constant "
                          "is imported)")
    if t.data.size != channels:
        raise Malformed(f"bias tensor {op.inputs[k]} '{t.name}' has {t.data.size} elements for {channels} channels")
    return t.data.reshape(channels)


def bias_constant(ctx, op, k: int, bias: np.ndarray, scales: list, bias_type: str = "INT32"):
    """bias behind a dequantize at scales (one or one per channel): the integers TFLite adds, at
    the scale cortexm's lowering computes them at, so it takes them as they are."""
    axis = None if len(scales) == 1 else 0
    bits = 64 if bias_type == "INT64" else 32
    return ctx.constant(op.inputs[k], bias.astype(f"int{bits}"), scales, [0] * len(scales), axis, f"int{bits}",
                        -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def check_shape(ctx, i: int, got, want_file_shape, layout: str):
    """The graph value's shape must be output tensor i's (in layout)."""
    want = list(want_file_shape)
    if layout == "nchw" and len(want) == 4:
        want = [want[0], want[3], want[1], want[2]]
    if list(got) != want:
        raise Malformed(f"output tensor {i} has shape {list(want_file_shape)} where the operator computes "
                          f"{list(got)} ({layout})")


def check_16x8_range(weights_by_channel: np.ndarray, bias, s_in: float, weight_scales, s_out: float) -> None:
    """16x8: TFLite Micro requantizes the int64 sum and casts the result to int32 (wrapping) where
    cortexm's kernels saturate; refuse a layer whose largest |sum| (every input at -32768, the bias)
    could requantize past int32."""
    magnitude = np.abs(weights_by_channel.astype(np.int64)).reshape(weights_by_channel.shape[0], -1).sum(axis=1)
    sums = magnitude * 32768 + (np.abs(bias.astype(np.int64)) if bias is not None else 0)
    scales = np.broadcast_to(np.asarray(weight_scales, np.float64), sums.shape)
    worst = float(np.max(sums * (s_in * scales / s_out))) if sums.size else 0.0
    if worst >= 2.0 ** 31:
        raise Unsupported(f"16x8 sums can requantize to {worst:.3g}, past int32 (TFLite Micro wraps there, cortexm "
                          "saturates)")
