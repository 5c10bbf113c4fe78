"""Data movement on the int8 values (TFLite Micro moves the integers: input and output qparams
must agree): RESHAPE, SQUEEZE, EXPAND_DIMS -> aten.view_copy (the file's layout, the output
tensor's shape); PAD / PADV2 -> aten.constant_pad_nd; CONCATENATION -> aten.cat."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .importer import Malformed, Unsupported, tflite_op


@tflite_op("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def reshape(ctx, op):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != out_t.type or x_t.type not in ("INT8", "INT16"):
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 / int16 reshapes are imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported("input and output qparams differ (TFLite copies the integers)")
    if int(np.prod(x_t.shape)) != int(np.prod(out_t.shape)):
        raise Malformed(f"input shape {list(x_t.shape)} and output shape {list(out_t.shape)} differ in size")
    x = ctx.value(x_i, "file")
    if list(x.shape) == list(out_t.shape):
        ctx.set_value(out_i, x)
        return
    ctx.set_value(out_i, ctx.g.call("aten.view_copy.default", [x], {"size": list(out_t.shape)},
                                    source=ctx.source()))


def _int_constant(ctx, op, k: int, what: str) -> np.ndarray:
    i = ctx.input_index(k)
    t = ctx.tensor(i)
    if t.data is None or t.type not in ("INT32", "INT64"):
        raise Unsupported(f"{what} tensor {i} '{t.name}' is {t.type}{'' if t.data is not None else ', not constant'} "
                          "(an int32 / int64 constant is imported)")
    return t.data.astype(np.int64)


@tflite_op("PAD", "PADV2")
def pad(ctx, op):
    """-> aten.constant_pad_nd of the int8 value (the file's layout) with the output zero point, or
    PADV2's constant value, as TFLite Micro pads."""
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != "INT8" or out_t.type != "INT8":
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 pads are imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    if (q_in["scales"], q_in["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
        raise Unsupported("input and output qparams differ (TFLite Micro pads the integers)")
    paddings = _int_constant(ctx, op, 1, "paddings")
    rank = len(x_t.shape)
    if paddings.shape != (rank, 2):
        raise Malformed(f"paddings of shape {list(paddings.shape)} for a rank-{rank} input ([{rank}, 2] expected)")
    if (paddings < 0).any():
        raise Malformed(f"negative paddings {paddings.tolist()}")
    value = q_out["zero_points"][0]
    if op.builtin == "PADV2" and len(op.inputs) > 2 and op.inputs[2] >= 0:
        c = ctx.tensor(op.inputs[2])
        if c.data is None or c.type != "INT8" or c.data.size != 1:
            raise Unsupported(f"constant_values tensor {op.inputs[2]} must be one int8 constant")
        value = int(c.data.reshape(-1)[0])
    expected = [d + int(a) + int(b) for d, (a, b) in zip(x_t.shape, paddings.tolist())]
    if expected != list(out_t.shape):
        raise Malformed(f"output shape {list(out_t.shape)} is not the padded {expected}")
    x = ctx.value(x_i, "file")
    if not paddings.any():
        ctx.set_value(out_i, x)
        return
    torch_pad = []
    for a, b in reversed(paddings.tolist()):
        torch_pad += [int(a), int(b)]
    y = ctx.g.call("aten.constant_pad_nd.default", [x], {"pad": torch_pad, "value": float(value)},
                   source=ctx.source())
    # the pad value must stay within the value's range (a fused activation's, upstream)
    q = dict(y.qparams)
    q["quant_min"], q["quant_max"] = min(q["quant_min"], value), max(q["quant_max"], value)
    y.qparams = q
    ctx.set_value(out_i, y)


NHWC_TO_NCHW_DIM = [0, 2, 3, 1]  # NHWC dim d is NCHW dim NHWC_TO_NCHW_DIM[d]


@tflite_op("CONCATENATION")
def concatenation(ctx, op):
    """-> aten.cat of the int8 values (NCHW when all are 4-D, the axis mapped). TFLite Micro copies
    the integers: every input's qparams must be the output's, and no fused activation."""
    o = ctx.options(S.OPTIONS_CONCATENATION)
    if o.scalar(S.CONCAT_ACTIVATION, "int8", "fused_activation_function") != 0:
        raise Unsupported("a fused activation (TFLite Micro requires NONE)")
    out_i = op.outputs[0]
    out_t = ctx.tensor(out_i)
    ins = [i for i in op.inputs]
    if not ins or any(i < 0 for i in ins):
        raise Malformed("an absent input")
    q_out = ctx.qparams(out_i)
    for i in ins:
        t = ctx.tensor(i)
        if t.type != "INT8" or t.data is not None:
            raise Unsupported(f"input {i} '{t.name}' is {t.type}{' constant' if t.data is not None else ''} "
                              "(int8 activations are imported)")
        q = ctx.qparams(i)
        if (q["scales"], q["zero_points"]) != (q_out["scales"], q_out["zero_points"]):
            raise Unsupported(f"input {i} qparams {q['scales'][0]}, {q['zero_points'][0]} differ from the output's "
                              "(TFLite Micro copies the integers)")
    rank = len(out_t.shape)
    axis = o.scalar(S.CONCAT_AXIS, "int32", "axis")
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise Malformed(f"axis {axis} outside rank {rank}")
    layout = "nchw" if rank == 4 else "file"
    dim = NHWC_TO_NCHW_DIM[axis] if layout == "nchw" else axis
    values = [ctx.value(i, layout) for i in ins]
    lo = min(v.qparams["quant_min"] for v in values)
    hi = max(v.qparams["quant_max"] for v in values)
    # One range for the int8 cat's inputs: where an upstream activation narrowed one, a view of it
    # with the widest range (the integers are the same).
    y = ctx.g.call("aten.cat.default", values, {"dim": dim}, source=ctx.source())
    q = dict(y.qparams) if y.qparams else dict(values[0].qparams)
    q["quant_min"], q["quant_max"] = lo, hi
    y.qparams = q
    ctx.set_value(out_i, y, layout)
