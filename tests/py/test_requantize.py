import numpy as np
import pytest

import cortexm
from numpy_reference.requantize import requantize, requantize_params

ops = cortexm.ops


def test_randomized_awkward_shapes_and_qparams():
    rng = np.random.default_rng(3)
    for _ in range(150):
        shape = tuple(int(d) for d in rng.integers(1, 9, size=rng.integers(0, 5)))
        x = rng.integers(-128, 128, size=shape, dtype=np.int8)
        s_in, s_out = (float(s) for s in rng.uniform(1e-4, 0.2, size=2))
        zp_in, zp_out = (int(z) for z in rng.integers(-128, 128, size=2))
        lo = int(rng.integers(-128, 100))
        hi = int(rng.integers(lo, 128))
        m, s = requantize_params(s_in, s_out)
        got = ops.requantize(x, zp_in, zp_out, m, s, activation_min=lo, activation_max=hi)
        assert got.shape == x.shape and got.dtype == np.int8
        assert np.array_equal(got, requantize(x, zp_in, zp_out, m, s, lo, hi))


def test_within_half_lsb_of_real_rescaling():
    x = np.arange(-128, 128, dtype=np.int8)
    s_in, s_out, zp_in, zp_out = 0.0417, 0.0933, 11, -7
    got = ops.requantize(x, zp_in, zp_out, *requantize_params(s_in, s_out))
    real = np.clip((x.astype(np.float64) - zp_in) * s_in / s_out + zp_out, -128, 127)
    assert np.max(np.abs(got - real)) <= 0.5 + 1e-4


def test_identity():
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    assert np.array_equal(ops.requantize(x, 5, 5, *requantize_params(0.1, 0.1)), x)


@pytest.mark.parametrize("override,match", [
    (dict(output_shift=31), "output_shift = 31"),
    (dict(output_multiplier=-1), "output_multiplier = -1"),
    (dict(input_zero_point=128), "input_zero_point = 128"),
    (dict(output_zero_point=-129), "output_zero_point = -129"),
    (dict(activation_min=3, activation_max=2), "activation_min = 3"),
])
def test_bad_params_raise_value_error(override, match):
    args = dict(input_zero_point=0, output_zero_point=0, output_multiplier=1 << 30, output_shift=0)
    with pytest.raises(ValueError, match=match):
        ops.requantize(np.zeros(4, np.int8), **{**args, **override})
    with pytest.raises(ValueError, match="dtype"):
        ops.requantize(np.zeros(4, np.float32), **args)
