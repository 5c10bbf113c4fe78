"""cortex_m.requantize reference: (x - zp_in) << 20, one double-rounding requantize, + zp_out."""

import numpy as np

from .common import quantize_multiplier, requantize as fixed_requantize


def requantize(x, zp_in, zp_out, mult, shift, act_min=-128, act_max=127):
    centered = (x.astype(np.int64) - zp_in) << 20
    out = fixed_requantize(centered, mult, shift) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def requantize_params(scale_in, scale_out):
    return quantize_multiplier(scale_in / (scale_out * (1 << 20)))


def left_shift_s16(dtype):
    """requantize_s16's left shift: 15 for int16 input (zero point 0), 20 for int8 input."""
    return 15 if np.dtype(dtype) == np.int16 else 20


def requantize_s16(x, zp_in, zp_out, mult, shift, out_dtype, act_min=None, act_max=None):
    info = np.iinfo(out_dtype)
    centered = (x.astype(np.int64) - zp_in) << left_shift_s16(x.dtype)
    out = fixed_requantize(centered, mult, shift) + zp_out
    lo = info.min if act_min is None else act_min
    hi = info.max if act_max is None else act_max
    return np.clip(out, lo, hi).astype(out_dtype)


def requantize_s16_params(scale_in, scale_out, in_dtype):
    return quantize_multiplier(scale_in / (scale_out * (1 << left_shift_s16(in_dtype))))
