"""FULLY_CONNECTED -> aten.linear.default on [batch, K] (a view_copy flattens the input as TFLite
does; keep_num_dims keeps its leading dims), int8 weights per tensor or per channel, int32 bias
(16x8: int16 activations with zero point 0, an int32 or int64 bias), fused activations.

Per-tensor weights: TFLite Micro's effective scale is double(float32(s_in * s_w)) / s_out, the
product rounded to float32 first (GetQuantizedConvolutionMultipler), where cortexm's lowering
computes s_in * s_w in double. The weight's graph scale is the double w near s_w whose product
s_in * w is nearest float32(s_in * s_w) and gives TFLite's multiplier (checked); the bias is at
s_in * w, which the lowering computes the same, so it takes the integers as they are. Per-channel weights use double products in both."""

from __future__ import annotations

import math

import numpy as np

from .. import _core
from . import schema as S
from .common import activation_of, activation_types, bias_constant, bias_data, check_16x8_range, int8_weights
from .importer import Malformed, Unsupported, tflite_op

VIEW = "aten.view_copy.default"


def product_matching_scale(s_in: float, s_w: float, s_out: float) -> float | None:
    """A double w near s_w for which cortexm's multiplier of (s_in * w) / s_out is TFLite Micro's
    of double(float32(s_in * s_w)) / s_out: w with s_in * w nearest that float32 product (equal
    to it when a double hits it; otherwise one double ulp off, which the 31-bit multiplier
    absorbs unless the scale lies on a rounding boundary: checked), else None."""
    with np.errstate(over="ignore", under="ignore"):
        target = float(np.float32(s_in) * np.float32(s_w))
    if not (math.isfinite(target) and target > 0 and math.isfinite(target / s_out)):
        return None
    want = _core.quantize_multiplier(target / s_out)
    w = target / s_in
    candidates = [w]
    for direction in (math.inf, -math.inf):
        v = w
        for _ in range(3):
            v = math.nextafter(v, direction)
            candidates.append(v)
    best = min(candidates, key=lambda c: abs(s_in * c - target))
    return best if _core.quantize_multiplier((s_in * best) / s_out) == want else None


@tflite_op("FULLY_CONNECTED")
def fully_connected(ctx, op):
    o = ctx.options(S.OPTIONS_FULLY_CONNECTED)
    if o.scalar(S.FC_WEIGHTS_FORMAT, "int8", "weights_format") != 0:
        raise Unsupported("weights_format is not DEFAULT (shuffled weights are not imported)")
    keep_num_dims = o.scalar(S.FC_KEEP_NUM_DIMS, "bool", "keep_num_dims", False)
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    bias_type = activation_types(ctx, x_i, out_i, "fully connected layers")
    data, scales, zps = int8_weights(ctx, ctx.input_index(1), 0)
    if data.ndim != 2:
        raise Malformed(f"weights rank {data.ndim} ([N, K] expected)")
    n, k = data.shape
    numel = int(np.prod(x_t.shape)) if x_t.shape else 1
    if k < 1 or numel % k:
        raise Malformed(f"input of {numel} elements is not a whole number of rows of K = {k}")
    batch = numel // k
    q_in = ctx.qparams(x_i)
    s_in = q_in["scales"][0]
    if scales.size == 1:
        s_out = ctx.qparams(out_i)["scales"][0]
        w_scale = product_matching_scale(s_in, float(scales[0]), s_out)
        if w_scale is None:
            raise Unsupported(f"TFLite Micro's multiplier from float32(s_in * s_w) / s_out for scales {s_in!r}, "
                              f"{float(scales[0])!r}, {s_out!r} has no double weight scale giving it in cortexm")
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
                    "quant_max": q["quant_max"], "dtype": x.dtype}, source=ctx.source())
    weight = ctx.constant(op.inputs[1], data, w_scales, w_zps, None if len(w_scales) == 1 else 0, "int8", -128, 127)
    inputs = [x, weight]
    bias = bias_data(ctx, op, 2, n, bias_type)
    if bias_type == "INT64":
        if any(z != 0 for z in w_zps):
            raise Unsupported("16x8 weights with a nonzero zero point")
        check_16x8_range(data, bias, s_in, [float(v) for v in scales.tolist()], ctx.qparams(out_i)["scales"][0])
    if bias is not None:
        inputs.append(bias_constant(ctx, op, 2, bias, bias_scales, bias_type))
    y = ctx.g.call("aten.linear.default", inputs, {}, source=ctx.source())
    out = ctx.quantize_output(out_i, y, "file", activation_of(o, S.FC_ACTIVATION))
    want = list(out_t.shape)
    expected = list(x_t.shape[:-1]) + [n] if keep_num_dims else [batch, n]
    if int(np.prod(want)) != batch * n or (want != expected and keep_num_dims):
        raise Malformed(f"output shape {want} is not {expected}")
    if want != [batch, n]:
        ctx.set_value(out_i, ctx.g.call(VIEW, [out], {"size": want}, source=ctx.source()))


@tflite_op("BATCH_MATMUL")
def batch_matmul(ctx, op):
    """-> aten.bmm.default of two rank-3 int8 values of one batch (adj_x / adj_y as int8
    permute_copy), a constant rhs as an int8 constant. TFLite Micro's multiplier is
    double(float32(s_lhs * s_rhs)) / s_out, as FULLY_CONNECTED's: a constant rhs takes the double
    scale giving it (product_matching_scale); two activations whose scales give another multiplier
    in double (most do: float32 keeps 24 bits of the 31) are refused."""
    o = ctx.options(S.OPTIONS_BATCH_MATMUL)
    adj = (bool(o.scalar(S.BATCH_MATMUL_ADJ_X, "bool", "adj_x", False)),
           bool(o.scalar(S.BATCH_MATMUL_ADJ_Y, "bool", "adj_y", False)))
    a_i, b_i, out_i = ctx.input_index(0), ctx.input_index(1), op.outputs[0]
    types = [ctx.tensor(i).type for i in (a_i, b_i, out_i)]
    if types != ["INT8"] * 3:
        raise Unsupported(f"types {', '.join(types)}: int8 operands and output are imported")
    shapes = [list(ctx.tensor(i).shape) for i in (a_i, b_i)]
    if any(len(s) != 3 for s in shapes) or shapes[0][0] != shapes[1][0]:
        raise Unsupported(f"operand shapes {shapes[0]} and {shapes[1]} (rank 3 with one batch size is imported)")
    q_a, q_b, q_out = (ctx.qparams(i) for i in (a_i, b_i, out_i))
    s_a, s_b, s_out = q_a["scales"][0], q_b["scales"][0], q_out["scales"][0]
    with np.errstate(over="ignore", under="ignore"):
        product = float(np.float32(s_a) * np.float32(s_b))
    if ctx.tensor(b_i).data is not None:
        s_b = product_matching_scale(s_a, s_b, s_out)  # a constant carries the scale that gives it
        if s_b is None:
            raise Unsupported("TFLite Micro's multiplier from float32(s_lhs * s_rhs) / s_out has no double rhs "
                              "scale giving it in cortexm")
    elif _core.quantize_multiplier(s_a * s_b / s_out) != _core.quantize_multiplier(product / s_out):
        # a value's dequantize folds only at the value's own scale
        raise Unsupported(f"two activations at scales {s_a!r}, {s_b!r} -> {s_out!r}: TFLite Micro's multiplier from "
                          "float32(s_lhs * s_rhs) / s_out differs from cortexm's double product's (a constant "
                          "rhs is imported)")
    operands = []
    for k, (i, q, scale) in enumerate(((a_i, q_a, q_a["scales"][0]), (b_i, q_b, s_b))):
        t = ctx.tensor(i)
        if t.data is not None:
            v = ctx.g.add_constant(f"t{i}_{op.index}", np.ascontiguousarray(t.data),
                                   qparams={"scales": [scale], "zero_points": q["zero_points"],
                                            "axis": -1, "quant_min": -128, "quant_max": 127})
            lo, hi = -128, 127
        else:
            v = ctx.value(i, "file")
            lo, hi = v.qparams["quant_min"], v.qparams["quant_max"]
        if adj[k]:
            v = ctx.g.call("aten.permute_copy.default", [v], {"dims": [0, 2, 1]}, source=ctx.source())
        operands.append(ctx.g.call("quantized_decomposed.dequantize_per_tensor.default", [v],
                                   {"scale": scale, "zero_point": q["zero_points"][0], "quant_min": lo,
                                    "quant_max": hi, "dtype": "int8"}, source=ctx.source()))
    y = ctx.g.call("aten.bmm.default", operands, {}, source=ctx.source())
    if list(y.shape) != list(ctx.tensor(out_i).shape):
        raise Malformed(f"output shape {list(ctx.tensor(out_i).shape)} is not the product's {list(y.shape)}")
    ctx.quantize_output(out_i, y, "file")
