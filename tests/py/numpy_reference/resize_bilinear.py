"""TFLite's integer RESIZE_BILINEAR (reference_ops::ResizeBilinearInteger) on NCHW int8 / int16:
source coordinates with 10 fractional bits (half_pixel_centers = not align_corners), int64 sums of
the four neighbours weighted by products of 10-bit fractions, rounded half away from zero at 2^20
with C's truncating division. Written from the arithmetic, in numpy, apart from the C++ kernel."""

import numpy as np


def _c_div(a, b):
    """C's integer division (towards zero) for b > 0."""
    a = np.asarray(a, np.int64)
    return np.sign(a) * (np.abs(a) // b)


def _step_10(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return (1024 * (n_in - 1) + (n_out - 1) // 2) // (n_out - 1)
    return (1024 * n_in + n_out // 2) // n_out


def _coordinates(n_in, n_out, align_corners):
    """Per output index: the 10-bit source coordinate and the lower and upper source pixels."""
    step = _step_10(n_in, n_out, align_corners)
    i = np.arange(n_out, dtype=np.int64)
    scaled = i * step + (0 if align_corners else step // 2 - 512)
    lower = np.maximum(_c_div(scaled, 1024), 0)
    upper = np.minimum(_c_div(scaled + 1023, 1024), n_in - 1)
    assert lower.max() <= n_in - 1, "the 10-bit step would read past the input"
    return scaled, lower, upper


def resize_bilinear_integer(x, out_h, out_w, align_corners):
    """x: int8 / int16 [N, C, H, W] -> the same dtype [N, C, out_h, out_w]."""
    x = np.asarray(x)
    h, w = x.shape[2], x.shape[3]
    sy, y0, y1 = _coordinates(h, out_h, align_corners)
    sx, x0, x1 = _coordinates(w, out_w, align_corners)
    dy = (sy - 1024 * y0)[:, None]  # [out_h, 1]
    dx = (sx - 1024 * x0)[None, :]  # [1, out_w]
    v = x.astype(np.int64)
    total = (v[:, :, y0[:, None], x0[None, :]] * (1024 - dy) * (1024 - dx)
             + v[:, :, y1[:, None], x0[None, :]] * dy * (1024 - dx)
             + v[:, :, y0[:, None], x1[None, :]] * (1024 - dy) * dx
             + v[:, :, y1[:, None], x1[None, :]] * dy * dx)
    rounded = _c_div(total + np.where(total > 0, 1 << 19, -(1 << 19)), 1 << 20)
    return rounded.astype(x.dtype)
