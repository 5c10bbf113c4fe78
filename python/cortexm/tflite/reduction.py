"""MEAN -> aten.mean.dim, SUM -> aten.sum.dim_IntList on the int8 value in the file's layout (axes
as given, keep_dims). cortexm's lowering gives TFLite Micro's MEAN arithmetic (the multiplier of
s_in / s_out with 1/count folded in) and its SUM (the multiplier of s_in / s_out) over dims that
form one block in memory."""

from __future__ import annotations

import numpy as np

from . import schema as S
from .common import check_shape
from .importer import Malformed, Unsupported, tflite_op


@tflite_op("MEAN", "SUM")
def mean(ctx, op):
    o = ctx.options(S.OPTIONS_REDUCER)
    keep = bool(o.scalar(S.REDUCER_KEEP_DIMS, "bool", "keep_dims", False))
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t, out_t = ctx.tensor(x_i), ctx.tensor(out_i)
    if x_t.type != "INT8" or out_t.type != "INT8":
        raise Unsupported(f"input {x_t.type} and output {out_t.type}: int8 {op.builtin} is imported")
    a = ctx.tensor(ctx.input_index(1))
    if a.data is None or a.type not in ("INT32", "INT64"):
        raise Unsupported(f"axis tensor '{a.name}' is {a.type}{'' if a.data is not None else ', not constant'}")
    rank = len(x_t.shape)
    axes = sorted({int(d) + rank if int(d) < 0 else int(d) for d in np.asarray(a.data).reshape(-1).tolist()})
    if any(not 0 <= d < rank for d in axes) or not axes:
        raise Malformed(f"axes {np.asarray(a.data).reshape(-1).tolist()} outside rank {rank}")
    aten = "aten.mean.dim" if op.builtin == "MEAN" else "aten.sum.dim_IntList"
    y = ctx.g.call(aten, [ctx.dequantized(x_i, "file")], {"dim": axes, "keepdim": keep},
                   source=ctx.source())
    check_shape(ctx, out_i, y.shape, out_t.shape, "file")
    ctx.quantize_output(out_i, y, "file")
