import numpy as np
import pytest

import cortexm
from numpy_reference.batch_matmul import batch_matmul
from numpy_reference.common import quantize_multiplier

ops = cortexm.ops


def test_randomized_awkward_shapes_and_qparams():
    rng = np.random.default_rng(5)
    for _ in range(120):
        b, m, n, k = (int(v) for v in rng.integers(1, 14, size=4))
        k = int(rng.integers(1, 80))
        lhs = rng.integers(-128, 128, size=(b, m, k), dtype=np.int8)
        rhs = rng.integers(-128, 128, size=(b, n, k), dtype=np.int8)
        lo_off, rhs_off = (int(v) for v in rng.integers(-127, 129, size=2))
        out_off = int(rng.integers(-128, 128))
        mult, shift = quantize_multiplier(float(rng.uniform(1e-6, 5e-3)))
        lo = int(rng.integers(-128, 100))
        hi = int(rng.integers(lo, 128))
        got = ops.quantized_batch_matmul(lhs, rhs, lo_off, rhs_off, out_off, mult, shift, lo, hi)
        assert got.shape == (b, m, n)
        assert np.array_equal(got, batch_matmul(lhs, rhs, lo_off, rhs_off, out_off, mult, shift,
                                                lo, hi))


def test_attention_scores_close_to_float():
    rng = np.random.default_rng(1)
    q = rng.integers(-128, 128, size=(4, 9, 16), dtype=np.int8)
    k = rng.integers(-128, 128, size=(4, 9, 16), dtype=np.int8)
    sq, sk, so = 0.02, 0.03, 0.5
    got = ops.quantized_batch_matmul(q, k, 3, -5, 1, *quantize_multiplier(sq * sk / so))
    real = sq * (q.astype(np.float64) + 3) @ np.swapaxes(sk * (k.astype(np.float64) - 5), 1, 2)
    assert np.max(np.abs(np.clip(real / so + 1, -128, 127) - got)) <= 0.5 + 1e-6


def test_bad_arguments_raise_value_error():
    a = np.zeros((2, 3, 4), np.int8)
    with pytest.raises(ValueError, match="same batch"):
        ops.quantized_batch_matmul(a, np.zeros((1, 3, 4), np.int8), 0, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="same last dim"):
        ops.quantized_batch_matmul(a, np.zeros((2, 3, 5), np.int8), 0, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="lhs_offset = -128"):
        ops.quantized_batch_matmul(a, a, -128, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="rank"):
        ops.quantized_batch_matmul(a[0], a, 0, 0, 0, 1 << 30, 0)
