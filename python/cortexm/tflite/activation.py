"""LOGISTIC and TANH (int8) -> cortex_m.quantized_activation: a 256-entry table holding, for each
input integer, the output TFLite Micro's reference kernel computes (gemmlowp's fixed-point
logistic / tanh on a Q4.27 input, as reference_integer_ops::Logistic / Tanh do), so the program
gives TFLite Micro's bytes. cortexm's own sigmoid / tanh lowering tabulates the float function,
which differs from TFLite Micro's fixed point in a few entries at some scales; hence the table is
built here rather than through aten.sigmoid / aten.tanh."""

from __future__ import annotations

import math

import numpy as np

from .. import _core
from . import schema as S
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


# --- RELU, RELU6, LEAKY_RELU, HARD_SWISH (int8; TFLite Micro has no RELU_N1_TO_1 kernel) ---------------------------------------
# The same kind of table: each entry TFLite Micro's reference arithmetic for that input integer.

def _f32(x) -> float:
    return float(np.float32(x))


def _quantize_multiplier(real: float) -> tuple[int, int]:
    return _core.quantize_multiplier(real)


def _round_f32_quotient(value: float, scale: float) -> int:
    """round(value / scale) of float32 operands (std::round: halves away from zero)."""
    q = _f32(np.float32(value) / np.float32(scale))
    return int(math.copysign(math.floor(abs(q) + 0.5), q))


def _relu_table(builtin: str, q_in: dict, q_out: dict) -> np.ndarray:
    """ReluQuantized (RELU: rescaled to the output, clamped below at zp_out + round(0 / s_out)) or Relu6Quantized (RELU6: the input integers clamped to [zp_in, zp_in + round(6 /
    s_in)], not rescaled)."""
    s_in, zp_in = q_in["scales"][0], q_in["zero_points"][0]
    s_out, zp_out = q_out["scales"][0], q_out["zero_points"][0]
    x = np.arange(-128, 128)
    if builtin == "RELU6":
        six = min(max(_round_f32_quotient(6.0, s_in) + zp_in, -128), 127)
        return np.clip(x, zp_in, six).astype(np.int8)
    multiplier, shift = _quantize_multiplier(_f32(np.float32(s_in) / np.float32(s_out)))
    lo = max(-128, zp_out + _round_f32_quotient(0.0, s_out))
    out = [min(max(zp_out + _requantize(int(v) - zp_in, multiplier, shift), lo), 127) for v in x]
    return np.array(out, np.int8)


def _leaky_relu_table(alpha: float, q_in: dict, q_out: dict) -> np.ndarray:
    """QuantizeLeakyRelu: x - zp_in >= 0 times s_in / s_out, below times s_in * alpha / s_out (float32
    products), each by its multiplier, plus zp_out, clamped."""
    s_in, zp_in = np.float32(q_in["scales"][0]), q_in["zero_points"][0]
    s_out, zp_out = np.float32(q_out["scales"][0]), q_out["zero_points"][0]
    m_alpha, sh_alpha = _quantize_multiplier(_f32(s_in * np.float32(alpha) / s_out))
    m_id, sh_id = _quantize_multiplier(_f32(s_in / s_out))
    out = []
    for v in range(-128, 128):
        x = v - zp_in
        y = zp_out + (_requantize(x, m_id, sh_id) if x >= 0 else _requantize(x, m_alpha, sh_alpha))
        out.append(min(max(y, -128), 127))
    return np.array(out, np.int8)


def _wrap16(x: int) -> int:
    return (x + (1 << 15)) % (1 << 16) - (1 << 15)


def _high_mul16(a: int, b: int) -> int:
    """gemmlowp's SaturatingRoundingDoublingHighMul on int16."""
    if a == b == -32768:
        return 32767
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return _wrap16(_trunc_div(ab + nudge, 1 << 15))


def _divide_by_pot16(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _saturating_left_shift16(x: int, amount: int) -> int:
    return min(max(x * (1 << amount), -32768), 32767)


def _down_scale_to_int16(multiplier: int) -> int:
    """DownScaleInt32ToInt16Multiplier."""
    if multiplier >= (1 << 31) - 1 - (1 << 15):
        return 32767
    return (multiplier + (1 << 15)) >> 16


def _hard_swish_table(q_in: dict, q_out: dict) -> np.ndarray:
    """reference_ops::HardSwish (int16 fixed point): the input on a 1/128 finer scale, a 'reluish'
    factor (x + 3) / 6 in Q0.15, their product rescaled to the output."""
    s_in, zp_in = np.float32(q_in["scales"][0]), q_in["zero_points"][0]
    s_out, zp_out = np.float32(q_out["scales"][0]), q_out["zero_points"][0]
    hires = np.float32(np.float32(1.0 / 128.0) * s_in)
    m_out, e_out = _quantize_multiplier(_f32(hires / s_out))
    m_out = _down_scale_to_int16(m_out)
    if e_out > 0:
        raise Unsupported(f"input scale {float(s_in)!r} / output scale {float(s_out)!r}: TFLite Micro requires the "
                          "output multiplier's exponent <= 0")
    m_relu, e_relu = _quantize_multiplier(_f32(hires / np.float32(3.0 / 32768.0)))
    m_relu = _down_scale_to_int16(m_relu)
    out = []
    for v in range(-128, 128):
        x = _wrap16(v - zp_in)
        x_hires = _wrap16(x * 128)
        preshift = _high_mul16(x_hires, m_out)
        reluish = x_hires
        if e_relu > 0:
            reluish = _saturating_left_shift16(reluish, e_relu - 1)
        reluish = _high_mul16(reluish, m_relu)
        if e_relu > 0:
            reluish = _saturating_left_shift16(reluish, 1)
        if e_relu < 0:
            reluish = _divide_by_pot16(reluish, -e_relu)
        reluish = (reluish + (1 << 15)) >> 1
        product = 32767 if reluish == preshift == -32768 else _wrap16(_trunc_div(reluish * preshift, 1 << 15))
        y = _wrap16(_divide_by_pot16(product, -e_out) + zp_out)
        out.append(min(max(y, -128), 127))
    return np.array(out, np.int8)


def _table_op(ctx, op, table: np.ndarray, q_out: dict) -> None:
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    t = ctx.g.add_constant(f"op{op.index}_{op.builtin.lower()}_table", table)
    y = ctx.g.call("cortex_m.quantized_activation.default", [ctx.value(x_i, "file"), t], {}, source=ctx.source())
    y.qparams = {"scales": [q_out["scales"][0]], "zero_points": [q_out["zero_points"][0]], "quant_min": -128,
                 "quant_max": 127}
    ctx.set_value(out_i, y)


def _int8_io(ctx, op) -> tuple[dict, dict]:
    x_i, out_i = ctx.input_index(0), op.outputs[0]
    types = [ctx.tensor(x_i).type, ctx.tensor(out_i).type]
    if types != ["INT8", "INT8"]:
        raise Unsupported(f"input {types[0]} and output {types[1]}: int8 is imported (cortexm's int16 activation "
                          "tables interpolate, TFLite Micro's int16 kernels compute each value)")
    return ctx.qparams(x_i), ctx.qparams(out_i)


@tflite_op("RELU", "RELU6")
def relu(ctx, op):
    q_in, q_out = _int8_io(ctx, op)
    _table_op(ctx, op, _relu_table(op.builtin, q_in, q_out), q_out)


@tflite_op("LEAKY_RELU")
def leaky_relu(ctx, op):
    o = ctx.options(S.OPTIONS_LEAKY_RELU)
    alpha = o.scalar(S.LEAKY_RELU_ALPHA, "float32", "alpha", 0.0)
    if not (math.isfinite(alpha) and alpha >= 0):
        raise Unsupported(f"alpha = {alpha} (a finite alpha >= 0 is imported)")
    q_in, q_out = _int8_io(ctx, op)
    _table_op(ctx, op, _leaky_relu_table(alpha, q_in, q_out), q_out)


@tflite_op("HARD_SWISH")
def hard_swish(ctx, op):
    q_in, q_out = _int8_io(ctx, op)
    _table_op(ctx, op, _hard_swish_table(q_in, q_out), q_out)
