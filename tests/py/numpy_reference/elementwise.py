"""quantized_add / quantized_sub / quantized_mul references (arm_elementwise_add_s8, TFLite's SUB,
arm_elementwise_mul_s8, and the int16 _s16)."""

import numpy as np

from .common import quantize_multiplier, requantize, wrap_int32


def add(a, zp_a, mult_a, shift_a, b, zp_b, mult_b, shift_b, zp_out, mult_out, shift_out,
        act_min=-128, act_max=127):
    a = a.astype(np.int64) - zp_a
    b = b.astype(np.int64) - zp_b
    total = requantize(a << 20, mult_a, shift_a) + requantize(b << 20, mult_b, shift_b)
    out = requantize(total, mult_out, shift_out) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def sub(a, zp_a, mult_a, shift_a, b, zp_b, mult_b, shift_b, zp_out, mult_out, shift_out,
        act_min=-128, act_max=127):
    """TFLite's SUB: add's rescaling (add_params), the second input's scaled value subtracted."""
    a = a.astype(np.int64) - zp_a
    b = b.astype(np.int64) - zp_b
    difference = requantize(a << 20, mult_a, shift_a) - requantize(b << 20, mult_b, shift_b)
    out = requantize(difference, mult_out, shift_out) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def add_params(scale_a, scale_b, scale_out):
    """TFLite's derivation of quantized add multipliers (left shift 20)."""
    twice_max = 2.0 * max(scale_a, scale_b)
    return (quantize_multiplier(scale_a / twice_max), quantize_multiplier(scale_b / twice_max),
            quantize_multiplier(twice_max / ((1 << 20) * scale_out)))


def mul(a, zp_a, b, zp_b, zp_out, mult_out, shift_out, act_min=-128, act_max=127):
    product = (a.astype(np.int64) - zp_a) * (b.astype(np.int64) - zp_b)
    out = requantize(product, mult_out, shift_out) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def mul_params(scale_a, scale_b, scale_out):
    """TFLite's derivation of the quantized mul multiplier."""
    return quantize_multiplier(scale_a * scale_b / scale_out)


def add_s16(a, mult_a, shift_a, b, mult_b, shift_b, mult_out, shift_out, act_min=-32768,
            act_max=32767):
    """arm_elementwise_add_s16: symmetric int16 (zero point 0), inputs << 15; the sum wraps to 32 bits."""
    total = (requantize(a.astype(np.int64) << 15, mult_a, shift_a)
             + requantize(b.astype(np.int64) << 15, mult_b, shift_b))
    out = requantize(wrap_int32(total), mult_out, shift_out)
    return np.clip(out, act_min, act_max).astype(np.int16)


def add_s16_params(scale_a, scale_b, scale_out):
    """TFLite's 16x8 derivation: as add_params with left shift 15."""
    twice_max = 2.0 * max(scale_a, scale_b)
    return (quantize_multiplier(scale_a / twice_max), quantize_multiplier(scale_b / twice_max),
            quantize_multiplier(twice_max / ((1 << 15) * scale_out)))


def mul_s16(a, b, mult_out, shift_out, act_min=-32768, act_max=32767):
    """arm_elementwise_mul_s16: the exact product of symmetric int16 inputs, requantized."""
    out = requantize(a.astype(np.int64) * b.astype(np.int64), mult_out, shift_out)
    return np.clip(out, act_min, act_max).astype(np.int16)
