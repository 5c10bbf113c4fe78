"""QUANTIZE (float32 -> int8 / int16 at the model's input) and DEQUANTIZE (int8 / int16 -> float32
at its output) -> quantize_per_tensor / dequantize_per_tensor.

DEQUANTIZE matches TFLite Micro exactly: (q - zp) * scale, one rounding to float32 either way.
QUANTIZE does not always: TFLite Micro rounds x / scale halves away from zero, cortexm's quantize
rounds x * (1 / scale) halves to even; a program whose float input is quantized differs by one
step on exact halves (25-50% of them) and on about 1 in 360,000 random values (measured against the
wheel); to_program(io="int8") takes the int8 tensor instead."""

from __future__ import annotations

from .importer import Unsupported, tflite_op


@tflite_op("QUANTIZE")
def quantize(ctx, op):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    x_t = ctx.tensor(x_i)
    if x_t.type != "FLOAT32":
        raise Unsupported(f"a {x_t.type} input: QUANTIZE of float32 is imported (requantizing is not yet)")
    ctx.quantize_output(out_i, ctx.value(x_i, "file"), "file")


@tflite_op("DEQUANTIZE")
def dequantize(ctx, op):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    if ctx.tensor(out_i).type != "FLOAT32":
        raise Unsupported(f"output {ctx.tensor(out_i).type} (float32 expected)")
    ctx.set_value(out_i, ctx.dequantized(x_i, "file"))
