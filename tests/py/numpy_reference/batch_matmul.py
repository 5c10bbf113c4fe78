"""quantized_batch_matmul reference (arm_batch_matmul_s8, rhs transposed), int32 wrapping sums."""

import numpy as np

from .common import requantize, wrap_int32


def batch_matmul(lhs, rhs, lhs_offset, rhs_offset, out_offset, mult, shift, act_min=-128,
                 act_max=127):
    a = lhs.astype(np.int64) + lhs_offset
    b = rhs.astype(np.int64) + rhs_offset
    acc = wrap_int32(np.einsum("bmk,bnk->bmn", a, b))
    out = wrap_int32(requantize(acc, mult, shift) + out_offset)
    return np.clip(out, act_min, act_max).astype(np.int8)
