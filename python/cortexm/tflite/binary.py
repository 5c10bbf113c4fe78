"""ADD, SUB, MUL -> aten.add / sub / mul.Tensor on dequantized int8 values (NCHW when both are
4-D, else the file's layout; numpy broadcasting either way), fused activations in the output
range. A constant operand is an int8 constant with its own qparams.

The multipliers: cortexm's lowering derives them in double from the float32 scales, as TFLite
Micro's ADD and MUL do, and as the tflite-micro wheel's SUB does. (TFLite Micro's sources at some
revisions compute SUB's in float32 quotients, PrepareGeneralSubOp; the tests compare with the
wheel, on every pair of int8 inputs.)"""

from __future__ import annotations

import numpy as np

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


def _binary(ctx, op, aten, options_type, act_fid):
    o = ctx.options(options_type)
    a_i, b_i, out_i = ctx.input_index(0), ctx.input_index(1), op.outputs[0]
    types = [ctx.tensor(i).type for i in (a_i, b_i, out_i)]
    int16 = aten in ("aten.add.Tensor", "aten.mul.Tensor") and types == ["INT16"] * 3
    if types != ["INT8"] * 3 and not int16:
        raise Unsupported(f"types {', '.join(types)}: int8 inputs and output (int16 for ADD and MUL) are imported")
    if int16:
        # TFLite Micro's 16x8 ADD / MUL: zero points 0, activations (cortexm's _s16 kernels, TFLite's multipliers)
        if any(ctx.qparams(i)["zero_points"][0] != 0 for i in (a_i, b_i, out_i)):
            raise Unsupported("an int16 operand with a nonzero zero point (TFLite Micro requires 0)")
        if any(ctx.tensor(i).data is not None for i in (a_i, b_i)):
            raise Unsupported("a constant int16 operand (int16 activations are imported)")
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


@tflite_op("MAXIMUM", "MINIMUM")
def maximum_minimum(ctx, op):
    """-> aten.maximum / minimum.default. TFLite Micro compares the int8 integers as they are
    (broadcasting), which is the values' order only when both inputs and the output share qparams:
    required (the converter writes them so)."""
    a_i, b_i, out_i = ctx.input_index(0), ctx.input_index(1), op.outputs[0]
    types = [ctx.tensor(i).type for i in (a_i, b_i, out_i)]
    if types != ["INT8"] * 3:
        raise Unsupported(f"types {', '.join(types)}: int8 inputs and output are imported")
    qs = [ctx.qparams(i) for i in (a_i, b_i, out_i)]
    if any((q["scales"], q["zero_points"]) != (qs[2]["scales"], qs[2]["zero_points"]) for q in qs):
        raise Unsupported("inputs and output with different qparams (TFLite Micro compares the integers unscaled)")
    rank4 = len(ctx.tensor(a_i).shape) == 4 and len(ctx.tensor(b_i).shape) == 4
    layout = "nchw" if rank4 else "file"
    a, b = _operand(ctx, 0, layout), _operand(ctx, 1, layout)
    aten = "aten.maximum.default" if op.builtin == "MAXIMUM" else "aten.minimum.default"
    y = ctx.g.call(aten, [a, b], {}, source=ctx.source())
    check_shape(ctx, out_i, y.shape, ctx.tensor(out_i).shape, layout)
    ctx.quantize_output(out_i, y, layout)
