"""quantized_transpose_conv2d reference (arm_transpose_conv_s8 arithmetic) by scattering: every
input pixel times every tap added into the full output, which padding then crops."""

import numpy as np

from .common import requantize, wrap_int32


def transpose_conv2d(x, w, bias, stride, padding, output_padding, input_offset, output_offset,
                     mults, shifts, act_min=-128, act_max=127):
    """x NHWC int8, w OHWI int8 [C_out, KH, KW, C_in], padding (top, left, bottom, right)."""
    n, h, wd, _ = x.shape
    c_out, kh, kw, _ = w.shape
    sh, sw = stride
    top, left, bottom, right = padding
    full_h = (h - 1) * sh + kh + output_padding[0]
    full_w = (wd - 1) * sw + kw + output_padding[1]
    full = np.zeros((n, full_h, full_w, c_out), np.int64)
    xc = x.astype(np.int64) + input_offset
    for ky in range(kh):
        for kx in range(kw):
            tap = np.einsum("nhwc,oc->nhwo", xc, w[:, ky, kx, :].astype(np.int64))
            full[:, ky:ky + (h - 1) * sh + 1:sh, kx:kx + (wd - 1) * sw + 1:sw, :] += tap
    oh = full_h - top - bottom
    ow = full_w - left - right
    acc = full[:, top:top + oh, left:left + ow, :]
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    out = wrap_int32(requantize(wrap_int32(acc), np.asarray(mults), np.asarray(shifts)) + output_offset)
    return np.clip(out, act_min, act_max).astype(np.int8)
