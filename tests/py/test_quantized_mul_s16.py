"""cortexm.ops.quantized_mul_s16 against the numpy reference (arm_elementwise_mul_s16 arithmetic)."""

import numpy as np
import pytest

import cortexm
from numpy_reference.elementwise import mul_params, mul_s16
from test_quantized_add_s16 import SHAPES, int16s

ops = cortexm.ops


def run_mul(a, b, scales, act=(-32768, 32767)):
    m, s = mul_params(*scales)
    got = ops.quantized_mul_s16(a, b, m, s, activation_min=act[0], activation_max=act[1])
    return got, mul_s16(a, b, m, s, *act)


@pytest.mark.parametrize("shape_a,shape_b", SHAPES)
def test_bit_exact_with_numpy(shape_a, shape_b):
    rng = np.random.default_rng(len(shape_a) * 31 + len(shape_b))
    a, b = int16s(rng, shape_a), int16s(rng, shape_b)
    scales = (3.1e-4, 4.7e-4, 2.9e-4)
    got, want = run_mul(a, b, scales)
    assert got.shape == np.broadcast_shapes(shape_a, shape_b)
    assert got.dtype == np.int16
    assert np.array_equal(got, want)
    exact = np.clip(scales[0] * a.astype(np.float64) * scales[1] * b / scales[2], -32768, 32767)
    assert np.max(np.abs(exact - got)) <= 0.51


@pytest.mark.parametrize("scales", [(1e-3, 1e-3, 1.01e-6), (1e-3, 1e-3, 10.0), (0.9, 3e-7, 1e-3)])
def test_tiny_and_large_scale_ratios(scales):
    rng = np.random.default_rng(3)
    a, b = int16s(rng, (9, 13)), int16s(rng, (9, 1))
    got, want = run_mul(a, b, scales)
    assert np.array_equal(got, want)


def test_square_of_most_negative_fits():
    a = np.array([-32768, 32767, -32768], np.int16)
    got = ops.quantized_mul_s16(a, a, 1 << 30, -14)  # x * x / 2^15
    assert got.tolist() == [32767, 32766, 32767]


def test_randomized_awkward_qparams():
    rng = np.random.default_rng(6)
    for _ in range(150):
        rank = rng.integers(1, 5)
        dims = rng.integers(1, 7, size=rank)
        shape_a = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)
        shape_b = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)[rng.integers(0, 2):]
        if rng.random() < 0.25:
            shape_a, shape_b = shape_b, shape_a
        a, b = int16s(rng, shape_a), int16s(rng, shape_b)
        sa, sb = (float(10 ** s) for s in rng.uniform(-7, 0, size=2))
        so = sa * sb * float(10 ** rng.uniform(0.01, 6))
        lo = int(rng.integers(-32768, 30000))
        got, want = run_mul(a, b, (sa, sb, so), (lo, int(rng.integers(lo, 32768))))
        assert np.array_equal(got, want)


@pytest.mark.parametrize("multiplier,shift", [(2**31 - 1, 30), (2**31 - 1, -31), (1, 30), (0, 0),
                                              (1 << 30, 2)])
def test_extreme_requantization(multiplier, shift):
    rng = np.random.default_rng(shift + 40)
    a, b = int16s(rng, (9, 13)), int16s(rng, (13,))
    got = ops.quantized_mul_s16(a, b, multiplier, shift)
    assert np.array_equal(got, mul_s16(a, b, multiplier, shift))


def test_fused_activation_clamps():
    rng = np.random.default_rng(2)
    a, b = int16s(rng, (4096,)), int16s(rng, (4096,))
    got, want = run_mul(a, b, (1e-3, 1e-3, 1e-3), (-1000, 250))
    assert np.array_equal(got, want)
    assert got.min() == -1000 and got.max() == 250


def test_non_contiguous_input():
    rng = np.random.default_rng(1)
    a = int16s(rng, (6, 8))[:, ::2]
    b = int16s(rng, (6, 4))
    got, want = run_mul(a, b, (0.1, 0.2, 0.3))
    assert np.array_equal(got, want)


BASE = dict(output_multiplier=1 << 30, output_shift=0)


@pytest.mark.parametrize("override,match", [
    (dict(output_shift=31), "output_shift = 31"),
    (dict(output_shift=-32), "output_shift = -32"),
    (dict(output_multiplier=-1), "output_multiplier = -1"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5"),
    (dict(activation_min=-32769), "activation_min = -32769"),
    (dict(activation_max=32768), "activation_max = 32768"),
])
def test_bad_params_raise_value_error(override, match):
    a = np.zeros((4,), np.int16)
    with pytest.raises(ValueError, match=match):
        ops.quantized_mul_s16(a, a, **{**BASE, **override})


def test_bad_arrays_raise_value_error():
    a = np.zeros((4,), np.int16)
    with pytest.raises(ValueError, match="self dtype int8 must be int16"):
        ops.quantized_mul_s16(a.astype(np.int8), a, **BASE)
    with pytest.raises(ValueError, match="broadcast"):
        ops.quantized_mul_s16(a, np.zeros((3,), np.int16), **BASE)
    with pytest.raises(ValueError, match="numpy array"):
        ops.quantized_mul_s16([1, 2], a, **BASE)
