"""cortex_m.requantize reference: (x - zp_in) << 20, one double-rounding requantize, + zp_out."""

import numpy as np

from .common import quantize_multiplier, requantize as fixed_requantize


def requantize(x, zp_in, zp_out, mult, shift, act_min=-128, act_max=127):
    centered = (x.astype(np.int64) - zp_in) << 20
    out = fixed_requantize(centered, mult, shift) + zp_out
    return np.clip(out, act_min, act_max).astype(np.int8)


def requantize_params(scale_in, scale_out):
    return quantize_multiplier(scale_in / (scale_out * (1 << 20)))
