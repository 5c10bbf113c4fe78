"""cortexm.ops.quantized_add_s16 against the numpy reference (arm_elementwise_add_s16 arithmetic)."""

import numpy as np
import pytest

import cortexm
from numpy_reference.elementwise import add_s16, add_s16_params

ops = cortexm.ops

SHAPES = [((2, 5, 7, 13), (2, 5, 7, 13)), ((1001,), (1001,)), ((2, 5, 7, 13), (13,)),
          ((2, 5, 7, 13), (2, 1, 1, 13)), ((2, 1, 1, 13), (2, 5, 7, 13)), ((3, 1, 5), (1, 4, 1)),
          ((), (3, 3)), ((7, 11), (1,)), ((1, 1), (1,))]


def int16s(rng, shape):
    """Uniform int16 values, a fifth of them at -32768 / 32767."""
    x = rng.integers(-32768, 32768, size=shape).astype(np.int16)
    extreme = rng.random(size=shape) < 0.2
    return np.where(extreme, np.where(rng.random(size=shape) < 0.5, -32768, 32767), x).astype(np.int16)


def run_add(a, b, scales, act=(-32768, 32767)):
    (ma, sa), (mb, sb), (mo, so) = add_s16_params(*scales)
    got = ops.quantized_add_s16(a, ma, sa, b, mb, sb, mo, so, activation_min=act[0],
                                activation_max=act[1])
    want = add_s16(a, ma, sa, b, mb, sb, mo, so, *act)
    return got, want


@pytest.mark.parametrize("shape_a,shape_b", SHAPES)
def test_bit_exact_with_numpy(shape_a, shape_b):
    rng = np.random.default_rng(len(shape_a) * 31 + len(shape_b))
    a, b = int16s(rng, shape_a), int16s(rng, shape_b)
    scales = (3.1e-4, 4.7e-4, 9.0e-4)
    got, want = run_add(a, b, scales)
    assert got.shape == np.broadcast_shapes(shape_a, shape_b)
    assert got.dtype == np.int16
    assert np.array_equal(got, want)
    exact = np.clip((scales[0] * a.astype(np.float64) + scales[1] * b) / scales[2], -32768, 32767)
    assert np.max(np.abs(exact - got)) <= 1.0


@pytest.mark.parametrize("scales", [(0.9, 7e-7, 0.45), (7e-7, 0.9, 1.8), (1e-3, 2e-3, 1e-6),
                                    (1e-3, 2e-3, 50.0), (1e-3, 1e-3, 2e-3)])
def test_tiny_and_large_scale_ratios(scales):
    rng = np.random.default_rng(7)
    a, b = int16s(rng, (9, 13)), int16s(rng, (13,))
    got, want = run_add(a, b, scales)
    assert np.array_equal(got, want)
    exact = np.clip((scales[0] * a.astype(np.float64) + scales[1] * b) / scales[2], -32768, 32767)
    assert np.max(np.abs(exact - got)) <= 1.0


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
        so = max(sa, sb) * float(rng.uniform(0.1, 10.0))
        lo = int(rng.integers(-32768, 30000))
        got, want = run_add(a, b, (sa, sb, so), (lo, int(rng.integers(lo, 32768))))
        assert np.array_equal(got, want)


@pytest.mark.parametrize("mult_a,shift_a,mult_out,shift_out", [
    (2**31 - 1, 30, 1 << 30, 0), (1 << 30, 0, 2**31 - 1, 30), (2**31 - 1, -31, 2**31 - 1, -31),
    (2**31 - 1, 0, 1, 30), (0, 0, 2**31 - 1, 1)])
def test_extreme_requantization(mult_a, shift_a, mult_out, shift_out):
    rng = np.random.default_rng(shift_a + 40)
    a, b = int16s(rng, (9, 13)), int16s(rng, (13,))
    got = ops.quantized_add_s16(a, mult_a, shift_a, b, 1 << 30, -1, mult_out, shift_out)
    assert np.array_equal(got, add_s16(a, mult_a, shift_a, b, 1 << 30, -1, mult_out, shift_out))


def test_fused_activation_clamps():
    a = np.arange(-32768, 32768, 7, dtype=np.int16)
    got, want = run_add(a, a.copy(), (1e-3, 2e-3, 3e-3), (0, 20000))  # = a, clamped
    assert np.array_equal(got, want)
    assert got.min() == 0 and got.max() == 20000


def test_non_contiguous_input():
    rng = np.random.default_rng(1)
    a = int16s(rng, (6, 8))[:, ::2]
    b = int16s(rng, (6, 4))
    got, want = run_add(a, b, (0.1, 0.2, 0.3))
    assert np.array_equal(got, want)


BASE = dict(self_multiplier=1 << 30, self_shift=-1, other_multiplier=1 << 30, other_shift=-1,
            output_multiplier=1 << 30, output_shift=0)


@pytest.mark.parametrize("override,match", [
    (dict(self_shift=31), "self_shift = 31"),
    (dict(other_shift=-32), "other_shift = -32"),
    (dict(other_multiplier=-1), "other_multiplier = -1"),
    (dict(output_multiplier=1 << 31), "output_multiplier = 2147483648"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5"),
    (dict(activation_min=-32769), "activation_min = -32769"),
    (dict(activation_max=32768), "activation_max = 32768"),
])
def test_bad_params_raise_value_error(override, match):
    a = np.zeros((4,), np.int16)
    with pytest.raises(ValueError, match=match):
        ops.quantized_add_s16(a, other=a, **{**BASE, **override})


def test_bad_arrays_raise_value_error():
    a = np.zeros((4,), np.int16)
    with pytest.raises(ValueError, match="self dtype int8 must be int16"):
        ops.quantized_add_s16(a.astype(np.int8), other=a, **BASE)
    with pytest.raises(ValueError, match="other dtype float32 must be int16"):
        ops.quantized_add_s16(a, other=a.astype(np.float32), **BASE)
    with pytest.raises(ValueError, match="broadcast"):
        ops.quantized_add_s16(a, other=np.zeros((3,), np.int16), **BASE)
    with pytest.raises(ValueError, match="must not be empty"):
        ops.quantized_add_s16(np.zeros((0,), np.int16), other=a[:1], **BASE)
