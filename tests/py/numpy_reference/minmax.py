"""quantized_maximum / quantized_minimum references: inputs rescaled as in quantized_add (left
shift 20, twice the larger scale), compared, the winner requantized to the output."""

import numpy as np

from .common import quantize_multiplier, requantize


def minmax(pick, a, zp_a, mult_a, shift_a, b, zp_b, mult_b, shift_b, zp_out, mult_out,
           shift_out, act_min=-128, act_max=127):
    x = requantize((a.astype(np.int64) - zp_a) << 20, mult_a, shift_a)
    y = requantize((b.astype(np.int64) - zp_b) << 20, mult_b, shift_b)
    out = requantize(pick(x, y), mult_out, shift_out) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def maximum(*args, **kwargs):
    return minmax(np.maximum, *args, **kwargs)


def minimum(*args, **kwargs):
    return minmax(np.minimum, *args, **kwargs)


def minmax_params(scale_a, scale_b, scale_out):
    twice_max = 2.0 * max(scale_a, scale_b)
    return (quantize_multiplier(scale_a / twice_max), quantize_multiplier(scale_b / twice_max),
            quantize_multiplier(twice_max / ((1 << 20) * scale_out)))
