import numpy as np
import pytest

import cortexm
from numpy_reference.softmax import log_softmax, softmax_scaling

ops = cortexm.ops


def float_log_softmax_q(x, scale, dim):
    """Float log_softmax in units of the output (16/256, zero point 127), unrounded, unclamped."""
    real = x.astype(np.float64) * scale
    real = real - real.max(axis=dim, keepdims=True)
    return (real - np.log(np.exp(real).sum(axis=dim, keepdims=True))) * 16 + 127


def error_lsb(got, x, scale, dim):
    want = float_log_softmax_q(x, scale, dim)
    kept = want >= -127.5  # below is clamped to -128
    return float(np.abs(got - want)[kept].max()) if kept.any() else 0.0


@pytest.mark.parametrize("shape,dim", [((1, 12), -1), ((7, 13), 1), ((2, 3, 5, 4), 1), ((3, 1), 1),
                                       ((2, 300), 0), ((4, 9, 2), -2), ((2, 4096, 3), 1)])
def test_bit_exact_with_numpy_and_close_to_float(shape, dim):
    rng = np.random.default_rng(len(shape) * 7 + dim)
    x = rng.integers(-128, 128, size=shape, dtype=np.int8)
    params = ops.log_softmax_scaling(0.0517)
    assert params == softmax_scaling(0.0517, log=True)
    got = ops.quantized_log_softmax(x, *params, dim=dim)
    assert got.dtype == np.int8 and got.shape == x.shape
    assert np.array_equal(got, log_softmax(x, *params, dim=dim))
    assert error_lsb(got, x, 0.0517, dim) <= 0.5 + 1e-6


def test_randomized_awkward_scales_and_ranges():
    """Max error against float log_softmax over all cases: the fixed-point log and exp are exact
    to far below the output step, so the int8 output is float's rounded (<= 0.5 LSB)."""
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(200):
        rank = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 9, size=rank))
        dim = int(rng.integers(-rank, rank))
        lo = int(rng.integers(-128, 128))
        x = rng.integers(lo, int(rng.integers(lo, 128)) + 1, size=shape).astype(np.int8)
        scale = float(10 ** rng.uniform(-6.5, 1.2))
        params = ops.log_softmax_scaling(scale)
        assert params == softmax_scaling(scale, log=True)
        got = ops.quantized_log_softmax(x, *params, dim=dim)
        assert np.array_equal(got, log_softmax(x, *params, dim=dim)), (shape, dim, scale)
        worst = max(worst, error_lsb(got, x, scale, dim))
    assert worst <= 0.5 + 1e-6, worst


def test_bad_arguments_name_themselves():
    x = np.zeros((2, 3), np.int8)
    params = ops.log_softmax_scaling(0.1)
    with pytest.raises(ValueError, match="reverse_scaling_right_shift"):
        ops.quantized_log_softmax(x, *params[:4], 32)
    with pytest.raises(ValueError, match="dim"):
        ops.quantized_log_softmax(x, *params, dim=-3)
    with pytest.raises(ValueError, match="input_scale"):
        ops.log_softmax_scaling(1e-9)
