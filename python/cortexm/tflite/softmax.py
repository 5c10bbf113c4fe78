"""SOFTMAX -> aten._softmax.default over the last dim (int8 in, int8 out at 1/256, -128: TFLite
Micro's and arm_softmax_s8's). cortexm's lowering derives the input multiplier, left shift and
diff_min from the input scale as PreprocessSoftmaxScaling and CalculateInputRadius do with beta 1;
another beta is refused (the graph has no beta to carry it)."""

from __future__ import annotations

from . import schema as S
from .importer import Unsupported, tflite_op


@tflite_op("SOFTMAX")
def softmax(ctx, op):
    o = ctx.options(S.OPTIONS_SOFTMAX)
    beta = o.scalar(S.SOFTMAX_BETA, "float32", "beta")
    if beta != 1.0:
        raise Unsupported(f"beta = {beta} (beta 1 is imported)")
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    types = [ctx.tensor(x_i).type, ctx.tensor(out_i).type]
    want = {("INT8", "INT8"): (1.0 / 256.0, -128)}.get(tuple(types))
    if want is None:
        # cortexm's 16x8 softmax differs from TFLite Micro's by one step on a few inputs
        # (test_tflite_import_more.py measures it on every difference): not imported.
        raise Unsupported(f"input {types[0]} and output {types[1]}: int8 softmax is imported (cortexm's int16 "
                          "softmax is not TFLite Micro's to the bit)")
    q = ctx.qparams(out_i)
    if (q["scales"][0], q["zero_points"][0]) != want:
        raise Unsupported(f"output scale {q['scales'][0]!r} and zero point {q['zero_points'][0]} (cortexm's kernel "
                          f"takes {want[0]!r} and {want[1]})")
    if len(ctx.tensor(x_i).shape) < 1:
        raise Unsupported("a scalar input")
    y = ctx.g.call("aten._softmax.default", [ctx.dequantized(x_i, "file")], {"dim": -1, "half_to_float": False},
                   source=ctx.source())
    ctx.quantize_output(out_i, y, "file")
