"""quantize_per_tensor / dequantize_per_tensor references: PyTorch's quantized_decomposed
semantics in numpy float32 (inv_scale = 1.0f / scale, round half to even), NaN -> zero point."""

import numpy as np


def quantize_per_tensor(x, scale, zero_point, quant_min, quant_max, dtype):
    x = np.asarray(x, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        inv_scale = np.float32(1.0) / np.float32(scale)
        v = x * inv_scale
    v = np.where(np.isnan(v), np.float32(0), v)
    q = np.rint(v).astype(np.float64) + zero_point  # rint rounds halves to even
    return np.clip(q, quant_min, quant_max).astype(dtype)


def dequantize_per_tensor(q, scale, zero_point):
    return (q.astype(np.float32) - np.float32(zero_point)) * np.float32(scale)
