"""quantized_softmax (arm_softmax_s8) and quantized_log_softmax (TFLite's int8 LogSoftmax)
references: gemmlowp's fixed-point routines vectorized over int64 numpy arrays."""

import math

import numpy as np

from .common import quantize_multiplier, requantize, wrap_int32

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul: round(a * b / 2**31), halves away from zero."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    ab = a * b
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    q = ab + nudge
    out = np.where(q >= 0, q >> 31, -((-q) >> 31))  # division truncating toward zero
    return np.where((a == INT32_MIN) & (b == INT32_MIN), INT32_MAX, out)


def rounding_divide(x, e):
    """RoundingDivideByPOT: x / 2**e rounded, halves away from zero (0 for e >= 32)."""
    x, e = np.asarray(x, np.int64), np.asarray(e, np.int64)
    mag = (np.abs(x) + np.where(e > 0, np.int64(1) << np.maximum(e - 1, 0), 0)) >> np.minimum(e, 40)
    return np.where(e >= 32, 0, np.sign(x) * mag)


def sat_shift(x, e):
    """Saturating x * 2**e (e >= 0)."""
    return np.clip(np.asarray(x, np.int64) << e, INT32_MIN, INT32_MAX)


def exp_on_negative_values(a):
    """exp of Q5.26 values <= 0, in Q0.31."""
    a = np.asarray(a, np.int64)
    quarter = 1 << 24
    a_mod = (a & (quarter - 1)) - quarter
    remainder = a_mod - a
    x = (a_mod << 5) + (1 << 28)
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    poly = rounding_divide(srdhm(rounding_divide(x4, 2) + x3, 715827883) + x2, 1)
    result = 1895147668 + srdhm(1895147668, x + poly)
    for k, factor in enumerate((1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242)):
        result = np.where(remainder & (1 << (24 + k)), srdhm(result, factor), result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x(a):
    """1 / (1 + a) for Q0.31 a in [0, 1), in Q0.31 (Newton-Raphson in Q2.29)."""
    s = np.asarray(a, np.int64) + INT32_MAX
    half = np.where(s >= 0, (s + 1) // 2, -((-s + 1) // 2))
    x = 1515870810 + srdhm(half, -1010580540)
    for _ in range(3):
        x = x + sat_shift(srdhm(x, (1 << 29) - srdhm(half, x)), 2)
    return sat_shift(x, 1)


def clz32(x):
    x = np.asarray(x, np.int64) & 0xFFFFFFFF
    return np.where(x == 0, 32, 31 - np.floor(np.log2(np.maximum(x, 1))).astype(np.int64))


def softmax_scaling(scale, log=False):
    """PreprocessSoftmaxScaling (beta 1, 5 integer bits), CalculateInputRadius and, for log,
    the reverse scaling of PreprocessLogSoftmaxScalingExp."""
    real = min(scale * 2.0 ** 26, 2.0 ** 31 - 1)
    fraction, shift = math.frexp(real)
    mult = int(math.floor(fraction * 2 ** 31 + 0.5))
    if mult == 1 << 31:
        mult, shift = mult // 2, shift + 1
    diff_min = -int(math.floor(31 * 2.0 ** 26 / 2.0 ** shift))
    if not log:
        return mult, shift, diff_min
    fraction, rshift = math.frexp(2.0 ** (31 - shift) / mult)
    rmult = int(math.floor(fraction * 2 ** 31 + 0.5))
    if rmult == 1 << 31:
        rmult, rshift = rmult // 2, rshift + 1
    if rshift < -31:
        rmult, rshift = 0, 0
    return mult, shift, diff_min, rmult, -rshift


def _rows(x, dim):
    moved = np.moveaxis(np.asarray(x, np.int64), dim, -1)
    return moved, moved.reshape(-1, moved.shape[-1])


def _exps(rows, mult, shift, diff_min):
    diff = rows - rows.max(axis=1, keepdims=True)
    scaled = srdhm(diff << shift, mult)
    used = diff >= diff_min
    return diff, scaled, used, np.where(used, exp_on_negative_values(np.where(used, scaled, 0)), 0)


def softmax(x, mult, shift, diff_min, dim=-1):
    moved, rows = _rows(x, dim)
    _, _, used, exps = _exps(rows, mult, shift, diff_min)
    total = rounding_divide(exps, 12).sum(axis=1, keepdims=True)  # <= 2**31: fits uint32
    headroom = clz32(total)
    recip = one_over_one_plus_x(wrap_int32(((total << headroom) & 0xFFFFFFFF) - (1 << 31)))
    out = rounding_divide(srdhm(recip, exps), 12 - headroom + 23) - 128
    out = np.where(used, np.clip(out, -128, 127), -128)
    return np.moveaxis(out.reshape(moved.shape), -1, dim).astype(np.int8)


def log_q12_to_q5(x):
    """TFLite's log_x_for_x_greater_than_or_equal_to_1_impl<5, 12> on Q12.19 values."""
    x = np.asarray(x, np.int64)
    quarter = rounding_divide(536870912, 6)
    hr_a = clz32(x)
    r_a = sat_shift(srdhm(sat_shift(x, hr_a - 1), 1518500250), 1)
    pow_a = np.clip(sat_shift(12 - hr_a, 25) + quarter, INT32_MIN, INT32_MAX)
    hr_b = clz32(srdhm(x, 1518500250)) - 1
    r_b = sat_shift(x, hr_b)
    pow_b = np.clip(sat_shift(12 - hr_b, 25) - quarter, INT32_MIN, INT32_MAX)
    r = np.minimum(r_a, r_b)
    z = np.maximum(pow_a, pow_b)
    s = r + 1805811301
    p = np.where(s >= 0, (s + 1) // 2, -((-s + 1) // 2))
    q = wrap_int32(2 * (r - 1805811301))
    sq = srdhm(q, q)
    num = wrap_int32(srdhm(q, r) + srdhm(srdhm(q, sq), 117049297))
    denom = wrap_int32(srdhm(p, wrap_int32(1057819769 + q + srdhm(127690142, sq))) + srdhm(638450708, q))
    total = wrap_int32(srdhm(z, 1488522236) + srdhm(rounding_divide(num, 6), one_over_one_plus_x(denom)))
    return sat_shift(total, 1)


def log_softmax(x, mult, shift, diff_min, rmult, rshift, dim=-1):
    moved, rows = _rows(x, dim)
    diff, scaled, used, exps = _exps(rows, mult, shift, diff_min)
    total = np.minimum(rounding_divide(exps, 12).sum(axis=1, keepdims=True), INT32_MAX)
    log_sum = log_q12_to_q5(total)
    reverse = rounding_divide(srdhm(log_sum + INT32_MIN, rmult), rshift)
    limit = np.maximum(diff_min - 1, reverse)
    out = np.clip(rounding_divide(wrap_int32(scaled - log_sum), 22) + 127, -128, 127)
    out = np.where(diff > limit, out, -128)
    return np.moveaxis(out.reshape(moved.shape), -1, dim).astype(np.int8)


# --- int16 softmax (arm_softmax_s16, TFLite's SoftmaxInt16) ------------------------------------

def gen_lut(fn, lo, hi):
    """TFLite's gen_lut in float64: 513 Q15 entries of fn over [lo, hi] with the midpoint
    correction, halves rounded away from zero, saturated to int16."""
    def rnd(v):
        return np.sign(v) * np.floor(np.abs(v) + 0.5)

    step = (hi - lo) / 512
    i = np.arange(512, dtype=np.float64)
    val = fn(lo + i * step)
    sample = rnd(val * 32768.0)
    interp = rnd((fn(lo + (i + 1) * step) * 32768.0 + rnd(val * 32768.0)) / 2.0)
    bias = rnd((interp - rnd(fn(lo + i * step + step / 2) * 32768.0)) / 2.0)
    table = np.append(sample - bias, rnd(fn(hi) * 32768.0))
    return np.clip(table, -32768, 32767).astype(np.int64)


EXP_TABLE = gen_lut(np.exp, -10.0, 0.0)
RECIPROCAL_TABLE = gen_lut(lambda v: 1.0 / (1.0 + v), 0.0, 1.0)


def _lookup(table, x):
    """lut_lookup: entry 256 + (x >> 7) and the next, interpolated at (x & 127) / 128, half up."""
    base = table[256 + (x >> 7)]
    return base + (((table[257 + (x >> 7)] - base) * (x & 127) + 64) >> 7)


def softmax_s16_scaling(scale_in):
    """The multiplier and shift of s_in / (10 / 65535)."""
    return quantize_multiplier(scale_in / (10.0 / 65535.0))


def softmax_s16(x, mult, shift, dim=-1):
    """int16 softmax along dim (output scale 1/32768, zero point 0)."""
    x = np.moveaxis(x.astype(np.int64), dim, -1)
    diff = x - x.max(axis=-1, keepdims=True)
    exps = _lookup(EXP_TABLE, np.clip(requantize(diff, mult, shift) + 32767, -32768, 32767))
    total = exps.sum(axis=-1, keepdims=True)
    headroom = 32 - np.array([int(v).bit_length() for v in total.ravel()], np.int64).reshape(total.shape)
    shifted = ((total << (headroom - 1)) + (1 << 13)) >> 14
    reciprocal = _lookup(RECIPROCAL_TABLE, np.clip(shifted - 98304, -32768, 32767))
    right = 31 - headroom
    out = (exps * reciprocal + np.where(right > 0, np.int64(1) << np.maximum(right - 1, 0), 0)) >> right
    return np.moveaxis(np.clip(out, 0, 32767).astype(np.int16), -1, dim)
