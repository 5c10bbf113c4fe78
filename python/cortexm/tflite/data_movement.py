"""RESHAPE (and SQUEEZE, EXPAND_DIMS: the same bytes) -> aten.view_copy.default of the int8 value in
the file's layout, to the output tensor's shape. TFLite Micro copies the bytes: input and output
qparams must agree."""

from __future__ import annotations

import numpy as np

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
