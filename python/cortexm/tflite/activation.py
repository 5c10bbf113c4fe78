"""LOGISTIC and TANH (int8) -> cortex_m.quantized_activation: a 256-entry table holding, for each
input integer, the output TFLite Micro's reference kernel computes (gemmlowp's fixed-point
logistic / tanh on a Q4.27 input, as reference_integer_ops::Logistic / Tanh do), so the program
gives TFLite Micro's bytes. cortexm's own sigmoid / tanh lowering tabulates the float function,
which differs from TFLite Micro's fixed point in a few entries at some scales; hence the table is
built here rather than through aten.sigmoid / aten.tanh."""

from __future__ import annotations

import math

import numpy as np

from .importer import Unsupported, tflite_op

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
OUTPUT_QPARAMS = {"LOGISTIC": (1.0 / 256.0, -128), "TANH": (1.0 / 128.0, 0)}


def _wrap(x: int) -> int:
    """Two's complement int32."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _trunc_div(a: int, b: int) -> int:
    """C++ integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _high_mul(a: int, b: int) -> int:
    """SaturatingRoundingDoublingHighMul."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return _wrap(_trunc_div(ab + nudge, 1 << 31))


def _divide_by_pot(x: int, exponent: int) -> int:
    """RoundingDivideByPOT."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _multiply_by_pot(x: int, exponent: int) -> int:
    """SaturatingRoundingMultiplyByPOT<exponent>."""
    if exponent > 0:
        threshold = (1 << (31 - exponent)) - 1
        if x > threshold:
            return INT32_MAX
        if x < -threshold:
            return INT32_MIN
        return _wrap(x << exponent)
    if exponent < 0:
        return _divide_by_pot(x, -exponent)
    return x


def _half_sum(a: int, b: int) -> int:
    s = a + b
    return _wrap(_trunc_div(s + (1 if s >= 0 else -1), 2))


def _exp_on_interval(a: int) -> int:
    """exp_on_interval_between_negative_one_quarter_and_0_excl, Q0.31."""
    constant_term, one_third = 1895147668, 715827883
    x = _wrap(a + (1 << 28))
    x2 = _high_mul(x, x)
    x3 = _high_mul(x2, x)
    x4 = _high_mul(x2, x2)
    x4_over_4 = _multiply_by_pot(x4, -2)
    poly = _multiply_by_pot(_wrap(_high_mul(_wrap(x4_over_4 + x3), one_third) + x2), -1)
    return _wrap(constant_term + _high_mul(constant_term, _wrap(x + poly)))


_BARREL = [(-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401), (4, 242)]


def _exp_on_negative_values(a: int, integer_bits: int) -> int:
    """gemmlowp's exp_on_negative_values: a in Q(integer_bits).(31 - integer_bits), a <= 0; Q0.31."""
    fractional = 31 - integer_bits
    one_quarter = 1 << (fractional - 2)
    mask = one_quarter - 1
    a_mod = _wrap((a & mask) - one_quarter)
    result = _exp_on_interval(_multiply_by_pot(a_mod, integer_bits))
    remainder = _wrap(a_mod - a)
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent and remainder & (1 << (fractional + exponent)):
            result = _high_mul(result, multiplier)
    return INT32_MAX if a == 0 else result


def _newton_reciprocal(a: int) -> int:
    """x ~ 2 / (1 + a) in Q2.29 for a in Q0.31 [0, 1] (gemmlowp's Newton-Raphson, 3 steps)."""
    half_denominator = _half_sum(a, INT32_MAX)
    x = _wrap(1515870810 + _high_mul(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = _wrap((1 << 29) - _high_mul(half_denominator, x))
        x = _wrap(x + _multiply_by_pot(_high_mul(x, one_minus), 2))
    return x


def _logistic_q0(a: int) -> int:
    """gemmlowp::logistic of a Q4.27 value, Q0.31."""
    if a == 0:
        return 1 << 30
    positive = _multiply_by_pot(_newton_reciprocal(_exp_on_negative_values(_wrap(-abs(a)), 4)), 1)
    return positive if a > 0 else _wrap(INT32_MAX - positive)


def _tanh_q0(a: int) -> int:
    """gemmlowp::tanh of a Q4.27 value, Q0.31."""
    if a == 0:
        return 0
    n = a if a < 0 else _wrap(-a)
    t = _multiply_by_pot(_wrap(_newton_reciprocal(_exp_on_negative_values(n, 5)) - (1 << 29)), 2)
    return _wrap(-t) if a < 0 else t


def _input_params(scale: float) -> tuple[int, int, int]:
    """TFLite Micro's int8 LOGISTIC / TANH prepare: multiplier, left shift, range radius."""
    real = float(np.float32(scale)) * float(1 << 27)
    q, shift = math.frexp(real)
    multiplier = _wrap(int(math.copysign(math.floor(abs(q * (1 << 31)) + 0.5), q)))
    radius = math.floor(15.0 * (1 << 27) / math.ldexp(1.0, shift)) if shift < 63 else 0
    return multiplier, shift, radius


def _requantize(x: int, multiplier: int, shift: int) -> int:
    """MultiplyByQuantizedMultiplier (double rounding)."""
    left, right = max(shift, 0), max(-shift, 0)
    return _divide_by_pot(_high_mul(_wrap(x * (1 << left)), multiplier), right)


def tflm_table(builtin: str, scale: float, zero_point: int) -> np.ndarray:
    """The int8 output TFLite Micro's reference kernel gives for each int8 input, in input order -128..127."""
    multiplier, shift, radius = _input_params(scale)
    out = np.empty(256, np.int8)
    for k, q in enumerate(range(-128, 128)):
        x = q - zero_point
        if x <= -radius:
            v = -128
        elif x >= radius:
            v = 127
        elif builtin == "LOGISTIC":
            v = min(max(_divide_by_pot(_logistic_q0(_requantize(x, multiplier, shift)), 23) - 128, -128), 127)
        else:
            v = min(max(_divide_by_pot(_tanh_q0(_requantize(x, multiplier, shift)), 24), -128), 127)
        out[k] = v
    return out


@tflite_op("LOGISTIC", "TANH")
def table_activation(ctx, op):
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    types = [ctx.tensor(x_i).type, ctx.tensor(out_i).type]
    if types != ["INT8", "INT8"]:
        raise Unsupported(f"input {types[0]} and output {types[1]}: int8 is imported")
    q_in, q_out = ctx.qparams(x_i), ctx.qparams(out_i)
    want = OUTPUT_QPARAMS[op.builtin]
    if (q_out["scales"][0], q_out["zero_points"][0]) != want:
        raise Unsupported(f"output scale {q_out['scales'][0]!r} and zero point {q_out['zero_points'][0]} (TFLite "
                          f"requires {want[0]!r} and {want[1]})")
    table = tflm_table(op.builtin, q_in["scales"][0], q_in["zero_points"][0])
    t = ctx.g.add_constant(f"op{op.index}_{op.builtin.lower()}_table", table)
    y = ctx.g.call("cortex_m.quantized_activation.default", [ctx.value(x_i, "file"), t], {}, source=ctx.source())
    y.qparams = {"scales": [q_out["scales"][0]], "zero_points": [q_out["zero_points"][0]], "quant_min": -128,
                 "quant_max": 127}
    ctx.set_value(out_i, y)
