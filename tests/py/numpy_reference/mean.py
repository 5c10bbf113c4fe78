"""quantized_mean reference: centered sum over the dims, one requantize by s_in / (count s_out)."""

import numpy as np

from .common import quantize_multiplier, requantize


def mean(x, dims, keepdim, input_offset, output_offset, mult, shift, act_min=-128, act_max=127):
    total = np.sum(x.astype(np.int64) + input_offset, axis=tuple(dims), keepdims=keepdim)
    out = requantize(total, mult, shift) + output_offset
    return np.clip(out, act_min, act_max).astype(np.int8)


def mean_params(scale_in, scale_out, count):
    return quantize_multiplier(scale_in / (count * scale_out))
