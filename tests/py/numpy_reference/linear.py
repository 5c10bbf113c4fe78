"""quantized_linear reference (arm_fully_connected_s8 / _per_channel_s8) and quantized_linear_s16
(arm_fully_connected_s16)."""

import numpy as np

from .common import (quantize_multiplier, reduce_multiplier, requantize, requantize_s64,
                     wrap_int32)


def linear(x, w, bias, input_offset, filter_offset, output_offset, multipliers, shifts,
           act_min=-128, act_max=127):
    """x [..., K] int8, w [C_out, K] int8, bias [C_out] int32 or None; one multiplier or C_out."""
    acc = (x.astype(np.int64) + input_offset) @ (w.astype(np.int64) + filter_offset).T
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    acc = wrap_int32(acc)  # the target's 32-bit accumulator wraps
    channels = w.shape[0]
    multipliers = np.broadcast_to(np.asarray(multipliers, np.int64), (channels,))
    shifts = np.broadcast_to(np.asarray(shifts, np.int64), (channels,))
    out = requantize(acc, multipliers, shifts) + output_offset
    return np.clip(out, act_min, act_max).astype(np.int8)


def linear_params(input_scale, weight_scales, output_scale):
    """Per-channel (or per-tensor, one weight scale) multipliers and shifts by TFLite's rules."""
    pairs = [quantize_multiplier(input_scale * float(s) / output_scale)
             for s in np.atleast_1d(weight_scales)]
    return [m for m, _ in pairs], [s for _, s in pairs]


def linear_s16(x, w, bias, multipliers, shifts, act_min=-32768, act_max=32767):
    """arm_fully_connected_s16: int16 x [..., K] and int8 (16x16: int16) w [C_out, K] (zero points
    0), int64 sums and bias, arm_nn_requantize_s64 with the reduced multiplier (one or C_out), int16
    clamp."""
    acc = x.astype(np.int64) @ w.astype(np.int64).T
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64)
    channels = w.shape[0]
    multipliers = np.broadcast_to(np.asarray(multipliers, np.int64), (channels,))
    shifts = np.broadcast_to(np.asarray(shifts, np.int64), (channels,))
    scaled = requantize_s64(acc, reduce_multiplier(multipliers), shifts)
    return np.clip(scaled, act_min, act_max).astype(np.int16)
