import numpy as np
import pytest

import cortexm
from numpy_reference.elementwise import mul, mul_params

ops = cortexm.ops


def run_mul(a, b, scales, zps, act=(-128, 127)):
    m, s = mul_params(*scales)
    got = ops.quantized_mul(a, zps[0], b, zps[1], zps[2], m, s, activation_min=act[0],
                            activation_max=act[1])
    want = mul(a, zps[0], b, zps[1], zps[2], m, s, *act)
    return got, want


SHAPES = [((2, 5, 7, 13), (2, 5, 7, 13)), ((1001,), (1001,)), ((2, 5, 7, 13), (13,)),
          ((2, 5, 7, 13), (2, 1, 1, 13)), ((2, 1, 13), (2, 9, 13)), ((3, 1, 5), (1, 4, 1)),
          ((), (3, 3)), ((7, 11), (1,)), ((1, 1), (1,))]


@pytest.mark.parametrize("shape_a,shape_b", SHAPES)
def test_bit_exact_with_numpy(shape_a, shape_b):
    rng = np.random.default_rng(len(shape_a) * 31 + len(shape_b))
    a = rng.integers(-128, 128, size=shape_a, dtype=np.int8)
    b = rng.integers(-128, 128, size=shape_b, dtype=np.int8)
    scales, zps = (0.031, 0.047, 0.19), (17, -9, 3)
    got, want = run_mul(a, b, scales, zps)
    assert got.shape == np.broadcast_shapes(shape_a, shape_b)
    assert got.dtype == np.int8
    assert np.array_equal(got, want)
    real = scales[0] * (a.astype(np.float64) - zps[0]) * scales[1] * (b.astype(np.float64) - zps[1])
    exact = np.clip(real / scales[2] + zps[2], -128, 127)
    assert np.mean(np.abs(exact - got) <= 1.0) >= 0.99


def test_randomized_awkward_qparams():
    rng = np.random.default_rng(6)
    for _ in range(150):
        rank = rng.integers(1, 5)
        dims = rng.integers(1, 7, size=rank)
        shape_a = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)
        shape_b = tuple(int(d) if rng.random() > 0.3 else 1 for d in dims)[rng.integers(0, 2):]
        if rng.random() < 0.25:
            shape_a, shape_b = shape_b, shape_a
        a = rng.integers(-128, 128, size=shape_a, dtype=np.int8)
        b = rng.integers(-128, 128, size=shape_b, dtype=np.int8)
        sa, sb = (float(s) for s in rng.uniform(1e-4, 0.1, size=2))
        so = sa * sb * float(rng.uniform(1.0, 200.0))
        zps = tuple(int(z) for z in rng.integers(-128, 128, size=3))
        lo = int(rng.integers(-128, 100))
        got, want = run_mul(a, b, (sa, sb, so), zps, (lo, int(rng.integers(lo, 128))))
        assert np.array_equal(got, want)


@pytest.mark.parametrize("multiplier,shift", [(2**31 - 1, 30), (2**31 - 1, -31), (1, 30), (0, 0),
                                              (1 << 30, 16)])
def test_extreme_requantization(multiplier, shift):
    rng = np.random.default_rng(shift + 40)
    a = rng.integers(-128, 128, size=(9, 13), dtype=np.int8)
    b = rng.integers(-128, 128, size=(13,), dtype=np.int8)
    got = ops.quantized_mul(a, -128, b, 127, 0, multiplier, shift)
    assert np.array_equal(got, mul(a, -128, b, 127, 0, multiplier, shift))


def test_fused_activation_clamps():
    a = np.arange(-128, 128, dtype=np.int8)
    got, want = run_mul(a, a[::-1].copy(), (0.02, 0.02, 0.01), (0, 0, -128), (-128, -28))
    assert np.array_equal(got, want)
    assert got.max() <= -28


def test_non_contiguous_input():
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, size=(6, 8), dtype=np.int8)[:, ::2]
    b = rng.integers(-128, 128, size=(6, 4), dtype=np.int8)
    got, want = run_mul(a, b, (0.1, 0.2, 0.3), (1, 2, 3))
    assert np.array_equal(got, want)


BASE = dict(self_zero_point=0, other_zero_point=0, output_zero_point=0,
            output_multiplier=1 << 30, output_shift=0)


@pytest.mark.parametrize("override,match", [
    (dict(output_shift=31), "output_shift = 31"),
    (dict(output_shift=-32), "output_shift = -32"),
    (dict(output_multiplier=-1), "output_multiplier = -1"),
    (dict(output_multiplier=1 << 31), "output_multiplier = 2147483648"),
    (dict(output_zero_point=128), "output_zero_point = 128"),
    (dict(self_zero_point=-129), "self_zero_point = -129"),
    (dict(other_zero_point=128), "other_zero_point = 128"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5"),
    (dict(activation_min=-129), "activation_min = -129"),
])
def test_bad_params_raise_value_error(override, match):
    a = np.zeros((4,), np.int8)
    with pytest.raises(ValueError, match=match):
        ops.quantized_mul(a, other=a, **{**BASE, **override})


def test_bad_arrays_raise_value_error():
    a = np.zeros((4,), np.int8)
    with pytest.raises(ValueError, match="self dtype float32 must be int8"):
        ops.quantized_mul(a.astype(np.float32), other=a, **BASE)
    with pytest.raises(ValueError, match="other dtype int16 must be int8"):
        ops.quantized_mul(a, other=a.astype(np.int16), **BASE)
    with pytest.raises(ValueError, match="broadcast"):
        ops.quantized_mul(a, other=np.zeros((3,), np.int8), **BASE)
    with pytest.raises(ValueError, match="numpy array"):
        ops.quantized_mul([1, 2], other=a, **BASE)
    with pytest.raises(ValueError, match="must not be empty"):
        ops.quantized_mul(np.zeros((0,), np.int8), other=a[:1], **BASE)
