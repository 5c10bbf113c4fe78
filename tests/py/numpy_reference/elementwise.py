"""quantized_add / quantized_mul references (arm_elementwise_add_s8 / _mul_s8)."""

import numpy as np

from .common import quantize_multiplier, requantize


def add(a, zp_a, mult_a, shift_a, b, zp_b, mult_b, shift_b, zp_out, mult_out, shift_out,
        act_min=-128, act_max=127):
    a = a.astype(np.int64) - zp_a
    b = b.astype(np.int64) - zp_b
    total = requantize(a << 20, mult_a, shift_a) + requantize(b << 20, mult_b, shift_b)
    out = requantize(total, mult_out, shift_out) + zp_out
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
