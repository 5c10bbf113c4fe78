"""FULLY_CONNECTED -> aten.linear.default on [batch, K] (a view_copy flattens the input as TFLite
does; keep_num_dims keeps its leading dims), int8 weights per tensor or per channel, int32 bias,
fused activations.

Per-tensor weights: TFLite Micro's effective scale is double(float32(s_in * s_w)) / s_out, the
product rounded to float32 first (GetQuantizedConvolutionMultipler), where cortexm's lowering
computes s_in * s_w in double. The weight's graph scale is the double w nearest s_w with
s_in * w == float32(s_in * s_w) exactly, so the lowering computes TFLite's number; the bias is at
that product. Per-channel weights use double products in both."""

from __future__ import annotations

import math

import numpy as np

from . import schema as S
from .common import activation_of, bias_constant, int32_bias, int8_weights
from .importer import Unsupported, tflite_op

VIEW = "aten.view_copy.default"


def product_exact_scale(s_in: float, s_w: float) -> float | None:
    """A double w near s_w with s_in * w (in double) equal to float32(s_in * s_w), else None."""
    target = float(np.float32(s_in) * np.float32(s_w))
    w = target / s_in
    for _ in range(4):
        if s_in * w == target:
            return w
        w = math.nextafter(w, math.inf if s_in * w < target else -math.inf)
    return None


@tflite_op("FULLY_CONNECTED")
def fully_connected(ctx, op):
    o = ctx.options(S.OPTIONS_FULLY_CONNECTED)
    if o.scalar(S.FC_WEIGHTS_FORMAT, "int8", "weights_format") != 0:
        raise Unsupported("weights_format is not DEFAULT (shuffled weights are not imported)")
    keep_num_dims = o.scalar(S.FC_KEEP_NUM_DIMS, "bool", "keep_num_dims", False)
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != "INT8" or out_t.type != "INT8":
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 fully connected layers are imported")
    data, scales, zps = int8_weights(ctx, ctx.input_index(1), 0)
    if data.ndim != 2:
        raise Unsupported(f"weights rank {data.ndim} ([N, K] expected)")
    n, k = data.shape
    numel = int(np.prod(x_t.shape)) if x_t.shape else 1
    if k < 1 or numel % k:
        raise Unsupported(f"input of {numel} elements is not a whole number of rows of K = {k}")
    batch = numel // k
    q_in = ctx.qparams(x_i)
    s_in = q_in["scales"][0]
    if scales.size == 1:
        w_scale = product_exact_scale(s_in, float(scales[0]))
        if w_scale is None:
            raise Unsupported(f"no double weight scale near {float(scales[0])!r} makes s_in * s_w equal TFLite's "
                              "float32 product")
        w_scales, bias_scales = [w_scale], [s_in * w_scale]
        if int(zps[0]) < -128 or int(zps[0]) > 127:
            raise Unsupported(f"weight zero point {int(zps[0])} outside int8")
        w_zps = [int(zps[0])]
    else:
        if any(int(z) != 0 for z in zps):
            raise Unsupported("per-channel weights with a nonzero zero point")
        w_scales = [float(s) for s in scales.tolist()]
        bias_scales = [s_in * s for s in w_scales]
        w_zps = [0] * n
    x = ctx.value(x_i, "file")
    if list(x.shape) != [batch, k]:
        x = ctx.g.call(VIEW, [x], {"size": [batch, k]}, source=ctx.source())
    q = x.qparams
    x = ctx.g.call("quantized_decomposed.dequantize_per_tensor.default", [x],
                   {"scale": s_in, "zero_point": q["zero_points"][0], "quant_min": q["quant_min"],
                    "quant_max": q["quant_max"], "dtype": "int8"}, source=ctx.source())
    weight = ctx.constant(op.inputs[1], data, w_scales, w_zps, None if len(w_scales) == 1 else 0, "int8", -128, 127)
    inputs = [x, weight]
    bias = int32_bias(ctx, op, 2, n)
    if bias is not None:
        inputs.append(bias_constant(ctx, op, 2, bias, bias_scales))
    y = ctx.g.call("aten.linear.default", inputs, {}, source=ctx.source())
    out = ctx.quantize_output(out_i, y, "file", activation_of(o, S.FC_ACTIVATION))
    want = list(out_t.shape)
    expected = list(x_t.shape[:-1]) + [n] if keep_num_dims else [batch, n]
    if int(np.prod(want)) != batch * n or (want != expected and keep_num_dims):
        raise Unsupported(f"output shape {want} is not {expected}")
    if want != [batch, n]:
        ctx.set_value(out_i, ctx.g.call(VIEW, [out], {"size": want}, source=ctx.source()))
