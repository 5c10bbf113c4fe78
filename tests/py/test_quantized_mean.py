import re

import numpy as np
import pytest

import cortexm
from numpy_reference.mean import mean, mean_params

ops = cortexm.ops


def test_randomized_blocks_of_dims():
    rng = np.random.default_rng(8)
    for _ in range(150):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 8, size=rank))
        first = int(rng.integers(0, rank))
        last = int(rng.integers(first, rank))
        dims = list(range(first, last + 1))
        keepdim = bool(rng.integers(0, 2))
        x = rng.integers(-128, 128, size=shape, dtype=np.int8)
        s_in = float(rng.uniform(1e-3, 0.1))
        s_out = s_in * float(rng.uniform(0.2, 4.0))
        zp_in, zp_out = (int(z) for z in rng.integers(-128, 128, size=2))
        count = int(np.prod([shape[d] for d in dims]))
        m, s = mean_params(s_in, s_out, count)
        lo = int(rng.integers(-128, 100))
        hi = int(rng.integers(lo, 128))
        got = ops.quantized_mean(x, dims, keepdim, -zp_in, zp_out, m, s, lo, hi)
        want = mean(x, dims, keepdim, -zp_in, zp_out, m, s, lo, hi)
        assert got.shape == want.shape
        assert np.array_equal(got, want)
        real = s_in * (x.astype(np.float64) - zp_in).mean(axis=tuple(dims), keepdims=keepdim)
        assert np.all(np.abs(np.clip(real / s_out + zp_out, lo, hi) - got) <= 0.75)


def test_bad_arguments_raise_value_error():
    x = np.zeros((2, 3, 4), np.int8)
    with pytest.raises(ValueError, match="contiguous block"):
        ops.quantized_mean(x, [0, 2], False, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="out of range"):
        ops.quantized_mean(x, [3], False, 0, 0, 1 << 30, 0)
    with pytest.raises(ValueError, match="input_offset = -128"):
        ops.quantized_mean(x, [1], False, -128, 0, 1 << 30, 0)


@pytest.mark.parametrize("bad", [1, 0.0, None, "yes"])
def test_keepdim_must_be_a_bool(bad):
    x = np.zeros((1, 3, 3, 2), np.int8)
    with pytest.raises(ValueError, match=rf"^quantized_mean: keepdim = {re.escape(repr(bad))} must be a bool"):
        ops.quantized_mean(x, [1, 2], bad, 0, 0, 1 << 30, 0)
    ops.quantized_mean(x, [1, 2], np.bool_(True), 0, 0, 1 << 30, 0)
