"""ADD, SUB, MUL -> aten.add / sub / mul.Tensor on dequantized int8 values (NCHW when both are
4-D, else the file's layout; numpy broadcasting either way), fused activations in the output
range. A constant operand is an int8 constant with its own qparams.

TFLite Micro computes ADD's and MUL's multipliers in double from the float32 scales, as cortexm's
lowering does. SUB's (PrepareGeneralSubOp) are float32 quotients: imported only when they give
the same quantized multipliers as the double ones, else refused naming the scales."""

from __future__ import annotations

import numpy as np

from .. import _core
from . import schema as S
from .common import activation_of, check_shape
from .importer import Unsupported, tflite_op

TO_NCHW = (0, 3, 1, 2)


def _operand(ctx, k, layout):
    i = ctx.input_index(k)
    t = ctx.tensor(i)
    if t.data is None:
        return ctx.dequantized(i, layout)
    if t.type != "INT8":
        raise Unsupported(f"constant operand {i} '{t.name}' is {t.type}")
    q = ctx.qparams(i)
    data = t.data.transpose(TO_NCHW) if layout == "nchw" else t.data
    return ctx.constant(i, data, q["scales"], q["zero_points"], None, "int8", -128, 127)


def _multipliers_equal(reals_a, reals_b) -> bool:
    return [tuple(_core.quantize_multiplier(r)) for r in reals_a] == [tuple(_core.quantize_multiplier(r)) for r in reals_b]


def _binary(ctx, op, aten, options_type, act_fid):
    o = ctx.options(options_type)
    a_i, b_i, out_i = ctx.input_index(0), ctx.input_index(1), op.outputs[0]
    types = [ctx.tensor(i).type for i in (a_i, b_i, out_i)]
    if types != ["INT8"] * 3:
        raise Unsupported(f"types {', '.join(types)}: int8 inputs and output are imported")
    sa, sb, so = (ctx.qparams(i)["scales"][0] for i in (a_i, b_i, out_i))
    if aten == "aten.sub.Tensor":
        f32 = np.float32
        with np.errstate(all="ignore"):
            twice = f32(2) * max(f32(sa), f32(sb))
            tflm = [float(f32(sa) / twice), float(f32(sb) / twice), float(twice / (f32(1 << 20) * f32(so)))]
        twice_d = 2.0 * max(sa, sb)
        ours = [sa / twice_d, sb / twice_d, twice_d / ((1 << 20) * so)]
        if not _multipliers_equal(tflm, ours):
            raise Unsupported(f"TFLite Micro's SUB computes its multipliers in float32 and they differ from the double "
                              f"ones cortexm's lowering computes for scales {sa!r}, {sb!r}, {so!r}")
    rank4 = len(ctx.tensor(a_i).shape) == 4 and len(ctx.tensor(b_i).shape) == 4
    layout = "nchw" if rank4 else "file"
    a, b = _operand(ctx, 0, layout), _operand(ctx, 1, layout)
    attrs = {"alpha": 1.0} if aten != "aten.mul.Tensor" else {}
    y = ctx.g.call(aten, [a, b], attrs, source=ctx.source())
    check_shape(ctx, out_i, y.shape, ctx.tensor(out_i).shape, layout)
    ctx.quantize_output(out_i, y, layout, activation_of(o, act_fid))


@tflite_op("ADD")
def add(ctx, op):
    _binary(ctx, op, "aten.add.Tensor", S.OPTIONS_ADD, S.ADD_ACTIVATION)


@tflite_op("SUB")
def sub(ctx, op):
    _binary(ctx, op, "aten.sub.Tensor", S.OPTIONS_SUB, S.SUB_ACTIVATION)


@tflite_op("MUL")
def mul(ctx, op):
    _binary(ctx, op, "aten.mul.Tensor", S.OPTIONS_MUL, S.MUL_ACTIVATION)
