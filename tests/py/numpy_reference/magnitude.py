"""quantized_magnitude_s16: |z| of int16 real and imaginary parts with an exact integer square root."""

import math

import numpy as np

from .common import requantize, wrap_int32

FRACTION_BITS = 15


def rounded_sqrt(n):
    """round(sqrt(n)) for non-negative integers, exactly (math.isqrt is floor(sqrt(n)))."""
    r = math.isqrt(int(n))
    return r + 1 if n - r * r > r else r


def magnitude_s16(real, imag, multiplier, shift, zero_point, act_min, act_max, dtype):
    sums = real.astype(np.int64) ** 2 + imag.astype(np.int64) ** 2
    roots = np.array([rounded_sqrt(int(s) << (2 * FRACTION_BITS)) for s in sums.ravel()],
                     dtype=np.int64).reshape(sums.shape)
    out = wrap_int32(requantize(roots, multiplier, shift) + zero_point)
    return np.clip(out, act_min, act_max).astype(dtype)
