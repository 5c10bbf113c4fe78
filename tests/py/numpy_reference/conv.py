"""quantized_conv2d and quantized_depthwise_conv2d (arm_convolve_s8, arm_depthwise_conv_s8).

NHWC input, OHWI weight [C_out, KH, KW, C_in / groups] for conv2d and [1, KH, KW, C_in * m] for
depthwise. Accumulators are exact int64 sums of (input + input_offset) * weight over the taps inside
the image (padded taps add 0); the 32-bit target's wrap-around is applied when requantizing.
"""

import numpy as np

from .common import reduce_multiplier, requantize, requantize_s64, wrap_int32


def padding4(padding):
    """(pad_h, pad_w) or (top, left, bottom, right) -> (top, left, bottom, right)."""
    padding = tuple(int(p) for p in padding)
    return padding * 2 if len(padding) == 2 else padding


def output_hw(input_hw, kernel_hw, stride, padding, dilation):
    top, left, bottom, right = padding4(padding)
    pads = ((top, bottom), (left, right))
    return tuple((size + before + after - d * (k - 1) - 1) // s + 1
                 for size, k, s, d, (before, after)
                 in zip(input_hw, kernel_hw, stride, dilation, pads))


def _taps(x, kernel_hw, stride, padding, dilation, input_offset):
    """Yields (ky, kx, taps): taps[n, oy, ox, c] is input + input_offset under tap (ky, kx), 0 in
    the padding."""
    top, left, bottom, right = padding4(padding)
    shifted = np.pad(x.astype(np.int64) + input_offset,
                     ((0, 0), (top, bottom), (left, right), (0, 0)))
    oh, ow = output_hw(x.shape[1:3], kernel_hw, stride, padding, dilation)
    (sh, sw), (dh, dw) = stride, dilation
    for ky in range(kernel_hw[0]):
        for kx in range(kernel_hw[1]):
            y0, x0 = ky * dh, kx * dw
            yield ky, kx, shifted[:, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]


def conv2d_accumulator(x, weight, stride, padding, dilation, input_offset):
    """int64 [N, OH, OW, C_out]: sum over taps and group channels of (x + input_offset) * weight."""
    c_out, kh, kw, group_c = weight.shape
    groups = x.shape[3] // group_c
    w = weight.astype(np.int64).reshape(groups, c_out // groups, kh, kw, group_c)
    acc = 0
    for ky, kx, taps in _taps(x, (kh, kw), stride, padding, dilation, input_offset):
        grouped = taps.reshape(*taps.shape[:3], groups, group_c)
        acc = acc + np.einsum("nhwgc,goc->nhwgo", grouped, w[:, :, ky, kx, :])
    return acc.reshape(*acc.shape[:3], c_out)


def depthwise_conv2d_accumulator(x, weight, stride, padding, dilation, depth_multiplier,
                                 input_offset):
    """int64 [N, OH, OW, C_in * m]: output channel c * m + j sums input channel c's taps."""
    _, kh, kw, _ = weight.shape
    w = weight.astype(np.int64)
    acc = 0
    for ky, kx, taps in _taps(x, (kh, kw), stride, padding, dilation, input_offset):
        acc = acc + np.repeat(taps, depth_multiplier, axis=3) * w[0, ky, kx]
    return acc


def finish(acc, bias, output_offset, multipliers, shifts, act_min, act_max):
    """bias, 32-bit accumulate, per-channel requantize, + output_offset (32-bit add), clamp."""
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)
    scaled = requantize(wrap_int32(acc), np.asarray(multipliers, np.int64),
                        np.asarray(shifts, np.int64))
    return np.clip(wrap_int32(scaled + output_offset), act_min, act_max).astype(np.int8)


def conv2d(x, weight, bias, stride, padding, dilation, input_offset, output_offset, multipliers,
           shifts, act_min=-128, act_max=127):
    acc = conv2d_accumulator(x, weight, stride, padding, dilation, input_offset)
    return finish(acc, bias, output_offset, multipliers, shifts, act_min, act_max)


def depthwise_conv2d(x, weight, bias, stride, padding, dilation, depth_multiplier, input_offset,
                     output_offset, multipliers, shifts, act_min=-128, act_max=127):
    acc = depthwise_conv2d_accumulator(x, weight, stride, padding, dilation, depth_multiplier,
                                       input_offset)
    return finish(acc, bias, output_offset, multipliers, shifts, act_min, act_max)


def conv2d_s16(x, weight, bias, stride, padding, dilation, multipliers, shifts, act_min=-32768,
               act_max=32767):
    """arm_convolve_s16 (and the 16x16 conv's int16 weight): int16 x (zero point 0), int64 sums and
    bias, arm_nn_requantize_s64 with the reduced multiplier, int16 clamp."""
    acc = conv2d_accumulator(x, weight, stride, padding, dilation, 0)
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)
    scaled = requantize_s64(acc, reduce_multiplier(multipliers), np.asarray(shifts, np.int64))
    return np.clip(scaled, act_min, act_max).astype(np.int16)
