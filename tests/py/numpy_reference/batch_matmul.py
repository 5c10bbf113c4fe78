"""quantized_batch_matmul reference (arm_batch_matmul_s8, rhs transposed), int32 wrapping sums;
batch_matmul_s16 (arm_batch_matmul_s16): int64 sums, arm_nn_requantize_s64."""

import numpy as np

from .common import reduce_multiplier, requantize, requantize_s64, wrap_int32


def batch_matmul(lhs, rhs, lhs_offset, rhs_offset, out_offset, mult, shift, act_min=-128,
                 act_max=127):
    a = lhs.astype(np.int64) + lhs_offset
    b = rhs.astype(np.int64) + rhs_offset
    acc = wrap_int32(np.einsum("bmk,bnk->bmn", a, b))
    out = wrap_int32(requantize(acc, mult, shift) + out_offset)
    return np.clip(out, act_min, act_max).astype(np.int8)


def batch_matmul_s16(lhs, rhs, mult, shift, act_min=-32768, act_max=32767):
    acc = np.einsum("bmk,bnk->bmn", lhs.astype(np.int64), rhs.astype(np.int64))
    out = requantize_s64(acc, reduce_multiplier(mult), shift)
    return np.clip(out, act_min, act_max).astype(np.int16)
