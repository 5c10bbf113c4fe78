"""cortexm.ops.quantized_linear_s16 (arm_fully_connected_s16) against the numpy reference and float
math."""

import re

import numpy as np
import pytest

import cortexm
from numpy_reference.common import quantize_multiplier
from numpy_reference.linear import linear_s16

ops = cortexm.ops


def qparams(count, k, rng, target_std=4000.0):
    """Scales giving int16 outputs of about target_std LSB from int16 inputs of std ~2^14 and int8
    weights of std ~74; one (per-tensor) or one per channel."""
    scales = target_std / (16384.0 * 74.0 * np.sqrt(k)) * rng.uniform(0.5, 2.0, count)
    mults, shifts = zip(*(quantize_multiplier(s) for s in scales))
    return scales, list(mults), list(shifts)


# (leading dims, K, C_out, per-channel, bias, activation range)
CASES = [
    ((1,), 128, 512, True, True, (-32768, 32767)),  # silero's LSTM projections
    ((3,), 37, 13, True, True, (-32768, 32767)),
    ((2, 3), 129, 3, False, True, (-32768, 32767)),
    ((), 512, 127, True, False, (-32768, 32767)),
    ((4,), 1, 1, False, False, (-32768, 32767)),
    ((2, 1, 3), 5, 9, True, True, (0, 32767)),  # a fused relu
    ((5,), 64, 7, False, True, (-1000, 20000)),
]


@pytest.mark.parametrize("lead,k,c_out,per_channel,with_bias,act", CASES)
def test_bit_exact_with_numpy_and_close_to_float(lead, k, c_out, per_channel, with_bias, act):
    rng = np.random.default_rng(k * 1000 + c_out)
    x = rng.integers(-32768, 32768, size=lead + (k,), dtype=np.int16)
    w = rng.integers(-128, 128, size=(c_out, k), dtype=np.int8)
    bias = rng.integers(-(1 << 24), 1 << 24, size=c_out).astype(np.int64) if with_bias else None
    scales, mults, shifts = qparams(c_out if per_channel else 1, k, rng)
    got = ops.quantized_linear_s16(x, w, bias, mults, shifts, *act)
    want = linear_s16(x, w, bias, mults, shifts, *act)
    assert got.shape == lead + (c_out,)
    assert got.dtype == np.int16
    assert np.array_equal(got, want)

    # The reduced multiplier keeps 15 bits: within 1 LSB of the float product for int16 outputs.
    acc = x.astype(np.int64) @ w.astype(np.int64).T + (0 if bias is None else bias)
    exact = np.clip(acc * scales, *act)
    assert np.max(np.abs(exact - got)) <= 1.0 + np.max(np.abs(exact)) * 2.0 ** -14
    assert np.mean((got > act[0]) & (got < act[1])) > 0.25  # the check is not vacuous


def extreme_qparams(rng, count):
    """Shift 7 and -31, multipliers 2^31 - 1 (reduced 2^15 - 1), near 0x7FFF0000, tiny and 0."""
    mults, shifts = [], []
    for i in range(count):
        kind = i % 5
        mult = [int(rng.integers(1 << 30, 1 << 31)), int(rng.integers(1 << 30, 1 << 31)),
                (1 << 31) - 1, 0x7FFF0000 - int(rng.integers(0, 2)), int(rng.integers(0, 1 << 16))][kind]
        shift = [7, -31, int(rng.integers(-31, 8)), int(rng.integers(-20, 1)),
                 int(rng.integers(-31, 8))][kind]
        mults.append(mult)
        shifts.append(shift)
    return mults, shifts


def test_randomized_awkward_cases_with_extreme_values():
    rng = np.random.default_rng(11)
    for i in range(150):
        lead = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(0, 3)))
        k = int(rng.choice([1, 3, 4, 5, 129, 256, 257, 512, 700]))
        c_out = int(rng.choice([1, 2, 3, 7, 127]))
        if i % 5 == 0:  # only the extremes of both ranges
            x = np.where(rng.integers(0, 2, size=lead + (k,)), 32767, -32768).astype(np.int16)
            w = np.where(rng.integers(0, 2, size=(c_out, k)), 127, -128).astype(np.int8)
        else:
            x = rng.integers(-32768, 32768, size=lead + (k,), dtype=np.int16)
            w = rng.integers(-128, 128, size=(c_out, k), dtype=np.int8)
        bias = None if i % 3 == 0 else rng.integers(-(1 << 40), 1 << 40, size=c_out)
        count = 1 if i % 4 == 1 else c_out
        if i % 2:
            mults, shifts = extreme_qparams(rng, count)
        else:
            mults, shifts = qparams(count, k, rng)[1:]
        lo = int(rng.integers(-32768, 1000))
        act = (lo, int(rng.integers(lo, 32768)))
        got = ops.quantized_linear_s16(x, w, bias, mults, shifts, *act)
        want = linear_s16(x, w, bias, mults, shifts, *act)
        assert np.array_equal(got, want), (i, x.shape, w.shape, count)


def test_largest_products_are_exact_past_int32():
    # 512 products of (-2^15) * (-2^7) = 2^31: exact in the 64-bit sum.
    x = np.full((1, 512), -32768, np.int16)
    w = np.full((2, 512), -128, np.int8)
    got = ops.quantized_linear_s16(x, w, np.array([0, -(1 << 31)]), [1 << 30], [-17])
    assert got.tolist() == [[8192, 0]]
    assert np.array_equal(got, linear_s16(x, w, np.array([0, -(1 << 31)]), [1 << 30], [-17]))


def test_keywords_defaults_and_non_contiguous_input():
    rng = np.random.default_rng(5)
    x = rng.integers(-32768, 32768, size=(5, 40), dtype=np.int16)[:, ::2]
    w = rng.integers(-128, 128, size=(20, 7), dtype=np.int8).T
    got = ops.quantized_linear_s16(input=x, weights=w, bias=None,
                                   requantize_multipliers=[1 << 30] * 7,
                                   requantize_shifts=[-9, -10, -8, -9, -9, -9, -11])
    want = linear_s16(np.ascontiguousarray(x), np.ascontiguousarray(w), None, [1 << 30] * 7,
                      [-9, -10, -8, -9, -9, -9, -11])
    assert np.array_equal(got, want)


BASE = dict(bias=np.zeros(3, np.int64), requantize_multipliers=[1 << 30], requantize_shifts=[0],
            activation_min=-32768, activation_max=32767)
X, W = np.zeros((2, 4), np.int16), np.zeros((3, 4), np.int8)


@pytest.mark.parametrize("override,match", [
    (dict(requantize_shifts=[8]), "requantize_shifts[0] = 8 must be in [-31, 7]"),
    (dict(requantize_shifts=[-32]), "requantize_shifts[0] = -32 must be in [-31, 7]"),
    (dict(requantize_multipliers=[1, -1, 1], requantize_shifts=[0, 0, 0]),
     "requantize_multipliers[1] = -1"),
    (dict(requantize_multipliers=[2**31]), "requantize_multipliers value 2147483648"),
    (dict(requantize_multipliers=[1, 1], requantize_shifts=[0, 0]),
     "requantize_multipliers has 2 elements, must have 1 or C_out = 3"),
    (dict(requantize_shifts=[0, 0]), "requantize_shifts has 2 elements, must have 1"),
    (dict(activation_min=5, activation_max=4), "activation_min = 5 must be <= activation_max"),
    (dict(activation_min=-32769), "activation_min = -32769"),
    (dict(activation_max=32768), "activation_max = 32768"),
    (dict(bias=np.zeros(4, np.int64)), "bias shape (4,) must be (3,)"),
    (dict(bias=np.zeros(3, np.int32)), "bias dtype int32 must be int64"),
    (dict(bias=np.zeros((3, 1), np.int64)), "bias rank 2"),
])
def test_bad_params_raise_value_error(override, match):
    with pytest.raises(ValueError, match=re.escape(match)):
        ops.quantized_linear_s16(X, W, **{**BASE, **override})


def test_bad_arrays_raise_value_error():
    with pytest.raises(ValueError, match="input dtype int8 must be int16"):
        ops.quantized_linear_s16(X.astype(np.int8), W, **BASE)
    with pytest.raises(ValueError, match="weights dtype int16 must be int8"):
        ops.quantized_linear_s16(X, W.astype(np.int16), **BASE)
    with pytest.raises(ValueError, match=re.escape("weights shape (3, 5) must be (C_out, 4)")):
        ops.quantized_linear_s16(X, np.zeros((3, 5), np.int8), **BASE)
    with pytest.raises(ValueError, match="input rank 0"):
        ops.quantized_linear_s16(np.zeros((), np.int16), W, **BASE)
    with pytest.raises(ValueError, match="must not be empty"):
        ops.quantized_linear_s16(np.zeros((0, 4), np.int16), W, **BASE)
