"""NHWC quantized_avg_pool2d / quantized_max_pool2d references (arm_avgpool_s8, arm_max_pool_s8;
max_pool2d with dtype int16: arm_max_pool_s16)."""

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _windows(a, kernel, stride, padding, fill):
    """[N, OH, OW, C, KH, KW] windows of `a` padded with fill (top, left, bottom, right)."""
    top, left, bottom, right = padding
    padded = np.pad(a, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    windows = sliding_window_view(padded, kernel, axis=(1, 2))
    return windows[:, ::stride[0], ::stride[1]]


def avg_pool2d(x, kernel, stride, padding, act_min=-128, act_max=127):
    """Sum and count of the valid taps; sum / count rounded halves away from zero; clamped."""
    sums = _windows(x.astype(np.int64), kernel, stride, padding, 0).sum(axis=(-2, -1))
    valid = np.ones((1,) + x.shape[1:3] + (1,), np.int64)
    counts = _windows(valid, kernel, stride, padding, 0).sum(axis=(-2, -1))
    rounded = np.where(sums > 0, sums + counts // 2, sums - counts // 2)
    average = np.sign(rounded) * (np.abs(rounded) // counts)  # C division truncates toward zero
    return np.clip(average, act_min, act_max).astype(np.int8)


def max_pool2d(x, kernel, stride, padding, act_min=-128, act_max=127, dtype=np.int8):
    """Maximum of the valid taps (padding below any int8 / int16), clamped."""
    maxima = _windows(x.astype(np.int64), kernel, stride, padding, -(1 << 40)).max(axis=(-2, -1))
    return np.clip(maxima, act_min, act_max).astype(dtype)


def padding4(padding):
    """(pad_h, pad_w), one int, or (top, left, bottom, right) -> (top, left, bottom, right)."""
    p = np.atleast_1d(padding).tolist()
    if len(p) == 1:
        return (p[0],) * 4
    if len(p) == 2:
        return (p[0], p[1], p[0], p[1])
    return tuple(p)
