"""quantized_mean reference, TFLite Micro's MEAN: the zero-point-centred sum over the dims and one
requantize by the multiplier of s_in / s_out with 1/count folded in by integer arithmetic."""

import numpy as np

from .common import quantize_multiplier, requantize


def mean(x, dims, keepdim, input_offset, output_offset, mult, shift, act_min=-128, act_max=127,
         dtype=np.int8):
    """int8, or symmetric int16 (quantized_mean_s16: offsets 0, the same arithmetic)."""
    total = np.sum(x.astype(np.int64) + input_offset, axis=tuple(dims), keepdims=keepdim)
    out = requantize(total, mult, shift) + output_offset
    return np.clip(out, act_min, act_max).astype(dtype)


def fold_count(mult, shift, count):
    """TFLM's reduce: k = floor(log2 count) capped at 32 and at 31 + shift; the multiplier times
    2^k divided by count (truncated), the shift minus k."""
    k = max(min(int(count).bit_length() - 1, 32, 31 + int(shift)), 0)
    return (int(mult) << k) // int(count), int(shift) - k


def mean_params(scale_in, scale_out, count):
    """The kernel's (multiplier, shift): QuantizeMultiplier(s_in / s_out) with 1/count folded in."""
    return fold_count(*quantize_multiplier(scale_in / scale_out), count)
