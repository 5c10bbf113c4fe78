"""quantized_layer_norm reference, in Python integers: per row of n int8 values q,
S = sum q, d = n q - S, W = n sum q^2 - S^2 + eps_term (1 if 0), z = d / sqrt(W) in Q.12 through
isqrt (W scaled by 4^k into [2^60, 2^62), inv = 2^61 / isqrt rounded half up), then
(z * w) >> product_shift (rounded half up) + bias, one requantize, the output zero point, clamp.

layer_norm_params gives what the lowering derives from the float graph: the int16 weight
(symmetric per tensor, max|w| / 32767), the smallest product_shift keeping |z| |w| + |bias| within
int32, the int32 bias at s_w 2^(product_shift - 12), eps_term = round(n^2 eps / s_in^2) capped at
2^60, and the multiplier of that unit over s_out."""

import math

import numpy as np

from .common import quantize_multiplier, requantize, wrap_int32

FRACTION_BITS = 12
MAX_EPS_TERM = 1 << 60


def layer_norm_params(n, eps, s_in, s_out, weight=None, bias=None):
    """(weight_int16 or None, bias_int32 or None, eps_term, product_shift, multiplier, shift)."""
    wq, s_w, wq_max = None, 1.0, 1.0
    if weight is not None:
        w = np.asarray(weight, np.float64).reshape(-1)
        w_max = float(np.max(np.abs(w)))
        s_w = w_max / 32767.0 if w_max > 0 else 1.0
        wq = np.clip(np.rint(w / s_w), -32767, 32767).astype(np.int64)
        wq_max = 2.0**15
    z_max = (math.sqrt(n) + 1.0) * 2.0**FRACTION_BITS
    limit = 2.0**31 - 1.0
    for product_shift in range(32):
        unit = s_w * 2.0 ** (product_shift - FRACTION_BITS)
        bq = None
        if bias is not None:
            bq = np.rint(np.asarray(bias, np.float64).reshape(-1) / unit)
        b_max = 0.0 if bq is None else float(np.max(np.abs(bq)))
        if z_max * wq_max * 2.0**-product_shift + 1.0 + b_max <= limit:
            break
    else:
        raise ValueError("bias does not fit int32")
    if not 0 < unit / s_out < 2.0**30:
        raise ValueError("requantize scale out of range")
    mult, shift = quantize_multiplier(unit / s_out)
    eps_term = np.rint(float(n) * float(n) * eps / (s_in * s_in))
    eps_term = MAX_EPS_TERM if not eps_term < MAX_EPS_TERM else int(eps_term)
    return wq, None if bq is None else bq.astype(np.int64), eps_term, product_shift, mult, shift


def layer_norm(x, normalized_rank, wq, bq, eps_term, product_shift, out_zp, mult, shift,
               qmin=-128, qmax=127):
    x = np.asarray(x)
    n = int(np.prod(x.shape[len(x.shape) - normalized_rank:]))
    rows = x.reshape(-1, n).astype(np.int64)
    out = np.empty(rows.shape, np.int64)
    for r, q in enumerate(rows):
        total = int(q.sum())
        w = n * int((q * q).sum()) - total * total + int(eps_term)
        w = w or 1
        k = (62 - w.bit_length()) // 2
        root = math.isqrt(w << (2 * k))
        inv = ((1 << 62) + root) // (2 * root)  # 2^61 / root, rounded half up
        z_shift = 61 - FRACTION_BITS - k
        d = n * q - total
        z = (d * inv + (1 << (z_shift - 1))) >> z_shift
        t = z * (wq if wq is not None else 1)
        if product_shift:
            t = (t + (1 << (product_shift - 1))) >> product_shift
        acc = wrap_int32(wrap_int32(t) + (bq if bq is not None else 0))
        out[r] = wrap_int32(requantize(acc, mult, shift) + out_zp)
    return np.clip(out, qmin, qmax).astype(np.int8).reshape(x.shape)
