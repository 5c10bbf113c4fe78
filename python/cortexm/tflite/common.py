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


def int32_bias(ctx, op, k: int, channels: int):
    """The int32 bias data of operator input k ([channels]), or None when absent."""
    if k >= len(op.inputs) or op.inputs[k] < 0:
        return None
    t = ctx.tensor(op.inputs[k])
    if t.data is None or t.type != "INT32":
        raise Unsupported(f"bias tensor {op.inputs[k]} '{t.name}' is {t.type}"
                          f"{'' if t.data is not None else ' and not constant'} (an int32 constant is imported)")
    if t.data.size != channels:
        raise Malformed(f"bias tensor {op.inputs[k]} '{t.name}' has {t.data.size} elements for {channels} channels")
    return t.data.reshape(channels)


def bias_constant(ctx, op, k: int, bias: np.ndarray, scales: list):
    """bias (int32) behind a dequantize at scales (one or one per channel): the integers TFLite
    adds, at the scale cortexm's lowering computes them at, so it takes them as they are."""
    axis = None if len(scales) == 1 else 0
    return ctx.constant(op.inputs[k], bias.astype(np.int32), scales, [0] * len(scales), axis, "int32",
                        -(1 << 31), (1 << 31) - 1)


def check_shape(ctx, i: int, got, want_file_shape, layout: str):
    """The graph value's shape must be output tensor i's (in layout)."""
    want = list(want_file_shape)
    if layout == "nchw" and len(want) == 4:
        want = [want[0], want[3], want[1], want[2]]
    if list(got) != want:
        raise Malformed(f"output tensor {i} has shape {list(want_file_shape)} where the operator computes "
                          f"{list(got)} ({layout})")
