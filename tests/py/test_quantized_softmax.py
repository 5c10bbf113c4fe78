import numpy as np
import pytest

import cortexm
from numpy_reference.softmax import softmax, softmax_scaling

ops = cortexm.ops


def float_softmax_q(x, scale, dim):
    real = x.astype(np.float64) * scale
    e = np.exp(real - real.max(axis=dim, keepdims=True))
    return np.minimum(e / e.sum(axis=dim, keepdims=True) * 256 - 128, 127)


@pytest.mark.parametrize("shape,dim", [((1, 12), -1), ((7, 13), 1), ((2, 3, 5, 4), 1), ((3, 1), 1),
                                       ((2, 300), 0), ((4, 9, 2), -2), ((1000,), 0)])
def test_bit_exact_with_numpy(shape, dim):
    rng = np.random.default_rng(len(shape) * 13 + dim)
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    params = ops.softmax_scaling(0.0731)
    assert params == softmax_scaling(0.0731)
    got = ops.quantized_softmax(x, *params, dim=dim)
    assert got.dtype == np.int8 and got.shape == x.shape
    assert np.array_equal(got, softmax(x, *params, dim=dim))
    assert np.abs(got - float_softmax_q(x, 0.0731, dim)).max() <= 1.0


def test_randomized_awkward_scales_and_ranges():
    rng = np.random.default_rng(5)
    for _ in range(200):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 9, size=rank))
        dim = int(rng.integers(-rank, rank))
        lo = int(rng.integers(-128, 128))
        x = rng.integers(lo, int(rng.integers(lo, 128)) + 1, size=shape).astype(np.int8)
        scale = float(10 ** rng.uniform(-7, 1.5))
        params = ops.softmax_scaling(scale)
        assert params == softmax_scaling(scale)
        got = ops.quantized_softmax(x, *params, dim=dim)
        assert np.array_equal(got, softmax(x, *params, dim=dim)), (shape, dim, scale)
        assert np.abs(got - float_softmax_q(x, scale, dim)).max() <= 1.0


def test_large_rows():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=(3, 4096), dtype=np.int8)
    params = ops.softmax_scaling(0.02)
    assert np.array_equal(ops.quantized_softmax(x, *params), softmax(x, *params))
    same = np.full((1, 4096), 9, np.int8)
    assert np.array_equal(ops.quantized_softmax(same, *params), np.full((1, 4096), -128, np.int8))


def test_bad_arguments_name_themselves():
    x = np.zeros((2, 3), np.int8)
    with pytest.raises(ValueError, match="input_shift"):
        ops.quantized_softmax(x, 1 << 30, 32, -10)
    with pytest.raises(ValueError, match="diff_min"):
        ops.quantized_softmax(x, 1 << 30, 5, 3)
    with pytest.raises(ValueError, match="dim"):
        ops.quantized_softmax(x, 1 << 30, 5, -10, dim=2)
    with pytest.raises(ValueError, match="row_size"):
        ops.quantized_softmax(np.zeros((1, 5000), np.int8), 1 << 30, 5, -10)
    with pytest.raises(ValueError, match="dtype"):
        ops.quantized_softmax(x.astype(np.int16), 1 << 30, 5, -10)
    with pytest.raises(ValueError, match="input_scale"):
        ops.softmax_scaling(1e-9)
